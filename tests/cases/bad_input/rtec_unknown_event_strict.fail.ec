initiatedAt(on(X)=true, T) :- happensAt(switchOn(X), T).
terminatedAt(on(X)=true, T) :- happensAt(switchOff(X), T).
