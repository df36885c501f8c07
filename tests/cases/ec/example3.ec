% Example 3 of the paper: device safety.
initiatedAt(safety(X)=verified, T) :- happensAt(repair(X), T).
initiatedAt(safety(X)=unverified, T) :- happensAt(warning(X), T).
holdsAt(integrity_threat_of(X, Y)=true, T) :-
    holdsAt(safety(X)=trusted, T),
    holdsAt(safety(Y)=unverified, T),
    holdsAt(connected(X, Y)=true, T).
fi(safety(X)=verified, safety(X)=trusted, 3).
