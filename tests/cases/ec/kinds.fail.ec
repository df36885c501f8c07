% A fluent defined as both kinds, an event used as a fluent, and two arities.
initiatedAt(on(X)=true, T) :- happensAt(press(X), T).
holdsAt(on(X)=true, T) :- holdsAt(power(X)=true, T).
holdsAt(busy(X)=true, T) :- holdsAt(press(X)=true, T).
initiatedAt(lamp(X)=lit, T) :- happensAt(press(X, 2), T).
fi(lamp(X)=lit, on(X)=true, 3).
initially(lamp(X)=lit).
