% RTEC's meeting termination: the head names a person the body does not bind.
initiatedAt(meeting(P1, P2)=true, T) :- happensAt(greet(P1, P2), T).
initiatedAt(meeting(P1, _P2)=false, T) :- happensAt(run(P1), T).
terminatedAt(meeting(_, P2)=true, T) :- happensAt(leave(P2), T).
outputEntity(meeting(_, _)=true).
