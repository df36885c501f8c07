% start/end events of fluents, initially, input interval fluents, and a clock tick of 10:
% the stream's times are multiples of 10 and time point k is time 10k.
inputEntity(fast(_)=true).
collectIntervals(fast(_)=true).
initially(speed(bus1)=normal).
initiatedAt(speed(V)=high, T) :- happensAt(start(fast(V)=true), T).
initiatedAt(speed(V)=normal, T) :- happensAt(end(fast(V)=true), T).
outputEntity(speed(_)=high).
