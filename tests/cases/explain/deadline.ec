% fi without p: a lamp that is lit goes off 3 time points after it was lit, unless it is
% blown (terminated) in between. Lamps:
%   a  lit at 1, nothing else            -> off initiated at 4
%   b  lit at 1, blown at 3 (in between) -> the deadline is cancelled
%   c  lit at 1, blown at 4 (at the deadline point) -> off initiated at 4 all the same
%   d  lit at 1 and again at 3 (no p)    -> the first deadline fires at 4
%   e  lit at 1 and again at 4 (at the deadline point) -> lit and off both initiated at 4:
%      both hold from 5 (rule 14 does not look at rule 16), and the second deadline
%      initiates off again at 7
initiatedAt(lamp(L)=lit, T) :- happensAt(press(L), T).
terminatedAt(lamp(L)=lit, T) :- happensAt(blow(L), T).
fi(lamp(L)=lit, lamp(L)=off, 3).
