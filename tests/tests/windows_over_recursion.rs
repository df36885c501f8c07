//! A lowered □ window over a predicate defined by offset-0 recursion (an `iterate`
//! component), against the reference. The iteration's output, seen at the outer time,
//! can carry a record's −1 and +1 from different rounds unconsolidated; the □ operator
//! delays only insertions, so such a pair turned into a gap and the window never held.
//! Found by the LARS proptest (`tests/tests/lars.rs`); recursive components now leave
//! through `zero_one`.

use stgflow_io::drive::Timeline;
use stgflow_tests::{Engine, run};

const PROGRAM: &str = "\
    d2(b, A, T) :- A <= A, not e1(A, T), d2(A, 1, T).\n\
    d2(C, B, T) :- f(B, C, T).\n\
    d2(C, B, T) :- f(B, C, T-1).\n\
    e1(X, T) :- e(X, T).\n\
    e1(X, T) :- e(X, T-1).\n\
    box3(X, Y, T) :- d2(X, Y, T), d2(X, Y, T-1), d2(X, Y, T-2), d2(X, Y, T-3).\n\
    d3(B, T) :- box3(A, A, T), e(B, T-1).\n";

const STREAM: &str = "f(1,1,1). f(1,1,2). f(b,a,2). e(b,5). f(a,1,5). f(b,b,5). f(a,b,6). \
    f(1,b,6). e(b,8). e(a,8). f(b,b,8). e(a,10). f(a,1,10). f(a,b,10). e(b,11). e(1,11).\n";

#[test]
fn box_window_over_offset_0_recursion_equals_reference_1_3_workers() {
    let expected = run(PROGRAM, STREAM, Timeline::default(), &Engine::Reference);
    let expected = expected.unwrap_or_default();
    assert!(expected.contains("box3(b,b,8)."), "{expected:?}");
    for workers in [1, 3] {
        for lower in [true, false] {
            let engine = Engine::dataflow(workers, lower);
            let actual = run(PROGRAM, STREAM, Timeline::default(), &engine);
            assert_eq!(actual.as_ref(), Ok(&expected), "{engine:?}");
        }
    }
}
