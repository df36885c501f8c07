% An event description with an error at every stage, all reported in one run: reading
% the clauses (E504), the translation (E512, E511) and the TD program (E002).
initiatedAt(on(X), T) :- happensAt(press(X), T).
fi(lamp(X)=lit, on(X)=true, 3).
holdsFor(dark(X)=true, I) :- holdsFor(lamp(X)=lit, I1), union_all([I1, I2], I).
holdsAt(idle(X)=true, T) :- \+ holdsAt(busy(X)=true, T).
