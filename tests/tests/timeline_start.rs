//! Rules without a positive atom hold from the first time point of the timeline on, and
//! not before it, on every evaluation path: `tick(T) :- 0 = 0.` holds at every time point,
//! so `start(T) :- tick(T), not tick(T-1).` holds at the first one only (the dataflow
//! engine feeds its unit row at the timeline's first point; it used to start at time 0).
//! The LARS front end clips □ windows with exactly these two rules.

use stgflow_io::drive::Timeline;
use stgflow_tests::{Engine, run};

const PROGRAM: &str = "\
    tick(T) :- 0 = 0.\n\
    start(T) :- tick(T), not tick(T-1).\n\
    quiet(T) :- not p(a, T).\n\
    since(X, T) :- p(X, T), start(T).\n\
    since(X, T) :- p(X, T), since(X, T-1).\n";

fn engines() -> Vec<Engine> {
    let mut engines = vec![Engine::Reference];
    for workers in [1, 3] {
        engines.push(Engine::dataflow(workers, true));
    }
    engines
}

#[test]
fn rules_without_positive_atoms_start_at_the_first_time_point_1_3_workers() {
    let stream = "p(a, 3). p(b, 3). p(a, 4). p(b, 5). p(b, 6).\n";
    for (timeline, start) in [
        (Timeline::default(), 3),
        (
            Timeline {
                from: Some(1),
                until: Some(7),
            },
            1,
        ),
    ] {
        let expected = run(PROGRAM, stream, timeline, &Engine::Reference).unwrap_or_default();
        assert!(
            expected.contains(&format!("start({start}).")),
            "{expected:?}"
        );
        assert_eq!(
            expected.iter().filter(|l| l.starts_with("start(")).count(),
            1
        );
        for engine in engines() {
            let actual = run(PROGRAM, stream, timeline, &engine);
            assert_eq!(actual.as_ref(), Ok(&expected), "{engine:?}, from {start}");
        }
    }
}
