//! Plots of a sweep (plotters; each chart as SVG and PNG): throughput vs workers, vs
//! window size, vs stream length; the latency CDF; memory vs stream length.
//!
//! Each chart is drawn from the medians of the repeats. A chart is drawn only when some
//! series has at least two x values (a grid with one worker count has no
//! throughput-vs-workers chart); [`draw_all`] says which charts it skipped and why.
//!
//! Pitfall: plotters needs a font to lay out text, and a fresh machine may have none
//! installed. The harness carries DejaVu Sans (`assets/`, its licence beside it) and
//! registers it as `sans-serif`, so charts look the same everywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::sweep::{InputMode, Row};

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The bundled font is a valid TrueType file; a failure here would only leave the
        // charts without text, which `draw` then reports as an error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// A line chart: named series of (x, y) points.
#[derive(Clone, Debug)]
pub struct Chart {
    /// File stem: the chart is written as `STEM.svg` and `STEM.png`.
    pub stem: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Plot x on a log₁₀ axis (for values spanning decades).
    pub log_x: bool,
    /// x takes whole values only (workers, window sizes): label only those.
    pub integer_x: bool,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// A chart that was written, or why it was not.
#[derive(Clone, Debug)]
pub enum Drawn {
    Written { chart: Chart, files: Vec<PathBuf> },
    Skipped { stem: String, why: String },
}

/// Draws every chart the sweep's `medians` support into `dir`.
pub fn draw_all(medians: &[Row], dir: &Path) -> anyhow::Result<Vec<Drawn>> {
    std::fs::create_dir_all(dir)?;
    let mut drawn = Vec::new();
    for (chart, needs) in charts(medians) {
        if chart.series.iter().any(|(_, points)| points.len() >= 2) {
            let files = draw(&chart, dir)?;
            drawn.push(Drawn::Written { chart, files });
        } else {
            drawn.push(Drawn::Skipped {
                stem: chart.stem,
                why: format!("the grid has fewer than two {needs}"),
            });
        }
    }
    Ok(drawn)
}

/// The charts of a sweep, each with what it needs two of.
/// Over 100 lines: a table of chart definitions, one literal each.
fn charts(medians: &[Row]) -> Vec<(Chart, &'static str)> {
    let batch: Vec<&Row> = medians
        .iter()
        .filter(|r| r.mode == InputMode::Batch)
        .collect();
    let streaming: Vec<&Row> = medians
        .iter()
        .filter(|r| r.mode == InputMode::Streaming)
        .collect();
    let mfacts = |r: &Row| r.facts_per_s() / 1e6;
    // With several process counts, a series is a fixed number of workers per process and
    // x counts all workers; otherwise a series is a fixed process count.
    let several_process_counts = batch
        .iter()
        .any(|r| batch.iter().any(|o| o.processes != r.processes));
    let windows: Vec<f64> = batch
        .iter()
        .filter(|r| r.workload.has_window())
        .map(|r| r.window.max(1) as f64)
        .collect();
    let windows_span_decades = spans_decades(&windows);
    vec![
        (
            Chart {
                stem: "throughput_vs_workers".into(),
                title: "Throughput vs workers (batch, median)".into(),
                x_label: "workers × processes".into(),
                y_label: "input facts/s (millions)".into(),
                log_x: false,
                integer_x: true,
                series: series(
                    &batch,
                    |r| match (several_process_counts, r.processes) {
                        (true, _) => format!(
                            "{}, {} workers per process",
                            label(r, &["window", "rate", "length"]),
                            r.workers
                        ),
                        (false, 1) => label(r, &["window", "rate", "length"]),
                        (false, p) => {
                            format!("{}, {p} processes", label(r, &["window", "rate", "length"]))
                        }
                    },
                    |r| (r.workers * r.processes) as f64,
                    mfacts,
                ),
            },
            "worker counts",
        ),
        (
            Chart {
                stem: "throughput_vs_window".into(),
                title: "Throughput vs window size (batch, median)".into(),
                x_label: "window size (time points)".into(),
                y_label: "input facts/s (millions)".into(),
                log_x: windows_span_decades,
                integer_x: true,
                series: series(
                    &batch
                        .iter()
                        .copied()
                        .filter(|r| r.workload.has_window())
                        .collect::<Vec<_>>(),
                    |r| label(r, &["workers", "rate", "length"]),
                    |r| r.window.max(1) as f64,
                    mfacts,
                ),
            },
            "window sizes",
        ),
        (
            Chart {
                stem: "throughput_vs_length".into(),
                title: "Throughput vs stream length (batch, median)".into(),
                x_label: "time points".into(),
                y_label: "input facts/s (millions)".into(),
                log_x: true,
                integer_x: false,
                series: series(
                    &batch,
                    |r| label(r, &["window", "rate", "workers"]),
                    |r| r.length as f64,
                    mfacts,
                ),
            },
            "stream lengths",
        ),
        (
            Chart {
                stem: "memory_vs_length".into(),
                title: "Peak RSS vs stream length (batch, median)".into(),
                x_label: "input facts".into(),
                y_label: "peak RSS (MiB)".into(),
                log_x: true,
                integer_x: false,
                series: series(
                    &batch,
                    |r| label(r, &["window", "rate", "workers"]),
                    |r| r.input_facts.max(1) as f64,
                    |r| r.usage.peak_rss_kib as f64 / 1024.0,
                ),
            },
            "stream lengths",
        ),
        (
            Chart {
                stem: "latency_cdf".into(),
                title: "Per-time-point output latency (streaming)".into(),
                x_label: "latency (µs)".into(),
                y_label: "fraction of time points".into(),
                log_x: true,
                integer_x: false,
                series: streaming
                    .iter()
                    .filter(|r| !r.latencies_us.is_empty())
                    .map(|r| {
                        (
                            label(r, &["window", "rate", "length", "workers"]),
                            cdf(&r.latencies_us),
                        )
                    })
                    .collect(),
            },
            "latency samples",
        ),
    ]
}

/// Whether positive `values` span two decades or more (then a log axis reads better).
fn spans_decades(values: &[f64]) -> bool {
    let (lo, hi) = bounds(values.iter().copied());
    lo > 0.0 && hi / lo >= 100.0
}

/// The series name of a row: the workload and the named parameters.
fn label(row: &Row, parameters: &[&str]) -> String {
    let mut text = row.workload.name().to_owned();
    for &parameter in parameters {
        let part = match parameter {
            "window" if row.workload.has_window() => format!(" w={}", row.window),
            "rate" if row.workload.has_rate() => format!(" r={}", row.rate),
            "length" if row.workload.has_length() => format!(" L={}", row.length),
            "workers" if row.processes > 1 => format!(" {}w×{}p", row.workers, row.processes),
            "workers" => format!(" {}w", row.workers),
            _ => continue,
        };
        text.push_str(&part);
    }
    text
}

/// Groups rows by `name`, each group's points sorted by x.
fn series(
    rows: &[&Row],
    name: impl Fn(&Row) -> String,
    x: impl Fn(&Row) -> f64,
    y: impl Fn(&Row) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut groups: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for row in rows {
        groups.entry(name(row)).or_default().push((x(row), y(row)));
    }
    groups
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points.dedup_by(|a, b| a.0 == b.0);
            (name, points)
        })
        .collect()
}

