//! RTEC's pipe-separated input records, in three shapes told apart by a per-name
//! [`RtecShape`] (names not listed are events): events `name|arrival|time|arg…` become
//! `name(arg…)` at `time`; point fluents `name|arrival|time|value|arg…` become
//! `name(arg…, value)` at `time`; interval fluents `name|arrival|start|end|value|arg…`
//! become `name(arg…, value)` at every time point of `[start, end)`. The arrival field is
//! not used. Records must be ordered by their (start) time; interval facts are held back
//! until a later record's time passes them, so the facts handed out stay in time order.

use hashbrown::HashMap;
use stgflow_io::stream::{Format, MAX_TIME, ReaderState, StreamError};
use stgflow_lang::value::{Row, Value};

/// How an RTEC record of a given name is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtecShape {
    /// `name|arrival|time|arg…`
    Event,
    /// `name|arrival|time|value|arg…`
    Point,
    /// `name|arrival|start|end|value|arg…`, holding on `[start, end)`.
    Interval,
}

/// The RTEC record format, with the shapes of the names an event description declares.
#[derive(Clone, Debug, Default)]
pub struct RtecRecords {
    shapes: HashMap<String, RtecShape>,
    /// Whether `.csv` files are read as RTEC records (for an `.ec` program's streams).
    claims_csv: bool,
    /// RTEC's window (T, END] is open on the left: records at T or before are not read,
    /// and an interval record starts after T at the earliest.
    after: Option<u64>,
}

impl RtecRecords {
    /// Records laid out as `shapes` say (names not listed are events); `claims_csv`: read
    /// `.csv` files as records.
    pub fn new(shapes: impl IntoIterator<Item = (String, RtecShape)>, claims_csv: bool) -> Self {
        RtecRecords {
            shapes: shapes.into_iter().collect(),
            claims_csv,
            after: None,
        }
    }

    /// The records read in RTEC's window after `after` (a time in the records' units):
    /// none at it or before it.
    pub fn after(mut self, after: Option<u64>) -> Self {
        self.after = after;
        self
    }
}

