initiatedat(on(X)=true, T) :- happensAt(press(X), T).
initiatedAt(on(X)=true, T) :- happenAt(press(X), T).
holdsAt(busy(X)=true, T) :- holdsFor(on(X)=true, I).
initiatedAt(on(X), T) :- happensAt(press(X), T).
fi(on(X)=true, on(X)=false, 0).
holdsFor(still(P)=true, I) :-
    holdsFor(walking(P)=true, W),
    unoin_all([W], I).
holdsFor(moving(P)=true, I) :- holdsFor(walking(P)=true, W), \+ W=[], union_all([W], I).
