% fi with p: an intermediate initiation postpones the deadline. Lamps:
%   a  lit at 1                      -> off initiated at 4
%   b  lit at 1 and again at 3       -> postponed: off initiated at 6
%   c  lit at 1, blown at 2          -> cancelled
%   d  lit at 1, at 3 and at 5       -> postponed twice: off initiated at 8
%   e  lit at 1 and at 4 (at the deadline point) -> off and lit both initiated at 4,
%      and again off at 7
initiatedAt(lamp(L)=lit, T) :- happensAt(press(L), T).
terminatedAt(lamp(L)=lit, T) :- happensAt(blow(L), T).
fi(lamp(L)=lit, lamp(L)=off, 3).
p(lamp(_)=lit).
