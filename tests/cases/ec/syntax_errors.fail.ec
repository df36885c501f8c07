% Several syntax errors, each reported; parsing resumes at the next clause.
initiatedAt(on(X)=true, T) :- happensAt(press(X) T).
initiatedAt(on(X)=false, T) :- happensAt(release(X), T) ; happensAt(cut(X), T).
holdsFor(g(X)=true, I) :- holdsFor(on(X)=true, I1), \+ I1=[], !, union_all([I1], I).
terminatedAt(on(X)=true, T) :- happensAt(cut(X), T)
initiatedAt(on(X)=true, T) :- happensAt(press(X), T).
