% Inertia (rules 14-15): a value holds from the time point after its initiation until
% the time point of its termination, inclusive.
initiatedAt(light(R)=on, T) :- happensAt(switch_on(R), T).
terminatedAt(light(R)=on, T) :- happensAt(switch_off(R), T).
% A termination of a value that does not hold changes nothing; an initiation of a value
% that holds already changes nothing either.
