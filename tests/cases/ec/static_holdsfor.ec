% RTEC's holdsFor form: interval operations compiled to holdsAt rules.
inputEntity(walking(_)=true).
points(walking(_)=true).
inputEntity(near(_, _)=true).
collectIntervals(near(_, _)=true).
inputEntity(abrupt(_)=true).
points(abrupt(_)=true).

% moving: both walking and near (intersect_all).
holdsFor(moving(P1, P2)=true, I) :-
    holdsFor(walking(P1)=true, W1),
    holdsFor(walking(P2)=true, W2),
    holdsFor(near(P1, P2)=true, N),
    intersect_all([W1, W2, N], I).

% busy: walking or abrupt (union_all).
holdsFor(busy(P)=true, I) :-
    holdsFor(walking(P)=true, W),
    holdsFor(abrupt(P)=true, A),
    union_all([W, A], I).

% calm: near but neither walking nor abrupt (relative_complement_all).
holdsFor(calm(P1, P2)=true, I) :-
    holdsFor(near(P1, P2)=true, N),
    holdsFor(walking(P1)=true, W),
    holdsFor(abrupt(P1)=true, A),
    relative_complement_all(N, [W, A], I).

outputEntity(moving(_, _)=true).
outputEntity(busy(_)=true).
outputEntity(calm(_, _)=true).
