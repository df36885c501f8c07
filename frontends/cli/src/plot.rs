//! `stgflow plot`: a timeline of what was recognised, from `--mode intervals` output (TD
//! lines `atom [start,end)`): one row per fact, a bar per interval, time on the x axis,
//! the facts grouped by predicate (each predicate a colour of a colour-blind-safe
//! palette), as SVG or PNG by the output's ending (plotters, with the bundled DejaVu Sans
//! so that text looks the same on a machine without fonts). Past `--rows` facts the rest
//! is left out, and the picture and stderr say how many.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use stgflow_io::draw;

use crate::Failure;
use crate::args::PlotArgs;

/// A fact's row: its text, its predicate and its intervals.
#[derive(Debug)]
struct Row {
    atom: String,
    predicate: String,
    intervals: Vec<(u64, u64)>,
}

/// What the picture shows.
#[derive(Debug)]
struct Timeline {
    rows: Vec<Row>,
    /// Facts not drawn (past the row limit).
    left_out: usize,
    /// The predicates in order, for their colours.
    predicates: Vec<String>,
    span: (u64, u64),
}

/// Reads the intervals of `text` (from `file`) that `select` keeps, a row per fact
/// grouped by predicate (in name order, each predicate's facts by their first start), at
/// most `most` rows.
fn timeline(text: &str, file: &str, most: usize, select: &Select) -> Result<Timeline, Failure> {
    let mut facts: BTreeMap<(String, String), Vec<(u64, u64)>> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let bad = || {
            Failure::Message(format!(
                "{file}:{}: expected an interval `atom [start,end)`, as `--mode intervals` writes, found `{line}`",
                n + 1
            ))
        };
        let (atom, interval) = line.rsplit_once(" [").ok_or_else(bad)?;
        let (start, end) = interval
            .strip_suffix(')')
            .and_then(|s| s.split_once(','))
            .ok_or_else(bad)?;
        let (start, end): (u64, u64) = (
            start.trim().parse().map_err(|_| bad())?,
            end.trim().parse().map_err(|_| bad())?,
        );
        if end <= start {
            return Err(bad());
        }
        let predicate = atom.split('(').next().unwrap_or(atom).trim().to_owned();
        let Some(cut) = select.keeps(&predicate, (start, end)) else {
            continue;
        };
        facts
            .entry((predicate, atom.trim().to_owned()))
            .or_default()
            .push(cut);
    }
    let mut rows: Vec<Row> = facts
        .into_iter()
        .map(|((predicate, atom), mut intervals)| {
            intervals.sort_unstable();
            Row {
                atom,
                predicate,
                intervals,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        a.predicate
            .cmp(&b.predicate)
            .then(a.intervals[0].cmp(&b.intervals[0]))
            .then(a.atom.cmp(&b.atom))
    });
    let span = rows
        .iter()
        .flat_map(|r| r.intervals.iter())
        .fold((u64::MAX, 0), |(lo, hi), &(s, e)| (lo.min(s), hi.max(e)));
    let mut predicates: Vec<String> = rows.iter().map(|r| r.predicate.clone()).collect();
    predicates.dedup();
    let left_out = rows.len().saturating_sub(most);
    rows.truncate(most);
    Ok(Timeline {
        rows,
        left_out,
        predicates,
        span,
    })
}

/// Which facts a picture shows: some predicates' (all where none are named), within a
/// stretch of time.
#[derive(Debug, Default)]
pub(crate) struct Select {
    pub(crate) predicates: Vec<String>,
    pub(crate) from: Option<u64>,
    /// The last time point shown.
    pub(crate) until: Option<u64>,
}