impl Format for RtecRecords {
    fn name(&self) -> &'static str {
        "rtec"
    }

    fn about(&self) -> &'static str {
        "RTEC records: `name|arrival|time|arg…`, as the `.ec` program declares"
    }

    fn extensions(&self) -> &'static [&'static str] {
        if self.claims_csv { &[".csv"] } else { &[] }
    }

    /// An interval record queues a fact for every time point of its interval, which later
    /// lines' blocks would need; events and point fluents are each their own line's.
    fn reads_in_blocks(&self) -> bool {
        !self
            .shapes
            .values()
            .any(|shape| *shape == RtecShape::Interval)
    }

    fn parse_line(&self, text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', '%']) {
            return Ok(());
        }
        // The fields, each trimmed, with the byte it starts at; no vector per line.
        let mut start = 0;
        let mut fields = text.split('|').map(|part| {
            let at = start;
            start += part.len() + 1;
            (part.trim(), at)
        });
        let (name, _) = fields.next().unwrap_or(("", 0));
        let shape = self.shapes.get(name).copied().unwrap_or(RtecShape::Event);
        let (times, value) = match shape {
            RtecShape::Event => (1, false),
            RtecShape::Point => (1, true),
            RtecShape::Interval => (2, true),
        };
        let needed = 2 + times + usize::from(value);
        // arrival, time, then the end time and the value where the shape has them.
        let mut head = [("", 0usize); 4];
        let mut got = 1;
        for slot in head.iter_mut().take(needed - 1) {
            match fields.next() {
                Some(field) => {
                    *slot = field;
                    got += 1;
                }
                None => break,
            }
        }
        if name.is_empty() || got < needed {
            let layout = match shape {
                RtecShape::Event => "name|arrival|time|arg…",
                RtecShape::Point => "name|arrival|time|value|arg…",
                RtecShape::Interval => "name|arrival|start|end|value|arg…",
            };
            return Err(state.error(
                text,
                text.len(),
                format!("expected at least {needed} `|`-separated fields: `{layout}`"),
                (!name.is_empty()).then(|| format!("`{name}` records are read as `{layout}`")),
            ));
        }
        let number = |state: &ReaderState, (field, at): (&str, usize), what: &str| {
            field.parse::<u64>().map_err(|_| {
                state.error(
                    text,
                    at,
                    format!("the {what} must be a non-negative integer, found `{field}`"),
                    Some("RTEC records read `name|arrival|time|…`".to_owned()),
                )
            })
        };
        number(state, head[0], "arrival time")?;
        let mut time = number(state, head[1], "time")?;
        if let Some(after) = self.after.filter(|&after| time <= after) {
            if shape != RtecShape::Interval {
                return Ok(());
            }
            time = after + 1;
        }
        // Sized once: a row of more than two values is on the heap, and grown value by
        // value it would be allocated twice.
        let fields_in_all = text.bytes().filter(|&b| b == b'|').count() + 1;
        let mut args = Row::with_capacity(fields_in_all - needed + usize::from(value));
        args.extend(fields.map(|(field, _)| Value::parse_loose(field)));
        if value {
            args.push(Value::parse_loose(head[needed - 2].0));
        }
        if shape != RtecShape::Interval {
            return state.accept(text, name, args, time, head[1].1);
        }
        let end = number(state, head[2], "end time")?;
        let Some(first) = state.advance(text, time, head[1].1, 1)? else {
            return Ok(());
        };
        let last = state.scaled(text, end.min(MAX_TIME), head[2].1)?;
        if last <= first {
            return Ok(());
        }
        state.queue(text, 0, name, args, first, last)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use stgflow_io::stream::{FactReader, Schema};
    use stgflow_lang::compile_str;

    fn read_rtec(text: &str, tick: u64) -> Result<Vec<String>, Box<StreamError>> {
        read_rtec_after(text, tick, None)
    }

    fn read_rtec_after(
        text: &str,
        tick: u64,
        after: Option<u64>,
    ) -> Result<Vec<String>, Box<StreamError>> {
        let compiled = compile_str(
            "p.tdl",
            "o(T) :- appear(X, T), walking(X, V, T), fast(X, Y, V, T).",
        );
        let records = RtecRecords::new(
            [
                ("walking".to_owned(), RtecShape::Point),
                ("fast".to_owned(), RtecShape::Interval),
            ],
            false,
        )
        .after(after);
        let schema = Schema::new(&compiled.program);
        let mut reader =
            FactReader::new(text.as_bytes(), "in", Arc::new(records), schema).with_tick(tick);
        let mut facts = Vec::new();
        while let Some(fact) = reader.next_fact()? {
            let args: Vec<String> = fact.args.iter().map(ToString::to_string).collect();
            let name = compiled.program.pred_name(fact.pred);
            facts.push(format!("{name}({})@{}", args.join(","), fact.time));
        }
        Ok(facts)
    }

    #[test]
    fn rtec_records_by_shape_with_intervals_expanded_in_order() {
        let facts = read_rtec(
            "appear|0|0|id0\nfast|9|2|6|very|id0|bus\nwalking|3|3|true|id0\nappear|9|9|id1\n",
            1,
        );
        assert_eq!(
            facts.unwrap_or_default(),
            [
                "appear(id0)@0",
                "fast(id0,bus,very)@2",
                "fast(id0,bus,very)@3",
                "walking(id0,true)@3",
                "fast(id0,bus,very)@4",
                "fast(id0,bus,very)@5",
                "appear(id1)@9",
            ]
        );
    }

    /// RTEC's window (0, END]: nothing at 0 is read, and an interval from 0 on holds from
    /// the window's first time point.
    #[test]
    fn records_of_rtecs_window_start_after_it() {
        let text =
            "appear|0|0|id0\nfast|0|0|3|very|id0|bus\nwalking|0|0|true|id0\nappear|1|1|id1\n";
        assert_eq!(
            read_rtec_after(text, 1, Some(0)).unwrap_or_default(),
            [
                "fast(id0,bus,very)@1",
                "appear(id1)@1",
                "fast(id0,bus,very)@2"
            ]
        );
    }

    #[test]
    fn rtec_times_are_divided_by_the_tick() {
        let facts = read_rtec("appear|40|40|a\nfast|120|80|160|x|a|b\n", 40);
        assert_eq!(
            facts.unwrap_or_default(),
            ["appear(a)@1", "fast(a,b,x)@2", "fast(a,b,x)@3"]
        );
        let error = read_rtec("appear|40|41|a\n", 40).err();
        assert!(error.is_some_and(|e| e.code == "E101" && e.message.contains("tick 40")));
        let backwards = read_rtec("appear|80|80|a\nappear|40|40|a\n", 40).err();
        assert!(backwards.is_some_and(|e| e.code == "E102" && e.message.contains("40 after 80")));
        let short = read_rtec("walking|1|1\n", 1).err();
        assert!(short.is_some_and(|e| e.message.contains("name|arrival|time|value|arg")));
    }

    #[test]
    fn an_interval_to_the_end_of_time_is_handed_out_lazily() {
        let text = format!("fast|0|2|{MAX_TIME}|v|a|b\nappear|0|4|a\n");
        let compiled = compile_str("p.tdl", "o(T) :- appear(X, T), fast(X, Y, V, T).");
        let records = RtecRecords::new([("fast".to_owned(), RtecShape::Interval)], false);
        let schema = Schema::new(&compiled.program);
        let mut reader = FactReader::new(text.as_bytes(), "in", Arc::new(records), schema);
        let times: Vec<u64> = std::iter::from_fn(|| reader.next_fact().ok().flatten())
            .take(8)
            .map(|f| f.time)
            .collect();
        assert_eq!(times, [2, 3, 4, 4, 5, 6, 7, 8]);
    }
}
