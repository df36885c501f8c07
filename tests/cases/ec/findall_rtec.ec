% findall/length as a count: people enter and leave rooms; when someone starts being in
% a room where two or more are then, the room's alarm goes on, for 3 time points; a room
% someone leaves while at most one is in it is quiet from then on (none counts as 0).
initiatedAt(in(P, R)=true, T) :- happensAt(enter(P, R), T).
initiatedAt(in(P, R)=false, T) :- happensAt(leave(P, R), T).
happensAt(crowding(R), T) :-
    happensAt(start(in(_P, R)=true), T),
    findall(Q, holdsAt(in(Q, R)=true, T), L), length(L, N), N >= 2.
initiatedAt(alarm(R)=true, T) :- happensAt(crowding(R), T).
fi(alarm(R)=true, alarm(R)=false, 3).
initiatedAt(quiet(R)=true, T) :-
    happensAt(leave(_P, R), T),
    findall(Q, holdsAt(in(Q, R)=true, T), L), length(L, N), N =< 1.
