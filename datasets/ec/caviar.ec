% CAVIAR activity recognition (public space surveillance), after RTEC's published event
% description (aartikis/RTEC, examples/caviar: rules.prolog and pre-processing.prolog),
% rewritten in stgflow's ECDE syntax. Run it over RTEC's two CAVIAR files with the clock
% tick of the data (a video frame every 40 ms):
%
%   stgflow run datasets/ec/caviar.ec appearance.csv movementB.csv --tick 40 --mode intervals
%
% Differences in form from the published description (not in meaning):
% * `distance` comes from RTEC's Prolog pre-processing; here it is a holdsAt rule over the
%   `coord` points (squared distances, so no square root: D =< 24 iff D*D =< 576).
%   As there, it is computed for ordered pairs of ids only (Id1 @< Id2), and each pair
%   gets the smallest threshold its distance is within.
% * RTEC's optional optimisation checks (`\+ I=[], !` and the `holdsFor(…, [])` fallbacks)
%   are dropped: they do not change the intervals.
% * `start(close_34(P1,P2)=false)` is written `end(close_34(P1,P2)=true)`: close_34=false
%   is RTEC's complement of close_34=true, so it starts exactly where close_34=true ends
%   (TD cannot enumerate the pairs that are *not* close, so the complement is not a fluent).
% * Terminations of meeting whose head names a person the body does not mention
%   (`initiatedAt(meeting(P1,_P2)=false, T) :- …`) name the meeting they end
%   (`holdsAt(meeting(P1,P2)=true, T)`): RTEC grounds `_P2` over every id, TD has no
%   domain to ground over. The `=true` intervals are the same; `=false` intervals start
%   only for pairs that were meeting.
% * RTEC computes leaving_object(P,O) and meeting(P1,P2) for P @< O and P1 @< P2 only (its
%   grounding declarations); so do the `@<` conditions below. (With close_25 computed for
%   ordered pairs only, greeting2(P1,P2) with P1 @< P2 never holds — in RTEC as here.)

% ---- input entities --------------------------------------------------------------------
event(appear(_)).       inputEntity(appear(_)).
event(disappear(_)).    inputEntity(disappear(_)).
inputEntity(walking(_)=true).        points(walking(_)=true).
inputEntity(active(_)=true).         points(active(_)=true).
inputEntity(inactive(_)=true).       points(inactive(_)=true).
inputEntity(running(_)=true).        points(running(_)=true).
inputEntity(abrupt(_)=true).         points(abrupt(_)=true).
inputEntity(coord(_, _, _)=true).    points(coord(_, _, _)=true).

