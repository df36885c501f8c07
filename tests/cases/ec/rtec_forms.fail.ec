% RTEC's cut and list checks where they are not its optimisation checks, and a start
% event as the head of a rule: each reported.
initiatedAt(on(X)=true, T) :- happensAt(press(X), T), !.
holdsFor(a(X)=true, I) :- holdsFor(on(X)=true, I1), !, union_all([I1], I).
holdsFor(b(X)=true, I) :-
    holdsFor(on(X)=true, I1), holdsFor(off(X)=true, I2),
    \+ I1=[], !,
    union_all([I1, I2], I).
happensAt(start(on(X)=true), T) :- happensAt(press(X), T).
