initiatedAt(f(X)=on, T) :- happensAt(e(X), T).
fi(f(X)=on, f(X)=off, 99999999999999999999).
p(f(_)=on).