impl Select {
    /// The part of the interval `[start, end)` of a fact of `predicate` to draw, if any.
    fn keeps(&self, predicate: &str, (start, end): (u64, u64)) -> Option<(u64, u64)> {
        if !self.predicates.is_empty() && !self.predicates.iter().any(|p| p == predicate) {
            return None;
        }
        let start = self.from.map_or(start, |from| start.max(from));
        let end = self
            .until
            .map_or(end, |until| end.min(until.saturating_add(1)));
        (start < end).then_some((start, end))
    }
}

/// Height of a fact's row, in pixels.
const ROW: u32 = 16;

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    timeline: &Timeline,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let rows = timeline.rows.len().max(1) as i32;
    let (t0, t1) = if timeline.span.0 < timeline.span.1 {
        timeline.span
    } else {
        (0, 1)
    };
    let longest = timeline.rows.iter().map(|r| r.atom.chars().count()).max();
    let label_width = (longest.unwrap_or(4) as u32 * 7 + 20).clamp(60, 420);
    let caption = match timeline.left_out {
        0 => title.to_owned(),
        n => format!(
            "{title} (first {} facts; {n} more left out)",
            timeline.rows.len()
        ),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(40)
        .x_label_area_size(36)
        .y_label_area_size(label_width)
        .build_cartesian_2d(t0..t1, (0..rows).into_segmented())?;
    let labels: Vec<&str> = timeline.rows.iter().map(|r| r.atom.as_str()).collect();
    let label_of = |y: &SegmentValue<i32>| match y {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => labels
            .get((rows - 1 - i) as usize)
            .map_or_else(String::new, |s| (*s).to_owned()),
        SegmentValue::Last => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(timeline.rows.len().max(1))
        .y_label_formatter(&label_of)
        .x_labels(10)
        .x_label_formatter(&|t| t.to_string())
        .x_desc("time")
        .label_style(("sans-serif", 12))
        .draw()?;
    let colour = |predicate: &str| {
        let index = timeline.predicates.iter().position(|p| p == predicate);
        draw::colour(index.unwrap_or(0))
    };
    for (i, row) in timeline.rows.iter().enumerate() {
        let y = rows - 1 - i as i32;
        let fill = colour(&row.predicate).filled();
        chart.draw_series(row.intervals.iter().map(|&(s, e)| {
            Rectangle::new(
                [(s, SegmentValue::Exact(y)), (e, SegmentValue::Exact(y + 1))],
                fill,
            )
        }))?;
    }
    root.present()
}

impl crate::Context<'_> {
    pub(crate) fn plot(&mut self, args: PlotArgs) -> Result<(), Failure> {
        let name = args.intervals.display().to_string();
        let text = std::fs::read_to_string(&args.intervals)
            .map_err(|e| Failure::Message(format!("cannot read {name}: {e}")))?;
        let title = args.title.clone().unwrap_or_else(|| name.clone());
        let picture = Picture {
            out: &args.out,
            rows: args.rows,
            width: args.width,
            title: &title,
            select: Select {
                predicates: args.predicates.clone(),
                from: args.from,
                until: args.until,
            },
        };
        self.draw_timeline(&text, &name, &picture)
    }

    /// Draws the intervals of `text` (from `name`) as `picture` says.
    pub(crate) fn draw_timeline(
        &mut self,
        text: &str,
        name: &str,
        picture: &Picture<'_>,
    ) -> Result<(), Failure> {
        let timeline = timeline(text, name, picture.rows.max(1), &picture.select)?;
        if timeline.rows.is_empty() {
            let chosen = match &picture.select {
                Select {
                    predicates,
                    from: None,
                    until: None,
                } if predicates.is_empty() => "",
                _ => " of the predicates and times chosen",
            };
            return Err(Failure::Message(format!(
                "{name}: no intervals{chosen} to draw"
            )));
        }
        if timeline.left_out > 0 && !self.quiet {
            let _ = writeln!(
                self.stderr,
                "warning: {} facts drawn, {} more left out (--rows {} draws more)",
                timeline.rows.len(),
                timeline.left_out,
                timeline.rows.len() + timeline.left_out
            );
        }
        draw::register_font();
        let height = 90 + ROW * timeline.rows.len() as u32;
        let size = (picture.width.max(300), height);
        let (out, title) = (picture.out, picture.title);
        let drawn = match extension(out).as_deref() {
            Some("png") => render(
                BitMapBackend::new(out, size).into_drawing_area(),
                &timeline,
                title,
            )
            .map_err(|e| e.to_string()),
            Some("svg") => render(
                SVGBackend::new(out, size).into_drawing_area(),
                &timeline,
                title,
            )
            .map_err(|e| e.to_string()),
            _ => return Err(not_a_picture(out)),
        };
        drawn.map_err(|e| Failure::Message(format!("cannot draw {}: {e}", out.display())))
    }
}

