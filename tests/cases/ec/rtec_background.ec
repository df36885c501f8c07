% RTEC's background knowledge as rules and as conditions, `mod`, and compound terms as
% fluent arguments (issue 22), as RTEC's voting example writes them. `--mode rtec`
% prints a compound argument as written: `per,[[close(10,m1)],true]`.
member(1). member(3). member(10). member(20).
role_of(A, chair) :- member(A), 0 is A mod 10.
role_of(A, voter) :- member(A), R is A mod 10, R > 0.

initiatedAt(per(close(C, M))=true, T) :- happensAt(open(M), T), role_of(C, chair).
initiatedAt(per(close(C, M))=false, T) :- happensAt(shut(C, M), T).
initiatedAt(sanctioned(C)=true, T) :-
    happensAt(shut(C, M), T), \+ holdsAt(per(close(C, M))=true, T).
initiatedAt(voted(V, M)=yes, T) :-
    happensAt(ballot(V, M), T), role_of(V, voter), \+ role_of(V, chair).
