//! Where a worker's time goes, per component of the plan (`--stats`): timely's log of
//! operator schedules, summed for the operators directly in the dataflow (a component's
//! region is one of them, and its time includes its operators'), each attributed to the
//! component whose rendering allocated its identifier ([`crate::render::render`]).
//! Operators outside every component (the inputs, the input diff, the delays a component
//! reads through, the captures) are summed apart.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;
use std::time::Duration;

use timely::logging::{StartStop, TimelyEvent, TimelyEventBuilder};

/// The schedule times of one worker's operators, as timely logs them.
#[derive(Default)]
struct Times {
    /// Operators directly in the dataflow, with when each was last started.
    top: HashMap<usize, Option<Duration>>,
    /// Their time scheduled so far.
    total: HashMap<usize, Duration>,
}

/// A worker's profile, recording from [`Profile::start`] on.
pub(super) struct Profile(Rc<RefCell<Times>>);

impl Profile {
    /// Starts recording the schedules of the operators `worker` builds from now on.
    pub(super) fn start(worker: &mut timely::worker::Worker) -> Profile {
        let times = Rc::new(RefCell::new(Times::default()));
        let log = times.clone();
        if let Some(mut register) = worker.log_register() {
            register.insert::<TimelyEventBuilder, _>("timely", move |_, events| {
                let Some(events) = events else {
                    return;
                };
                let mut times = log.borrow_mut();
                for (at, event) in events.iter() {
                    match event {
                        TimelyEvent::Operates(op) if op.addr.len() == 2 => {
                            times.top.insert(op.id, None);
                        }
                        TimelyEvent::Schedule(schedule) => {
                            let times = &mut *times;
                            let Some(started) = times.top.get_mut(&schedule.id) else {
                                continue;
                            };
                            match schedule.start_stop {
                                StartStop::Start => *started = Some(*at),
                                StartStop::Stop => {
                                    if let Some(from) = started.take() {
                                        *times.total.entry(schedule.id).or_default() +=
                                            at.saturating_sub(from);
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            });
        }
        Profile(times)
    }

    /// The time scheduled per component (operators by `components`' identifier ranges),
    /// then the time of the operators outside them.
    pub(super) fn per_component(
        &self,
        worker: &mut timely::worker::Worker,
        components: &[Range<usize>],
    ) -> Vec<Duration> {
        if let Some(mut register) = worker.log_register() {
            register.flush();
        }
        let times = self.0.borrow();
        let mut out = vec![Duration::ZERO; components.len() + 1];
        for (id, time) in &times.total {
            let at = components.iter().position(|range| range.contains(id));
            out[at.unwrap_or(components.len())] += *time;
        }
        out
    }
}
