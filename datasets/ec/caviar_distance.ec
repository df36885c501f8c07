% RTEC's CAVIAR pre-processing (aartikis/RTEC, examples/caviar pre-processing.prolog) in
% ECDE: the `distance(Id1, Id2, Threshold)=true` fluent that CAVIAR's rules read. RTEC
% computes it with Prolog code run before each query (findall, assertz over `coord`);
% stgflow cannot run Prolog, so give this file in its place, after RTEC's own files:
%
%   stgflow run rules.prolog list-of-ids.prolog datasets/ec/caviar_distance.ec \
%       appearance.csv movementB.csv --tick 40 --mode rtec
%
% As there: for the ordered pairs of ids (Id1 @< Id2), at every time point at which both
% have coordinates, the smallest of the thresholds 24, 25, 30 and 34 that their Euclidean
% distance is within (squared here, so no square root: D =< 24 iff D*D =< 576).
holdsAt(distance(Id1, Id2, 24)=true, T) :-
    holdsAt(coord(Id1, X1, Y1)=true, T), holdsAt(coord(Id2, X2, Y2)=true, T),
    Id1 @< Id2, D is (X1-X2)*(X1-X2) + (Y1-Y2)*(Y1-Y2), D =< 576.
holdsAt(distance(Id1, Id2, 25)=true, T) :-
    holdsAt(coord(Id1, X1, Y1)=true, T), holdsAt(coord(Id2, X2, Y2)=true, T),
    Id1 @< Id2, D is (X1-X2)*(X1-X2) + (Y1-Y2)*(Y1-Y2), D > 576, D =< 625.
holdsAt(distance(Id1, Id2, 30)=true, T) :-
    holdsAt(coord(Id1, X1, Y1)=true, T), holdsAt(coord(Id2, X2, Y2)=true, T),
    Id1 @< Id2, D is (X1-X2)*(X1-X2) + (Y1-Y2)*(Y1-Y2), D > 625, D =< 900.
holdsAt(distance(Id1, Id2, 34)=true, T) :-
    holdsAt(coord(Id1, X1, Y1)=true, T), holdsAt(coord(Id2, X2, Y2)=true, T),
    Id1 @< Id2, D is (X1-X2)*(X1-X2) + (Y1-Y2)*(Y1-Y2), D > 900, D =< 1156.
