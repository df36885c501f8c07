% A list of intervals used before any condition defines it.
holdsFor(moving(P)=true, I) :-
    holdsFor(walking(P)=true, W),
    intersect_all([W, R], I).
holdsFor(still(P)=true, I) :-
    holdsFor(walking(P)=true, W),
    relative_complement_all(W, [W], J),
    union_all([J], K).