/// The empirical CDF of `samples`, at most 200 steps.
fn cdf(samples: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let step = n.div_ceil(200).max(1);
    let mut points: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (sorted[i].max(1.0), (i + 1) as f64 / n as f64))
        .collect();
    if let Some(&last) = sorted.last() {
        points.push((last.max(1.0), 1.0));
    }
    points
}

/// Writes `chart` as SVG and PNG into `dir`.
pub fn draw(chart: &Chart, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    register_font();
    let svg = dir.join(format!("{}.svg", chart.stem));
    let png = dir.join(format!("{}.png", chart.stem));
    let size = (900, 560);
    render(SVGBackend::new(&svg, size).into_drawing_area(), chart)
        .map_err(|e| anyhow!("drawing {}: {e}", svg.display()))?;
    render(BitMapBackend::new(&png, size).into_drawing_area(), chart)
        .map_err(|e| anyhow!("drawing {}: {e}", png.display()))?;
    Ok(vec![svg, png])
}

fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let to_x = |x: f64| if chart.log_x { x.max(1e-9).log10() } else { x };
    let points = || chart.series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1) = bounds(points().map(|p| to_x(p.0)));
    let (_, mut y1) = bounds(points().map(|p| p.1));
    if x0 == x1 {
        x0 -= 1.0;
        x1 += 1.0;
    }
    let pad = (x1 - x0) * 0.05;
    x0 -= pad;
    x1 += pad;
    y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.15 };
    root.fill(&WHITE)?;
    let mut plot = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    let log_x = chart.log_x;
    let integer_x = chart.integer_x;
    let x_format = move |v: &f64| {
        let value = if log_x { 10f64.powf(*v) } else { *v };
        if integer_x && (value - value.round()).abs() > 1e-6 {
            String::new()
        } else {
            short_number(value)
        }
    };
    let y_format = |v: &f64| short_number(*v);
    plot.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    for (i, (name, data)) in chart.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let data: Vec<(f64, f64)> = data.iter().map(|&(x, y)| (to_x(x), y)).collect();
        plot.draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        plot.draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    plot.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()
}

/// The range of `values`; the unit range when there are none.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

/// Three significant digits with a k/M/G suffix: `1500` → `1.5k`, `2000000` → `2M`,
/// `0.0312` → `0.0312`.
fn short_number(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    if scaled == 0.0 {
        return "0".to_owned();
    }
    let decimals = (2 - scaled.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{scaled:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{suffix}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(short_number(1500.0), "1.5k");
        assert_eq!(short_number(15849.0), "15.8k");
        assert_eq!(short_number(2_000_000.0), "2M");
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(0.03125), "0.0312");
        assert_eq!(short_number(3.0), "3");
        assert_eq!(short_number(0.0), "0");
    }

    #[test]
    fn cdf_ends_at_one_and_rises() {
        let samples: Vec<f64> = (1..=1000).map(f64::from).collect();
        let points = cdf(&samples);
        assert!(points.len() <= 202);
        assert_eq!(points.last().unwrap().1, 1.0);
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
        );
    }

    #[test]
    fn a_chart_renders_to_svg_and_png() {
        let dir = std::env::temp_dir().join(format!("stgflow-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = Chart {
            stem: "t".into(),
            title: "test".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            integer_x: false,
            series: vec![("a".into(), vec![(1.0, 2.0), (100.0, 3.0)])],
        };
        let files = draw(&chart, &dir).unwrap();
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("<text") && svg.contains("test"),
            "{svg:.200}"
        );
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
