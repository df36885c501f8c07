initiatedAt(f(X)=true, T) :- happensAt(ÿ(X), T).
