initiatedAt(f(X)=true, T) :- happensAt(e(X), T)
terminatedAt(f(X)=true, T) :- happensAt(g(X), T).
