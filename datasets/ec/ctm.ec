% City transport management (CTM), after RTEC's published event description
% (aartikis/RTEC, examples/ctm/resources/patterns/rules.prolog, with the vehicles of
% examples/ctm/dataset/auxiliary/vehicles.prolog), rewritten in stgflow's ECDE syntax.
% Run it over RTEC's seven CTM files (one time point per time unit, no --tick):
%
%   stgflow run datasets/ec/ctm.ec abrupt_acceleration.csv abrupt_deceleration.csv \
%       internal_temperature_change.csv noise_level_change.csv \
%       passenger_density_change.csv sharp_turn.csv stop_enter_leave.csv --mode intervals
%
% Every fluent of the published description is here with the same definitions:
% punctuality, driving_style, driving_quality, passenger_comfort, driver_comfort,
% passenger_satisfaction, passenger_density, noise_level, internal_temperature.
% Changes of form (not of meaning on RTEC's data):
% * `initially(punctuality(_, _)=punctual)` and the other three `initially` facts range
%   over RTEC's grounding domain `vehicle(Id, Type)`; TD has no domain to range over, so
%   they are written out for the 100 vehicles of vehicles.prolog (ids 75-174, all buses).
% * RTEC's `initiates(E, F=V, T)` facts (its backward-compatible form) are written as
%   `initiatedAt(F=V, T) :- happensAt(E, T)`.
% * punctuality=non_punctual is RTEC's `complement_all([PI], NPI)` of punctuality=punctual
%   over the vehicles. A fluent cannot be both simple and statically determined here, and
%   TD cannot enumerate the vehicles for which punctual does *not* hold, so non_punctual is
%   the second value of the simple fluent: initiated exactly where punctual is terminated
%   (a late arrival, an early departure). With punctual initially holding for every vehicle
%   the two are complements at every time point, as in RTEC. (They would differ only if a
%   vehicle had an initiating and a terminating stop event at the same time point, which
%   RTEC's data never has.)
% * RTEC's optimisation check in driving_quality=medium (`\+ PunctualI=[], !` and the
%   `holdsFor(…, [])` fallback) is dropped: it does not change the intervals.
% Left out: the derived event `punctuality_change(Id, Type, Value)` (a `happensAt` rule,
% which the front end reads, but RTEC prints no events and no rule here reads it). It
% happens exactly where punctuality=punctual or =non_punctual ends, which `--mode changes`
% shows.

% ---- input entities --------------------------------------------------------------------
event(stop_enter(_, _, _, _)).                   inputEntity(stop_enter(_, _, _, _)).
event(stop_leave(_, _, _, _)).                   inputEntity(stop_leave(_, _, _, _)).
event(internal_temperature_change(_, _, _)).     inputEntity(internal_temperature_change(_, _, _)).
event(noise_level_change(_, _, _)).              inputEntity(noise_level_change(_, _, _)).
event(passenger_density_change(_, _, _)).        inputEntity(passenger_density_change(_, _, _)).
% These input statically determined fluents arrive as intervals in the input streams.
inputEntity(abrupt_acceleration(_, _)=abrupt).       collectIntervals(abrupt_acceleration(_, _)=abrupt).
inputEntity(abrupt_acceleration(_, _)=very_abrupt).  collectIntervals(abrupt_acceleration(_, _)=very_abrupt).
inputEntity(abrupt_deceleration(_, _)=abrupt).       collectIntervals(abrupt_deceleration(_, _)=abrupt).
inputEntity(abrupt_deceleration(_, _)=very_abrupt).  collectIntervals(abrupt_deceleration(_, _)=very_abrupt).
inputEntity(sharp_turn(_, _)=sharp).                 collectIntervals(sharp_turn(_, _)=sharp).
inputEntity(sharp_turn(_, _)=very_sharp).            collectIntervals(sharp_turn(_, _)=very_sharp).

% ---- punctuality -----------------------------------------------------------------------
initiatedAt(punctuality(Id, VehicleType)=punctual, T) :-
    happensAt(stop_enter(Id, VehicleType, _StopCode, scheduled), T).
initiatedAt(punctuality(Id, VehicleType)=punctual, T) :-
    happensAt(stop_enter(Id, VehicleType, _StopCode, early), T).
terminatedAt(punctuality(Id, VehicleType)=punctual, T) :-
    happensAt(stop_enter(Id, VehicleType, _StopCode, late), T).
terminatedAt(punctuality(Id, VehicleType)=punctual, T) :-
    happensAt(stop_leave(Id, VehicleType, _StopCode, early), T).
% RTEC: holdsFor(punctuality(Id, VehicleType)=non_punctual, NPI) :-
%           holdsFor(punctuality(Id, VehicleType)=punctual, PI), complement_all([PI], NPI).
initiatedAt(punctuality(Id, VehicleType)=non_punctual, T) :-
    happensAt(stop_enter(Id, VehicleType, _StopCode, late), T).
initiatedAt(punctuality(Id, VehicleType)=non_punctual, T) :-
    happensAt(stop_leave(Id, VehicleType, _StopCode, early), T).

% ---- driving style ---------------------------------------------------------------------
holdsFor(driving_style(Id, VehicleType)=unsafe, UDI) :-
    holdsFor(sharp_turn(Id, VehicleType)=very_sharp, VSTI),
    holdsFor(abrupt_acceleration(Id, VehicleType)=very_abrupt, VAAI),
    holdsFor(abrupt_deceleration(Id, VehicleType)=very_abrupt, VADI),
    union_all([VSTI, VAAI, VADI], UDI).

% uncomfortable (but safe): a sharp turn without a very abrupt acceleration or deceleration,
% or an abrupt acceleration or deceleration
holdsFor(driving_style(Id, VehicleType)=uncomfortable, UDI) :-
    holdsFor(sharp_turn(Id, VehicleType)=sharp, STI),
    holdsFor(abrupt_acceleration(Id, VehicleType)=very_abrupt, VAAI),
    holdsFor(abrupt_deceleration(Id, VehicleType)=very_abrupt, VADI),
    relative_complement_all(STI, [VAAI, VADI], PureSharpTurn),
    holdsFor(abrupt_acceleration(Id, VehicleType)=abrupt, AAI),
    holdsFor(abrupt_deceleration(Id, VehicleType)=abrupt, ADI),
    union_all([PureSharpTurn, AAI, ADI], UDI).

% ---- driving quality -------------------------------------------------------------------
holdsFor(driving_quality(Id, VehicleType)=high, HQDI) :-
    holdsFor(punctuality(Id, VehicleType)=punctual, PunctualI),
    holdsFor(driving_style(Id, VehicleType)=unsafe, USI),
    holdsFor(driving_style(Id, VehicleType)=uncomfortable, UCI),
    relative_complement_all(PunctualI, [USI, UCI], HQDI).

holdsFor(driving_quality(Id, VehicleType)=medium, MQDI) :-
    holdsFor(punctuality(Id, VehicleType)=punctual, PunctualI),
    holdsFor(driving_style(Id, VehicleType)=uncomfortable, UCI),
    intersect_all([PunctualI, UCI], MQDI).

holdsFor(driving_quality(Id, VehicleType)=low, LQDI) :-
    holdsFor(punctuality(Id, VehicleType)=non_punctual, NPI),
    holdsFor(driving_style(Id, VehicleType)=unsafe, USI),
    union_all([NPI, USI], LQDI).

% ---- passenger comfort -----------------------------------------------------------------
holdsFor(passenger_comfort(Id, VehicleType)=reducing, RPCI) :-
    holdsFor(driving_style(Id, VehicleType)=uncomfortable, UCI),
    holdsFor(driving_style(Id, VehicleType)=unsafe, USI),
    holdsFor(passenger_density(Id, VehicleType)=high, HPDI),
    holdsFor(noise_level(Id, VehicleType)=high, HNLI),
    holdsFor(internal_temperature(Id, VehicleType)=very_warm, VWITI),
    holdsFor(internal_temperature(Id, VehicleType)=very_cold, VCITI),
    union_all([UCI, USI, HPDI, HNLI, VWITI, VCITI], RPCI).

% RTEC: initiates(passenger_density_change(Id, VehicleType, Value),
%                 passenger_density(Id, VehicleType)=Value, _T), and likewise for
% noise_level and internal_temperature. RTEC computes only the fluent-value pairs its
% description names (here: the `initially` values and the values its holdsFor rules
% read), so a change to any other value in the data (internal_temperature warm or cold)
% initiates nothing and ends nothing; one rule per named value says the same.
initiatedAt(passenger_density(Id, VehicleType)=high, T) :-
    happensAt(passenger_density_change(Id, VehicleType, high), T).
initiatedAt(passenger_density(Id, VehicleType)=low, T) :-
    happensAt(passenger_density_change(Id, VehicleType, low), T).
initiatedAt(noise_level(Id, VehicleType)=high, T) :-
    happensAt(noise_level_change(Id, VehicleType, high), T).
initiatedAt(noise_level(Id, VehicleType)=low, T) :-
    happensAt(noise_level_change(Id, VehicleType, low), T).
initiatedAt(internal_temperature(Id, VehicleType)=very_warm, T) :-
    happensAt(internal_temperature_change(Id, VehicleType, very_warm), T).
initiatedAt(internal_temperature(Id, VehicleType)=very_cold, T) :-
    happensAt(internal_temperature_change(Id, VehicleType, very_cold), T).
initiatedAt(internal_temperature(Id, VehicleType)=normal, T) :-
    happensAt(internal_temperature_change(Id, VehicleType, normal), T).

% ---- driver comfort --------------------------------------------------------------------
holdsFor(driver_comfort(Id, VehicleType)=reducing, RPCI) :-
    holdsFor(driving_style(Id, VehicleType)=uncomfortable, UCI),
    holdsFor(driving_style(Id, VehicleType)=unsafe, USI),
    holdsFor(noise_level(Id, VehicleType)=high, HNLI),
    holdsFor(internal_temperature(Id, VehicleType)=very_warm, VWITI),
    holdsFor(internal_temperature(Id, VehicleType)=very_cold, VCITI),
    union_all([UCI, USI, HNLI, VWITI, VCITI], RPCI).

% ---- passenger satisfaction ------------------------------------------------------------
holdsFor(passenger_satisfaction(Id, VehicleType)=reducing, RPSI) :-
    holdsFor(punctuality(Id, VehicleType)=non_punctual, NPI),
    holdsFor(passenger_comfort(Id, VehicleType)=reducing, RPCI),
    union_all([NPI, RPCI], RPSI).

% ---- output ----------------------------------------------------------------------------
outputEntity(punctuality(_, _)=punctual).
outputEntity(punctuality(_, _)=non_punctual).
outputEntity(passenger_density(_, _)=high).
outputEntity(noise_level(_, _)=high).
outputEntity(internal_temperature(_, _)=very_warm).
outputEntity(internal_temperature(_, _)=very_cold).
outputEntity(driving_style(_, _)=unsafe).
outputEntity(driving_style(_, _)=uncomfortable).
outputEntity(driving_quality(_, _)=high).
outputEntity(driving_quality(_, _)=medium).
outputEntity(driving_quality(_, _)=low).
outputEntity(passenger_comfort(_, _)=reducing).
outputEntity(driver_comfort(_, _)=reducing).
outputEntity(passenger_satisfaction(_, _)=reducing).

% ---- initial values, for the vehicles of RTEC's vehicles.prolog ------------------------
initially(punctuality(75, bus)=punctual). initially(punctuality(76, bus)=punctual). initially(punctuality(77, bus)=punctual). initially(punctuality(78, bus)=punctual).
initially(punctuality(79, bus)=punctual). initially(punctuality(80, bus)=punctual). initially(punctuality(81, bus)=punctual). initially(punctuality(82, bus)=punctual).
initially(punctuality(83, bus)=punctual). initially(punctuality(84, bus)=punctual). initially(punctuality(85, bus)=punctual). initially(punctuality(86, bus)=punctual).
initially(punctuality(87, bus)=punctual). initially(punctuality(88, bus)=punctual). initially(punctuality(89, bus)=punctual). initially(punctuality(90, bus)=punctual).
initially(punctuality(91, bus)=punctual). initially(punctuality(92, bus)=punctual). initially(punctuality(93, bus)=punctual). initially(punctuality(94, bus)=punctual).
initially(punctuality(95, bus)=punctual). initially(punctuality(96, bus)=punctual). initially(punctuality(97, bus)=punctual). initially(punctuality(98, bus)=punctual).
initially(punctuality(99, bus)=punctual). initially(punctuality(100, bus)=punctual). initially(punctuality(101, bus)=punctual). initially(punctuality(102, bus)=punctual).
initially(punctuality(103, bus)=punctual). initially(punctuality(104, bus)=punctual). initially(punctuality(105, bus)=punctual). initially(punctuality(106, bus)=punctual).
initially(punctuality(107, bus)=punctual). initially(punctuality(108, bus)=punctual). initially(punctuality(109, bus)=punctual). initially(punctuality(110, bus)=punctual).
initially(punctuality(111, bus)=punctual). initially(punctuality(112, bus)=punctual). initially(punctuality(113, bus)=punctual). initially(punctuality(114, bus)=punctual).
initially(punctuality(115, bus)=punctual). initially(punctuality(116, bus)=punctual). initially(punctuality(117, bus)=punctual). initially(punctuality(118, bus)=punctual).
initially(punctuality(119, bus)=punctual). initially(punctuality(120, bus)=punctual). initially(punctuality(121, bus)=punctual). initially(punctuality(122, bus)=punctual).
initially(punctuality(123, bus)=punctual). initially(punctuality(124, bus)=punctual). initially(punctuality(125, bus)=punctual). initially(punctuality(126, bus)=punctual).
initially(punctuality(127, bus)=punctual). initially(punctuality(128, bus)=punctual). initially(punctuality(129, bus)=punctual). initially(punctuality(130, bus)=punctual).
initially(punctuality(131, bus)=punctual). initially(punctuality(132, bus)=punctual). initially(punctuality(133, bus)=punctual). initially(punctuality(134, bus)=punctual).
initially(punctuality(135, bus)=punctual). initially(punctuality(136, bus)=punctual). initially(punctuality(137, bus)=punctual). initially(punctuality(138, bus)=punctual).
initially(punctuality(139, bus)=punctual). initially(punctuality(140, bus)=punctual). initially(punctuality(141, bus)=punctual). initially(punctuality(142, bus)=punctual).
initially(punctuality(143, bus)=punctual). initially(punctuality(144, bus)=punctual). initially(punctuality(145, bus)=punctual). initially(punctuality(146, bus)=punctual).
initially(punctuality(147, bus)=punctual). initially(punctuality(148, bus)=punctual). initially(punctuality(149, bus)=punctual). initially(punctuality(150, bus)=punctual).
initially(punctuality(151, bus)=punctual). initially(punctuality(152, bus)=punctual). initially(punctuality(153, bus)=punctual). initially(punctuality(154, bus)=punctual).
initially(punctuality(155, bus)=punctual). initially(punctuality(156, bus)=punctual). initially(punctuality(157, bus)=punctual). initially(punctuality(158, bus)=punctual).
initially(punctuality(159, bus)=punctual). initially(punctuality(160, bus)=punctual). initially(punctuality(161, bus)=punctual). initially(punctuality(162, bus)=punctual).
initially(punctuality(163, bus)=punctual). initially(punctuality(164, bus)=punctual). initially(punctuality(165, bus)=punctual). initially(punctuality(166, bus)=punctual).
initially(punctuality(167, bus)=punctual). initially(punctuality(168, bus)=punctual). initially(punctuality(169, bus)=punctual). initially(punctuality(170, bus)=punctual).
initially(punctuality(171, bus)=punctual). initially(punctuality(172, bus)=punctual). initially(punctuality(173, bus)=punctual). initially(punctuality(174, bus)=punctual).
initially(passenger_density(75, bus)=low). initially(passenger_density(76, bus)=low). initially(passenger_density(77, bus)=low). initially(passenger_density(78, bus)=low).
initially(passenger_density(79, bus)=low). initially(passenger_density(80, bus)=low). initially(passenger_density(81, bus)=low). initially(passenger_density(82, bus)=low).
initially(passenger_density(83, bus)=low). initially(passenger_density(84, bus)=low). initially(passenger_density(85, bus)=low). initially(passenger_density(86, bus)=low).
initially(passenger_density(87, bus)=low). initially(passenger_density(88, bus)=low). initially(passenger_density(89, bus)=low). initially(passenger_density(90, bus)=low).
initially(passenger_density(91, bus)=low). initially(passenger_density(92, bus)=low). initially(passenger_density(93, bus)=low). initially(passenger_density(94, bus)=low).
initially(passenger_density(95, bus)=low). initially(passenger_density(96, bus)=low). initially(passenger_density(97, bus)=low). initially(passenger_density(98, bus)=low).
initially(passenger_density(99, bus)=low). initially(passenger_density(100, bus)=low). initially(passenger_density(101, bus)=low). initially(passenger_density(102, bus)=low).
initially(passenger_density(103, bus)=low). initially(passenger_density(104, bus)=low). initially(passenger_density(105, bus)=low). initially(passenger_density(106, bus)=low).
initially(passenger_density(107, bus)=low). initially(passenger_density(108, bus)=low). initially(passenger_density(109, bus)=low). initially(passenger_density(110, bus)=low).
initially(passenger_density(111, bus)=low). initially(passenger_density(112, bus)=low). initially(passenger_density(113, bus)=low). initially(passenger_density(114, bus)=low).
initially(passenger_density(115, bus)=low). initially(passenger_density(116, bus)=low). initially(passenger_density(117, bus)=low). initially(passenger_density(118, bus)=low).
initially(passenger_density(119, bus)=low). initially(passenger_density(120, bus)=low). initially(passenger_density(121, bus)=low). initially(passenger_density(122, bus)=low).
initially(passenger_density(123, bus)=low). initially(passenger_density(124, bus)=low). initially(passenger_density(125, bus)=low). initially(passenger_density(126, bus)=low).
initially(passenger_density(127, bus)=low). initially(passenger_density(128, bus)=low). initially(passenger_density(129, bus)=low). initially(passenger_density(130, bus)=low).
initially(passenger_density(131, bus)=low). initially(passenger_density(132, bus)=low). initially(passenger_density(133, bus)=low). initially(passenger_density(134, bus)=low).
initially(passenger_density(135, bus)=low). initially(passenger_density(136, bus)=low). initially(passenger_density(137, bus)=low). initially(passenger_density(138, bus)=low).
initially(passenger_density(139, bus)=low). initially(passenger_density(140, bus)=low). initially(passenger_density(141, bus)=low). initially(passenger_density(142, bus)=low).
initially(passenger_density(143, bus)=low). initially(passenger_density(144, bus)=low). initially(passenger_density(145, bus)=low). initially(passenger_density(146, bus)=low).
initially(passenger_density(147, bus)=low). initially(passenger_density(148, bus)=low). initially(passenger_density(149, bus)=low). initially(passenger_density(150, bus)=low).
initially(passenger_density(151, bus)=low). initially(passenger_density(152, bus)=low). initially(passenger_density(153, bus)=low). initially(passenger_density(154, bus)=low).
initially(passenger_density(155, bus)=low). initially(passenger_density(156, bus)=low). initially(passenger_density(157, bus)=low). initially(passenger_density(158, bus)=low).
initially(passenger_density(159, bus)=low). initially(passenger_density(160, bus)=low). initially(passenger_density(161, bus)=low). initially(passenger_density(162, bus)=low).
initially(passenger_density(163, bus)=low). initially(passenger_density(164, bus)=low). initially(passenger_density(165, bus)=low). initially(passenger_density(166, bus)=low).
initially(passenger_density(167, bus)=low). initially(passenger_density(168, bus)=low). initially(passenger_density(169, bus)=low). initially(passenger_density(170, bus)=low).
initially(passenger_density(171, bus)=low). initially(passenger_density(172, bus)=low). initially(passenger_density(173, bus)=low). initially(passenger_density(174, bus)=low).
initially(noise_level(75, bus)=low). initially(noise_level(76, bus)=low). initially(noise_level(77, bus)=low). initially(noise_level(78, bus)=low).
initially(noise_level(79, bus)=low). initially(noise_level(80, bus)=low). initially(noise_level(81, bus)=low). initially(noise_level(82, bus)=low).
initially(noise_level(83, bus)=low). initially(noise_level(84, bus)=low). initially(noise_level(85, bus)=low). initially(noise_level(86, bus)=low).
initially(noise_level(87, bus)=low). initially(noise_level(88, bus)=low). initially(noise_level(89, bus)=low). initially(noise_level(90, bus)=low).
initially(noise_level(91, bus)=low). initially(noise_level(92, bus)=low). initially(noise_level(93, bus)=low). initially(noise_level(94, bus)=low).
initially(noise_level(95, bus)=low). initially(noise_level(96, bus)=low). initially(noise_level(97, bus)=low). initially(noise_level(98, bus)=low).
initially(noise_level(99, bus)=low). initially(noise_level(100, bus)=low). initially(noise_level(101, bus)=low). initially(noise_level(102, bus)=low).
initially(noise_level(103, bus)=low). initially(noise_level(104, bus)=low). initially(noise_level(105, bus)=low). initially(noise_level(106, bus)=low).
initially(noise_level(107, bus)=low). initially(noise_level(108, bus)=low). initially(noise_level(109, bus)=low). initially(noise_level(110, bus)=low).
initially(noise_level(111, bus)=low). initially(noise_level(112, bus)=low). initially(noise_level(113, bus)=low). initially(noise_level(114, bus)=low).
initially(noise_level(115, bus)=low). initially(noise_level(116, bus)=low). initially(noise_level(117, bus)=low). initially(noise_level(118, bus)=low).
initially(noise_level(119, bus)=low). initially(noise_level(120, bus)=low). initially(noise_level(121, bus)=low). initially(noise_level(122, bus)=low).
initially(noise_level(123, bus)=low). initially(noise_level(124, bus)=low). initially(noise_level(125, bus)=low). initially(noise_level(126, bus)=low).
initially(noise_level(127, bus)=low). initially(noise_level(128, bus)=low). initially(noise_level(129, bus)=low). initially(noise_level(130, bus)=low).
initially(noise_level(131, bus)=low). initially(noise_level(132, bus)=low). initially(noise_level(133, bus)=low). initially(noise_level(134, bus)=low).
initially(noise_level(135, bus)=low). initially(noise_level(136, bus)=low). initially(noise_level(137, bus)=low). initially(noise_level(138, bus)=low).
initially(noise_level(139, bus)=low). initially(noise_level(140, bus)=low). initially(noise_level(141, bus)=low). initially(noise_level(142, bus)=low).
initially(noise_level(143, bus)=low). initially(noise_level(144, bus)=low). initially(noise_level(145, bus)=low). initially(noise_level(146, bus)=low).
initially(noise_level(147, bus)=low). initially(noise_level(148, bus)=low). initially(noise_level(149, bus)=low). initially(noise_level(150, bus)=low).
initially(noise_level(151, bus)=low). initially(noise_level(152, bus)=low). initially(noise_level(153, bus)=low). initially(noise_level(154, bus)=low).
initially(noise_level(155, bus)=low). initially(noise_level(156, bus)=low). initially(noise_level(157, bus)=low). initially(noise_level(158, bus)=low).
initially(noise_level(159, bus)=low). initially(noise_level(160, bus)=low). initially(noise_level(161, bus)=low). initially(noise_level(162, bus)=low).
initially(noise_level(163, bus)=low). initially(noise_level(164, bus)=low). initially(noise_level(165, bus)=low). initially(noise_level(166, bus)=low).
initially(noise_level(167, bus)=low). initially(noise_level(168, bus)=low). initially(noise_level(169, bus)=low). initially(noise_level(170, bus)=low).
initially(noise_level(171, bus)=low). initially(noise_level(172, bus)=low). initially(noise_level(173, bus)=low). initially(noise_level(174, bus)=low).
initially(internal_temperature(75, bus)=normal). initially(internal_temperature(76, bus)=normal). initially(internal_temperature(77, bus)=normal). initially(internal_temperature(78, bus)=normal).
initially(internal_temperature(79, bus)=normal). initially(internal_temperature(80, bus)=normal). initially(internal_temperature(81, bus)=normal). initially(internal_temperature(82, bus)=normal).
initially(internal_temperature(83, bus)=normal). initially(internal_temperature(84, bus)=normal). initially(internal_temperature(85, bus)=normal). initially(internal_temperature(86, bus)=normal).
initially(internal_temperature(87, bus)=normal). initially(internal_temperature(88, bus)=normal). initially(internal_temperature(89, bus)=normal). initially(internal_temperature(90, bus)=normal).
initially(internal_temperature(91, bus)=normal). initially(internal_temperature(92, bus)=normal). initially(internal_temperature(93, bus)=normal). initially(internal_temperature(94, bus)=normal).
initially(internal_temperature(95, bus)=normal). initially(internal_temperature(96, bus)=normal). initially(internal_temperature(97, bus)=normal). initially(internal_temperature(98, bus)=normal).
initially(internal_temperature(99, bus)=normal). initially(internal_temperature(100, bus)=normal). initially(internal_temperature(101, bus)=normal). initially(internal_temperature(102, bus)=normal).
initially(internal_temperature(103, bus)=normal). initially(internal_temperature(104, bus)=normal). initially(internal_temperature(105, bus)=normal). initially(internal_temperature(106, bus)=normal).
initially(internal_temperature(107, bus)=normal). initially(internal_temperature(108, bus)=normal). initially(internal_temperature(109, bus)=normal). initially(internal_temperature(110, bus)=normal).
initially(internal_temperature(111, bus)=normal). initially(internal_temperature(112, bus)=normal). initially(internal_temperature(113, bus)=normal). initially(internal_temperature(114, bus)=normal).
initially(internal_temperature(115, bus)=normal). initially(internal_temperature(116, bus)=normal). initially(internal_temperature(117, bus)=normal). initially(internal_temperature(118, bus)=normal).
initially(internal_temperature(119, bus)=normal). initially(internal_temperature(120, bus)=normal). initially(internal_temperature(121, bus)=normal). initially(internal_temperature(122, bus)=normal).
initially(internal_temperature(123, bus)=normal). initially(internal_temperature(124, bus)=normal). initially(internal_temperature(125, bus)=normal). initially(internal_temperature(126, bus)=normal).
initially(internal_temperature(127, bus)=normal). initially(internal_temperature(128, bus)=normal). initially(internal_temperature(129, bus)=normal). initially(internal_temperature(130, bus)=normal).
initially(internal_temperature(131, bus)=normal). initially(internal_temperature(132, bus)=normal). initially(internal_temperature(133, bus)=normal). initially(internal_temperature(134, bus)=normal).
initially(internal_temperature(135, bus)=normal). initially(internal_temperature(136, bus)=normal). initially(internal_temperature(137, bus)=normal). initially(internal_temperature(138, bus)=normal).
initially(internal_temperature(139, bus)=normal). initially(internal_temperature(140, bus)=normal). initially(internal_temperature(141, bus)=normal). initially(internal_temperature(142, bus)=normal).
initially(internal_temperature(143, bus)=normal). initially(internal_temperature(144, bus)=normal). initially(internal_temperature(145, bus)=normal). initially(internal_temperature(146, bus)=normal).
initially(internal_temperature(147, bus)=normal). initially(internal_temperature(148, bus)=normal). initially(internal_temperature(149, bus)=normal). initially(internal_temperature(150, bus)=normal).
initially(internal_temperature(151, bus)=normal). initially(internal_temperature(152, bus)=normal). initially(internal_temperature(153, bus)=normal). initially(internal_temperature(154, bus)=normal).
initially(internal_temperature(155, bus)=normal). initially(internal_temperature(156, bus)=normal). initially(internal_temperature(157, bus)=normal). initially(internal_temperature(158, bus)=normal).
initially(internal_temperature(159, bus)=normal). initially(internal_temperature(160, bus)=normal). initially(internal_temperature(161, bus)=normal). initially(internal_temperature(162, bus)=normal).
initially(internal_temperature(163, bus)=normal). initially(internal_temperature(164, bus)=normal). initially(internal_temperature(165, bus)=normal). initially(internal_temperature(166, bus)=normal).
initially(internal_temperature(167, bus)=normal). initially(internal_temperature(168, bus)=normal). initially(internal_temperature(169, bus)=normal). initially(internal_temperature(170, bus)=normal).
initially(internal_temperature(171, bus)=normal). initially(internal_temperature(172, bus)=normal). initially(internal_temperature(173, bus)=normal). initially(internal_temperature(174, bus)=normal).
