% complement_all alone binds nothing: TD cannot enumerate "every pair that is not close".
holdsFor(far(P1, P2)=true, I) :-
    holdsFor(close(P1, P2)=true, C),
    complement_all([C], I).
