% Rule 16: initiating one value of a simple fluent terminates the others.
initiatedAt(mode(D)=idle, T) :- happensAt(stop(D), T).
initiatedAt(mode(D)=running, T) :- happensAt(start_job(D, J), T), J > 0.
initiatedAt(mode(D)=broken, T) :- happensAt(fault(D), T), not happensAt(stop(D), T).
