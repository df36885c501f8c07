% Reads RTEC's unit tests for scripts/peers/rtec_unit_tests.py (it is not RTEC's: it only
% reads the test cases that a test file of RTEC's `unit-tests/RTEC-tests/tests/` declares).
% Loaded after the test file (which loads RTEC, its rules and its narratives), it prints,
% per test case, tab-separated lines:
%
%   TEST    Kind Scenario Case Number Start  (Kind: a, e or se, as RTEC's unit tester has them;
%                                           Start: the time its queries start from)
%   EXPECTED  the expected interval lists, one per query, as a Prolog term
%   CHECK   the fluent-value pair the case's check/3 reads, or `complex` and why
%   QUERY   CT WM                          (a query at CT over the window (CT - WM, CT])
%   R       an RTEC input record for each input fact known at that query, or `X <term>`
%           for one whose arguments are not atomic
%
% Run: swipl -q -l TEST_FILE -l rtec_unit_tests.pl -g dump_all -t halt

:- dynamic seen_record/1.

dump_all :-
    forall(declared(Kind, Scen, Case, N, Expected, Ts),
           dump(Kind, Scen, Case, N, Expected, Ts)).

declared(a, S, C, N, E, Ts) :-
    catch(clause(testcase(S, C, N, E, Ts, _, _, _, _), _), _, fail).
declared(e, S, C, N, E, Ts) :-
    catch(clause(testcaseE(S, C, N, E, Ts, _, _, _, _), _), _, fail).
declared(se, S, C, N, E, Ts) :-
    catch(clause(testcaseSE(S, C, N, E, Ts, _, _, _, _), _), _, fail).

dump(Kind, Scen, Case, N, Expected, (Step, Window, Start, End)) :-
    format("TEST\t~w\t~q\t~q\t~q\t~w~n", [Kind, Scen, Case, N, Start]),
    format("EXPECTED\t~q~n", [Expected]),
    check_pair(Case, N),
    forget_input,
    ( Kind == a -> ignore(catch(updateSDE(Scen), _, true)) ; true ),
    createErTimes(Step, Window, Start, End, Times),
    forall(member((CT, WM), Times), query(Kind, Scen, CT, WM)),
    forget_input.

query(Kind, Scen, CT, WM) :-
    ( Kind == e -> ignore(catch(updateSDE(Scen, CT), _, true))
    ; Kind == se -> Init is CT - WM, ignore(catch(updateSDE(Scen, Init, CT), _, true))
    ; true ),
    format("QUERY\t~w\t~w~n", [CT, WM]),
    forall(input_fact(Fact), record(Fact)).

forget_input :-
    retractall(happensAtIE(_, _)),
    retractall(holdsForIESI(_, _)),
    retractall(holdsAtIE(_, _)).

input_fact(happensAtIE(E, T)) :- catch(happensAtIE(E, T), _, fail).
input_fact(holdsForIESI(F, I)) :- catch(holdsForIESI(F, I), _, fail).
input_fact(holdsAtIE(F, T)) :- catch(holdsAtIE(F, T), _, fail).

% The records RTEC's CSV input providers read: name|arrival|time|args (an event),
% name|arrival|time|value|args (a fluent at a time point), name|arrival|start|end|value|args
% (a fluent over an interval).
record(happensAtIE(E, T)) :-
    E =.. [Name|Args],
    atomic_args(Args), !,
    atomic_list_concat([Name, T, T|Args], '|', Line),
    format("R\t~w~n", [Line]).
record(holdsAtIE(F=V, T)) :-
    F =.. [Name|Args],
    atomic_args([V|Args]), !,
    atomic_list_concat([Name, T, T, V|Args], '|', Line),
    format("R\t~w~n", [Line]).
record(holdsForIESI(F=V, (S, E))) :-
    F =.. [Name|Args],
    atomic_args([V|Args]), !,
    atomic_list_concat([Name, S, S, E, V|Args], '|', Line),
    format("R\t~w~n", [Line]).
record(Fact) :-
    format("R\tX ~q~n", [Fact]).

atomic_args(Args) :- forall(member(A, Args), atomic(A)).

% The pair the case's check reads: the first clause whose guards (member/2, comparisons)
% hold for the
% case's number, read (not run) up to its holdsFor/2 of the result.
check_pair(Case, N) :-
    (   catch(clause(check(Case, N, Found), Body), _, fail),
        pair_in(Body, Found, Pair)
    ->  ( Pair = complex(Why) -> format("CHECK\tcomplex ~w~n", [Why])
        ; format("CHECK\t~q~n", [Pair]) )
    ;   format("CHECK\tcomplex no check/3 clause for this case~n", [])
    ).

pair_in((A, B), Found, Pair) :- !,
    (   pair_in(A, Found, P), P \= none
    ->  Pair = P
    ;   pair_in(A, Found, none), pair_in(B, Found, Pair)
    ).
pair_in(member(X, L), _, none) :- !, memberchk(X, L).
pair_in(Guard, _, none) :-
    Guard =.. [Op, _, _],
    memberchk(Op, [<, >, =<, >=, =:=, =\=, ==, \==]), !,
    call(Guard).
pair_in(holdsFor(FV, Result), Found, Pair) :- Result == Found, !, Pair = FV.
pair_in(holdsFor(_, _), _, none) :- !.
pair_in(write(_), _, none) :- !.
pair_in(nl, _, none) :- !.
pair_in(true, _, none) :- !.
pair_in(Goal, _, complex(Name/Arity)) :- functor(Goal, Name, Arity).
