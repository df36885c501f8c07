% RTEC's grounding, background knowledge and timing of start/end (issue 22), as RTEC's
% own files use them (--ec-timing rtec is how `.prolog` files are read):
% * person/1 is a dynamic domain: a person exists from their first input event on, and
%   `cy`, a background fact, from the start;
% * mood's values are the grounded ones (calm, angry) and `unknown`, the complement of
%   both (a fluent with simple and statically determined values): `feel(P, happy)`
%   initiates nothing, as happy is not grounded;
% * `initially(mood(_)=calm)` holds for every grounded person from where they exist;
% * quiet=false is the complement of quiet=true (a statically determined value read by
%   another of the same fluent);
% * alert starts where mood=angry starts, at once (RTEC's start), unless the person
%   sleeps then; the background fact `unused/1` is read by nothing (W507);
% * bob shouts and sleeps at 8: angry, initiated and terminated at once, does not start
%   (RTEC's reading), so from 9 his mood is unknown.
person(cy).
unused(1).
dynamicDomain(person(_)).
grounding(shout(P)) :- person(P).
grounding(sleep(P)) :- person(P).
grounding(feel(P, _)) :- person(P).
grounding(mood(P)=calm) :- person(P).
grounding(mood(P)=angry) :- person(P).
grounding(mood(P)=unknown) :- person(P).
grounding(quiet(P)=true) :- person(P).
grounding(quiet(P)=false) :- person(P).
grounding(alert(P)=true) :- person(P).

initially(mood(_)=calm).
initiatedAt(mood(P)=angry, T) :- happensAt(shout(P), T).
initiatedAt(mood(P)=V, T) :- happensAt(feel(P, V), T).
terminatedAt(mood(P)=calm, T) :- happensAt(sleep(P), T).
terminatedAt(mood(P)=angry, T) :- happensAt(sleep(P), T).
holdsFor(mood(P)=unknown, I) :-
    holdsFor(mood(P)=calm, I1), holdsFor(mood(P)=angry, I2),
    union_all([I1, I2], I3), complement_all([I3], I).

holdsFor(quiet(P)=true, I) :- holdsFor(mood(P)=calm, I).
holdsFor(quiet(P)=false, I) :- holdsFor(quiet(P)=true, I1), complement_all([I1], I).

initiatedAt(alert(P)=true, T) :-
    happensAt(start(mood(P)=angry), T), \+ happensAt(sleep(P), T).
terminatedAt(alert(P)=true, T) :- happensAt(sleep(P), T).
