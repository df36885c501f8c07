% RTEC's voting: `terminatedAt(outcome(M)=_O, T)` ends whatever value holds; the value
% no condition binds is bound by the value that holds (a named variable or `_`): RTEC's
% meaning exactly, so nothing is warned.
initiatedAt(outcome(M)=V, T) :- happensAt(declare(M, V), T).
terminatedAt(outcome(M)=_O, T) :- happensAt(reset(M), T).
initiatedAt(level(X)=high, T) :- happensAt(raise(X), T).
initiatedAt(level(X)=low, T) :- happensAt(lower(X), T).
terminatedAt(level(X)=_, T) :- happensAt(clear(X), T).
outputEntity(outcome(_)=carried).
outputEntity(level(_)=high).
