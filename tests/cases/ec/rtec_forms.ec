% RTEC's forms that its own event descriptions use (the RTEC drop-in issue):
% * `initiates(E, F=V, T)` and `terminates(E, F=V, T)`, its backward-compatible forms,
%   as facts and as rules: `initiatedAt(F=V, T) :- happensAt(E, T), …`;
% * derived events: `happensAt(E, T) :- …` rules, read by other rules like input events;
% * the optimisation checks of holdsFor rules (`\+ I=[], !` with the `[]` fallback), left
%   out where an empty list makes the result empty anyway.
initiates(win(X), rich(X)=true, _T).
terminates(lose(X), rich(X)=true, T) :- \+ happensAt(win(X), T).

happensAt(broke(X), T) :- happensAt(end(rich(X)=true), T).
happensAt(lucky(X), T) :- happensAt(win(X), T), holdsAt(rich(X)=true, T).
initiatedAt(sad(X)=true, T) :- happensAt(broke(X), T).
terminatedAt(sad(X)=true, T) :- happensAt(lucky(X), T).

holdsFor(content(X)=true, I) :-
    holdsFor(rich(X)=true, RI),
    \+ RI=[], !,
    holdsFor(sad(X)=true, SI),
    relative_complement_all(RI, [SI], I).
holdsFor(content(_X)=true, []).
