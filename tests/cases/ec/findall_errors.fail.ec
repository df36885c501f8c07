% A findall whose list nothing measures, and one with `_` as its template.
initiatedAt(busy(R)=true, T) :- happensAt(enter(_P, R), T), findall(Q, holdsAt(in(Q, R)=true, T), L).
initiatedAt(full(R)=true, T) :- happensAt(enter(_P, R), T), findall(_, holdsAt(in(_Q, R)=true, T), L), length(L, N), N > 3.
initiatedAt(in(P, R)=true, T) :- happensAt(enter(P, R), T).