/// Where and how to draw a timeline.
#[derive(Debug)]
pub(crate) struct Picture<'a> {
    /// SVG or PNG, by its ending.
    pub(crate) out: &'a Path,
    /// Most facts drawn.
    pub(crate) rows: usize,
    pub(crate) width: u32,
    pub(crate) title: &'a str,
    /// Which facts it shows.
    pub(crate) select: Select,
}

/// Whether `out` names a picture `plot` can write; else the error saying so.
pub(crate) fn check_picture(out: &Path) -> Result<(), Failure> {
    match extension(out).as_deref() {
        Some("png" | "svg") => Ok(()),
        _ => Err(not_a_picture(out)),
    }
}

fn not_a_picture(out: &Path) -> Failure {
    Failure::Message(format!(
        "{}: the picture is written as SVG or PNG, by its ending (.svg, .png)",
        out.display()
    ))
}

fn extension(path: &Path) -> Option<String> {
    Some(path.extension()?.to_str()?.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_grouped_by_predicate_and_cut_at_the_limit() {
        let text = "safe(d2) [4,6)\nsafe(d1) [2,7)\ntrusted(d1) [4,7)\nsafe(d2) [9,12)\n";
        let all = timeline(text, "t", 10, &Select::default()).unwrap_or_else(|_| panic!("reads"));
        let atoms: Vec<&str> = all.rows.iter().map(|r| r.atom.as_str()).collect();
        assert_eq!(atoms, ["safe(d1)", "safe(d2)", "trusted(d1)"]);
        assert_eq!(all.rows[1].intervals, [(4, 6), (9, 12)]);
        assert_eq!((all.span, all.left_out), ((2, 12), 0));
        let cut = timeline(text, "t", 2, &Select::default()).unwrap_or_else(|_| panic!("reads"));
        assert_eq!((cut.rows.len(), cut.left_out), (2, 1));
        for bad in ["safe(d1) 4,6", "safe(d1) [6,4)", "safe(d1) [a,4)"] {
            match timeline(bad, "t", 10, &Select::default()) {
                Err(Failure::Message(m)) => assert!(m.starts_with("t:1: expected"), "{m}"),
                _ => panic!("{bad} read"),
            }
        }
    }

    #[test]
    fn the_predicates_and_times_chosen_are_drawn_cut_to_the_stretch() {
        let text = "safe(d2) [4,6)\nsafe(d1) [2,7)\ntrusted(d1) [4,7)\nsafe(d2) [9,12)\n";
        let select = Select {
            predicates: vec!["safe".to_owned()],
            from: Some(5),
            until: Some(9),
        };
        let some = timeline(text, "t", 10, &select).unwrap_or_else(|_| panic!("reads"));
        let rows: Vec<(&str, &[(u64, u64)])> = (some.rows.iter())
            .map(|r| (r.atom.as_str(), &r.intervals[..]))
            .collect();
        assert_eq!(
            rows,
            [
                ("safe(d2)", &[(5, 6), (9, 10)][..]),
                ("safe(d1)", &[(5, 7)][..])
            ]
        );
        assert_eq!(some.span, (5, 10));
    }
}