% ---- distance (RTEC's pre-processing) and close ----------------------------------------
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

holdsFor(close_24(Id1, Id2)=true, I) :-
    holdsFor(distance(Id1, Id2, 24)=true, I1),
    union_all([I1], I).
holdsFor(close_25(Id1, Id2)=true, I) :-
    holdsFor(close_24(Id1, Id2)=true, I1),
    holdsFor(distance(Id1, Id2, 25)=true, I2),
    union_all([I1, I2], I).
holdsFor(close_30(Id1, Id2)=true, I) :-
    holdsFor(close_25(Id1, Id2)=true, I1),
    holdsFor(distance(Id1, Id2, 30)=true, I2),
    union_all([I1, I2], I).
holdsFor(close_34(Id1, Id2)=true, I) :-
    holdsFor(close_30(Id1, Id2)=true, I1),
    holdsFor(distance(Id1, Id2, 34)=true, I2),
    union_all([I1, I2], I).
holdsFor(closeSymmetric_30(Id1, Id2)=true, I) :-
    holdsFor(close_30(Id1, Id2)=true, I1),
    holdsFor(close_30(Id2, Id1)=true, I2),
    union_all([I1, I2], I).

% ---- person ----------------------------------------------------------------------------
initiatedAt(person(Id)=true, T) :-
    happensAt(start(walking(Id)=true), T), \+ happensAt(disappear(Id), T).
initiatedAt(person(Id)=true, T) :-
    happensAt(start(running(Id)=true), T), \+ happensAt(disappear(Id), T).
initiatedAt(person(Id)=true, T) :-
    happensAt(start(active(Id)=true), T), \+ happensAt(disappear(Id), T).
initiatedAt(person(Id)=true, T) :-
    happensAt(start(abrupt(Id)=true), T), \+ happensAt(disappear(Id), T).
initiatedAt(person(Id)=false, T) :-
    happensAt(disappear(Id), T).

% ---- leaving object --------------------------------------------------------------------
initiatedAt(leaving_object(Person, Object)=true, T) :-
    happensAt(appear(Object), T),
    holdsAt(inactive(Object)=true, T),
    holdsAt(person(Person)=true, T),
    holdsAt(closeSymmetric_30(Person, Object)=true, T),
    Person @< Object.
initiatedAt(leaving_object(Person, Object)=false, T) :-
    happensAt(disappear(Object), T),
    holdsAt(leaving_object(Person, Object)=true, T).

% ---- meeting ---------------------------------------------------------------------------
holdsFor(activeOrInactivePerson(P)=true, I) :-
    holdsFor(active(P)=true, IA),
    holdsFor(inactive(P)=true, In),
    holdsFor(person(P)=true, IP),
    intersect_all([In, IP], InP),
    union_all([IA, InP], I).

holdsFor(greeting1(P1, P2)=true, I) :-
    holdsFor(activeOrInactivePerson(P1)=true, IAI),
    holdsFor(person(P2)=true, IP2),
    holdsFor(close_25(P1, P2)=true, IC),
    intersect_all([IAI, IC, IP2], ITemp),
    holdsFor(running(P2)=true, IR2),
    holdsFor(abrupt(P2)=true, IA2),
    relative_complement_all(ITemp, [IR2, IA2], I).

holdsFor(greeting2(P1, P2)=true, I) :-
    holdsFor(walking(P1)=true, IW1),
    holdsFor(activeOrInactivePerson(P2)=true, IAI2),
    holdsFor(close_25(P2, P1)=true, IC),
    intersect_all([IW1, IAI2, IC], I).

initiatedAt(meeting(P1, P2)=true, T) :-
    happensAt(start(greeting1(P1, P2)=true), T),
    \+ happensAt(disappear(P1), T),
    \+ happensAt(disappear(P2), T),
    P1 @< P2.
initiatedAt(meeting(P1, P2)=true, T) :-
    happensAt(start(greeting2(P1, P2)=true), T),
    \+ happensAt(disappear(P1), T),
    \+ happensAt(disappear(P2), T),
    P1 @< P2.

% run, move abruptly, move away from each other, disappear
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(start(running(P1)=true), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(start(running(P2)=true), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(start(abrupt(P1)=true), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(start(abrupt(P2)=true), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(end(close_34(P1, P2)=true), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(disappear(P1), T), holdsAt(meeting(P1, P2)=true, T).
initiatedAt(meeting(P1, P2)=false, T) :-
    happensAt(disappear(P2), T), holdsAt(meeting(P1, P2)=true, T).

% ---- moving ----------------------------------------------------------------------------
holdsFor(moving(P1, P2)=true, MI) :-
    holdsFor(walking(P1)=true, WP1),
    holdsFor(walking(P2)=true, WP2),
    intersect_all([WP1, WP2], WI),
    holdsFor(close_34(P1, P2)=true, CI),
    intersect_all([WI, CI], MI).

% ---- fighting --------------------------------------------------------------------------
holdsFor(fighting(P1, P2)=true, FightingI) :-
    holdsFor(abrupt(P1)=true, AbruptP1I),
    holdsFor(abrupt(P2)=true, AbruptP2I),
    union_all([AbruptP1I, AbruptP2I], AbruptI),
    holdsFor(close_34(P1, P2)=true, CloseI),
    intersect_all([AbruptI, CloseI], AbruptCloseI),
    holdsFor(inactive(P1)=true, InactiveP1I),
    holdsFor(inactive(P2)=true, InactiveP2I),
    union_all([InactiveP1I, InactiveP2I], InactiveI),
    relative_complement_all(AbruptCloseI, [InactiveI], FightingI).

% ---- output ----------------------------------------------------------------------------
outputEntity(person(_)=true).
outputEntity(leaving_object(_, _)=true).
outputEntity(meeting(_, _)=true).
outputEntity(moving(_, _)=true).
outputEntity(fighting(_, _)=true).
