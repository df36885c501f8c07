% A voting protocol (Pitt's, after Artikis), after RTEC's published event description
% (aartikis/RTEC, examples/voting/resources/patterns/rules.prolog, with the background
% knowledge of examples/voting/dataset/auxiliary/voting_static_generator.prolog),
% rewritten in stgflow's ECDE syntax. Run it over RTEC's voting file (one time point per
% time unit, no --tick):
%
%   stgflow run datasets/ec/voting.ec voting.csv --mode intervals
%
% The fluents, deadlines (10, 10, 10, 8, 4) and rules are RTEC's. Changes of form:
% * Nested fluents are flattened: RTEC's per(close_ballot(C,M))=V is
%   per_close_ballot(C,M)=V, obl(declare(C,M,carried))=V is obl_declare(C,M,carried)=V,
%   pow(propose(P,M))=true is pow_propose(M)=true (and so on for the other powers).
% * The background knowledge is arithmetic: role_of(Ag, chair) is Ag mod 10 = 0
%   (`Q is Ag/10, Ag =:= Q*10`), role_of(Ag, voter) is Ag mod 11 > 0, and queryMotion(M)
%   (the motions RTEC reasons about: M mod 3 = 0 among motions 1-10) is the three
%   `initially(status(M)=null)` facts (RTEC: `initially(status(_M)=null)` grounded over
%   queryMotion); every other fluent follows status, so it exists for these motions only.
% * RTEC grounds each output fluent over a domain (its `grounding/1` rules); where the
%   grounding restricts a variable the rules bind (voted: voters; sanctioned: chairs) the
%   restriction is written as a condition. Where a variable of the head is bound by no
%   condition at all (the chair C of per_close_ballot, obl_declare and the third
%   sanctioned rule) RTEC ranges it over every chair in its dynamic domain of persons
%   (`dynamicDomain(person(_))`: the persons of the input); here a fluent chair(C)=true
%   holds from the time point after C's first action in the input. (RTEC's domain is the
%   persons of the current window, look-ahead included; on RTEC's data every chair has
%   acted by time 9.)
% * The powers pow(Action(_Ag, M)) do not depend on the agent, so they are defined per
%   motion; RTEC's published declarations ground no power, so RTEC prints none.
% Left out, and why:
% * auxMotionOutcomeEvent(M, carried) is RTEC's derived event defined with `findall` and
%   `length` (the number of aye votes ≥ the number of nay votes when status(M)=voted
%   starts): an aggregate, which TD has not. It is declared an input event here, so a
%   stream may supply it; RTEC's data does not, so obl_declare(C,M,carried)=true never
%   holds and the second sanctioned rule never fires (the third then fires for every
%   chair that does not declare not_carried).
% * voted(_V,M)=null at start(status(M)=null) names a voter no condition binds: it ends
%   the aye/nay of the voters that voted (as in RTEC) and holds for those only (W504);
%   RTEC's declarations do not ground voted=null, so it prints none.
% Known difference from RTEC (the front end's, see README): happensAt(start(F=V), T) and
% happensAt(end(F=V), T) happen here at the first time point of F=V's interval and the
% first after it; RTEC puts them one time point earlier (at the initiation and the
% termination). Everything triggered by a start or end (voted=null, auxPerCloseBallot,
% per_close_ballot, obl_declare, sanctioned by rules 2-3, the end of outcome) is one time
% point later than RTEC's.
% Known difference from RTEC (of the paper's ECDE): a value initiated and terminated at the
% same time point holds afterwards here (rules 14-15); in RTEC the termination wins. The
% data often has a voter voting aye and nay at the same time point: here both voted values
% then hold, in RTEC neither.

% ---- input entities --------------------------------------------------------------------
event(propose(_, _)).        inputEntity(propose(_, _)).
event(second(_, _)).         inputEntity(second(_, _)).
event(vote(_, _, _)).        inputEntity(vote(_, _, _)).
event(close_ballot(_, _)).   inputEntity(close_ballot(_, _)).
event(declare(_, _, _)).     inputEntity(declare(_, _, _)).
% derived in RTEC by an aggregate (see above)
event(auxMotionOutcomeEvent(_, _)).  inputEntity(auxMotionOutcomeEvent(_, _)).

% ---- the chairs of the input (RTEC's dynamic domain of persons, restricted to chairs) --
initiatedAt(chair(C)=true, T) :- happensAt(propose(C, _), T), Q is C / 10, C =:= Q * 10.
initiatedAt(chair(C)=true, T) :- happensAt(second(C, _), T), Q is C / 10, C =:= Q * 10.
initiatedAt(chair(C)=true, T) :- happensAt(vote(C, _, _), T), Q is C / 10, C =:= Q * 10.
initiatedAt(chair(C)=true, T) :- happensAt(close_ballot(C, _), T), Q is C / 10, C =:= Q * 10.
initiatedAt(chair(C)=true, T) :- happensAt(declare(C, _, _), T), Q is C / 10, C =:= Q * 10.

% ---- status(M) -------------------------------------------------------------------------
fi(status(M)=proposed, status(M)=null, 10).
fi(status(M)=voting, status(M)=voted, 10).
fi(status(M)=voted, status(M)=null, 10).

initially(status(3)=null).
initially(status(6)=null).
initially(status(9)=null).

initiatedAt(status(M)=proposed, T) :-
    happensAt(propose(_P, M), T),
    holdsAt(status(M)=null, T).
initiatedAt(status(M)=voting, T) :-
    happensAt(second(_S, M), T),
    holdsAt(status(M)=proposed, T).
initiatedAt(status(M)=voted, T) :-
    happensAt(close_ballot(C, M), T),
    Q is C / 10, C =:= Q * 10,                       % role_of(C, chair)
    holdsAt(status(M)=voting, T).
initiatedAt(status(M)=null, T) :-
    happensAt(declare(C, M, _), T),
    Q is C / 10, C =:= Q * 10,                       % role_of(C, chair)
    holdsAt(status(M)=voted, T).

% ---- voted(V, M)=Vote ------------------------------------------------------------------
initiatedAt(voted(V, M)=Vote, T) :-
    happensAt(vote(V, M, Vote), T),
    Q is V / 11, R is V - Q * 11, R > 0,             % grounding: role_of(V, voter)
    holdsAt(status(M)=voting, T).
initiatedAt(voted(_V, M)=null, T) :-
    happensAt(start(status(M)=null), T).

% ---- outcome(M)=Outcome ----------------------------------------------------------------
initiatedAt(outcome(M)=Outcome, T) :-
    happensAt(declare(C, M, Outcome), T),
    holdsAt(status(M)=voted, T),
    Q is C / 10, C =:= Q * 10.                       % role_of(C, chair)
terminatedAt(outcome(M)=_O, T) :-
    happensAt(start(status(M)=proposed), T).

% ---- institutional power ---------------------------------------------------------------
holdsFor(pow_propose(M)=true, I) :-
    holdsFor(status(M)=null, I1), union_all([I1], I).
holdsFor(pow_second(M)=true, I) :-
    holdsFor(status(M)=proposed, I1), union_all([I1], I).
holdsFor(pow_vote(M)=true, I) :-
    holdsFor(status(M)=voting, I1), union_all([I1], I).
holdsFor(pow_close_ballot(M)=true, I) :-
    holdsFor(status(M)=voting, I1), union_all([I1], I).
holdsFor(pow_declare(M)=true, I) :-
    holdsFor(status(M)=voted, I1), union_all([I1], I).

% ---- permission ------------------------------------------------------------------------
fi(auxPerCloseBallot(M)=true, auxPerCloseBallot(M)=false, 8).

initiatedAt(auxPerCloseBallot(M)=true, T) :-
    happensAt(start(status(M)=voting), T).
initiatedAt(auxPerCloseBallot(M)=false, T) :-
    happensAt(start(status(M)=proposed), T).
initiatedAt(per_close_ballot(C, M)=true, T) :-
    happensAt(end(auxPerCloseBallot(M)=true), T),
    holdsAt(status(M)=voting, T),
    holdsAt(chair(C)=true, T).                       % grounding of _C: the chairs
initiatedAt(per_close_ballot(C, M)=false, T) :-
    happensAt(start(status(M)=voted), T),
    holdsAt(chair(C)=true, T).                       % grounding of _C: the chairs

% ---- obligation ------------------------------------------------------------------------
initiatedAt(obl_declare(C, M, carried)=true, T) :-
    happensAt(auxMotionOutcomeEvent(M, carried), T),
    holdsAt(chair(C)=true, T).                       % grounding of _C: the chairs
initiatedAt(obl_declare(C, M, carried)=false, T) :-
    happensAt(start(status(M)=null), T),
    holdsAt(chair(C)=true, T).                       % grounding of _C: the chairs

% ---- sanction --------------------------------------------------------------------------
fi(sanctioned(C)=true, sanctioned(C)=false, 4).

initiatedAt(sanctioned(C)=true, T) :-
    happensAt(close_ballot(C, M), T),
    Q is C / 10, C =:= Q * 10,                       % grounding: role_of(C, chair)
    \+ holdsAt(per_close_ballot(C, M)=true, T).
initiatedAt(sanctioned(C)=true, T) :-
    happensAt(end(status(M)=voted), T),
    \+ happensAt(declare(C, M, carried), T),
    holdsAt(obl_declare(C, M, carried)=true, T).
initiatedAt(sanctioned(C)=true, T) :-
    happensAt(end(status(M)=voted), T),
    holdsAt(chair(C)=true, T),                       % grounding of C: the chairs
    \+ happensAt(declare(C, M, not_carried), T),
    \+ holdsAt(obl_declare(C, M, carried)=true, T).

% ---- output ----------------------------------------------------------------------------
outputEntity(status(_)=null).
outputEntity(voted(_, _)=aye).
outputEntity(outcome(_)=carried).
outputEntity(auxPerCloseBallot(_)=true).
outputEntity(per_close_ballot(_, _)=true).
outputEntity(obl_declare(_, _, _)=true).
outputEntity(sanctioned(_)=true).
outputEntity(pow_propose(_)=true).
outputEntity(pow_second(_)=true).
outputEntity(pow_vote(_)=true).
outputEntity(pow_close_ballot(_)=true).
outputEntity(pow_declare(_)=true).
