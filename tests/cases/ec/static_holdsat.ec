% Statically determined fluents by holdsAt rules (schema 17): a DNF over fluent values.
initiatedAt(door(D)=open, T) :- happensAt(open(D), T).
initiatedAt(door(D)=closed, T) :- happensAt(close(D), T).
initiatedAt(alarm(D)=armed, T) :- happensAt(arm(D), T).
initiatedAt(alarm(D)=off, T) :- happensAt(disarm(D), T).
holdsAt(breach(D)=true, T) :- holdsAt(door(D)=open, T), holdsAt(alarm(D)=armed, T).
holdsAt(breach(D)=true, T) :- holdsAt(forced(D)=true, T).
holdsAt(quiet(D)=true, T) :- holdsAt(door(D)=closed, T), not holdsAt(breach(D)=true, T).
% forced is an input fluent given at time points.
