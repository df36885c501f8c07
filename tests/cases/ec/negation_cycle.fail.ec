% Statically determined fluents that negate each other at the same time point.
holdsAt(left(X)=true, T) :- holdsAt(here(X)=true, T), not holdsAt(right(X)=true, T).
holdsAt(right(X)=true, T) :- holdsAt(here(X)=true, T), not holdsAt(left(X)=true, T).
