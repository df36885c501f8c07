/* an event description
initiatedAt(f(X)=true, T) :- happensAt(e(X), T).
