//! Time order and lateness: where a stream is in time, which facts wait for the
//! watermark (the latest time seen minus the lateness), and the error for a fact that
//! comes too late.

use super::Code;
use super::{InputFact, MAX_TIME, ReaderState, StreamError};

/// A fact waiting in a reader until it is due; it holds on `[fact.time, end)`.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub(crate) fact: InputFact,
    pub(crate) end: u64,
}

impl ReaderState {
    /// The time point below which no fact can come any more: the latest time seen minus
    /// the lateness.
    pub(crate) fn watermark(&self) -> u64 {
        self.latest
            .map_or(0, |(t, _)| t.saturating_sub(self.tolerance.lateness))
    }

    /// Moves the reader to input time `time` (scaled by the tick), checking the order and
    /// handing out the held facts the watermark has passed; returns the time point, or
    /// `None` when the line is too late and skipped (`facts` facts counted).
    pub fn advance(
        &mut self,
        text: &str,
        time: u64,
        at: usize,
        facts: u64,
    ) -> Result<Option<u64>, Box<StreamError>> {
        if time > MAX_TIME {
            return Err(self.error(
                text,
                at,
                format!("time {time} is too large (the limit is 2^63 - 1)"),
                None,
            ));
        }
        let time = self.scaled(text, time, at)?;
        if let Some((latest, latest_line)) = self.latest {
            if time < self.watermark() {
                if self.tolerance.skip_late {
                    self.skipped.late += facts;
                    if self.skipped.first_late.is_none() {
                        self.skipped.first_late = Some(format!("{}:{}", self.name, self.line));
                    }
                    return Ok(None);
                }
                return Err(self.late(text, at, time, latest, latest_line));
            }
        }
        if self.latest.is_none_or(|(latest, _)| time > latest) {
            self.latest = Some((time, self.line));
        }
        self.first.get_or_insert(time);
        self.release_held(self.watermark());
        Ok(Some(time))
    }

    /// The error for a fact at `time` behind the watermark.
    fn late(
        &self,
        text: &str,
        at: usize,
        time: u64,
        latest: u64,
        latest_line: usize,
    ) -> Box<StreamError> {
        let tick = self.tick;
        let lateness = self.tolerance.lateness;
        let mut error = if lateness == 0 {
            self.error(
                text,
                at,
                format!(
                    "time goes backwards: {} after {} (line {latest_line})",
                    time * tick,
                    latest * tick
                ),
                Some(
                    "streams must be ordered by time (`--lateness N` accepts facts up to N \
                     time points late)"
                        .to_owned(),
                ),
            )
        } else {
            self.error(
                text,
                at,
                format!(
                    "time {} is {} time point{} late, more than the lateness of {lateness}, \
                     after {} (line {latest_line})",
                    time * tick,
                    latest - time,
                    if latest - time == 1 { "" } else { "s" },
                    latest * tick
                ),
                Some("`--skip-late` skips such facts and counts them".to_owned()),
            )
        };
        error.code = Code::E102.as_str();
        error
    }

    /// Hands out the held facts due at time points up to `until`, in time order; an
    /// interval fact is due again at the next time point until its interval ends.
    pub(crate) fn release_held(&mut self, until: u64) {
        while let Some(entry) = self.held.first_entry() {
            let t = *entry.key();
            if t > until {
                break;
            }
            for held in entry.remove() {
                let next = t + 1;
                let again = (next < held.end).then(|| held.fact.clone());
                self.pending.push_back(InputFact {
                    time: t,
                    ..held.fact
                });
                if let Some(fact) = again {
                    self.held.entry(next).or_default().push(Held {
                        fact,
                        end: held.end,
                    });
                }
            }
        }
    }
}
