//! Plots of a sweep (plotters; each chart as SVG, PNG and PDF, or as asked): throughput vs
//! workers, vs window size, vs stream length; the latency CDF; memory vs stream length;
//! the speedup, parallel efficiency and CPU time vs workers of a scaling experiment.
//!
//! Drawn to be put in a paper: worker counts on a log₂ axis, window sizes as categories,
//! stream lengths and latencies on log₁₀ axes ticked at 1, 2 and 5 × 10ᵏ, so that every
//! tick label is a round number; each point the median of its repeats with an error bar
//! from their minimum to their maximum; Okabe and Ito's colour-blind-safe palette (no
//! yellow) with a distinct marker per series, for print in grey; the legend beside the
//! plot, never over the data.
//!
//! A chart is drawn only when some series has at least two x values (a grid with one
//! worker count has no throughput-vs-workers chart); [`draw_all`] says which charts it
//! skipped and why.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use stgflow_io::draw;

use crate::sweep::{self, InputMode, Row};

/// How a chart's x values are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum XAxis {
    /// Counts that double (workers): log₂, ticked at powers of two and at every count
    /// measured.
    Log2,
    /// Values spanning decades: log₁₀, ticked at 1, 2 and 5 × 10ᵏ.
    Log10,
    /// Categories in this order, evenly spaced (window sizes); a point's x is its
    /// category's index.
    Categories(Vec<String>),
}

/// A point: the median `y` and the range of its repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub low: f64,
    pub high: f64,
}

/// A line chart: named series of points.
#[derive(Clone, Debug)]
pub struct Chart {
    /// File stem: the chart is written as `STEM.svg`, `STEM.png` and `STEM.pdf`.
    pub stem: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_axis: XAxis,
    pub series: Vec<(String, Vec<Point>)>,
}

/// A picture format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
    /// For papers: vector, its text in the bundled font.
    Pdf,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "svg" => Ok(Format::Svg),
            "png" => Ok(Format::Png),
            "pdf" => Ok(Format::Pdf),
            other => Err(format!(
                "unknown picture format `{other}` (svg, png or pdf)"
            )),
        }
    }
}

/// What to draw, and how large.
#[derive(Clone, Debug)]
pub struct Options {
    /// Width and height in pixels, legend included.
    pub size: (u32, u32),
    pub formats: Vec<Format>,
    /// Only these charts (by stem); every chart when `None`.
    pub only: Option<Vec<String>>,
    /// The `own` workload's program, by which its series are named.
    pub program: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size: (960, 540),
            formats: vec![Format::Svg, Format::Png, Format::Pdf],
            only: None,
            program: None,
        }
    }
}

/// The stems of every chart a sweep can have, in the order they are drawn.
pub const STEMS: [&str; 8] = [
    "throughput_vs_workers",
    "throughput_vs_window",
    "throughput_vs_length",
    "memory_vs_length",
    "latency_cdf",
    "speedup_vs_workers",
    "efficiency_vs_workers",
    "cpu_vs_workers",
];

/// A chart that was written, or why it was not.
#[derive(Clone, Debug)]
pub enum Drawn {
    Written { chart: Chart, files: Vec<PathBuf> },
    Skipped { stem: String, why: String },
}

/// Draws every chart the sweep's runs support (or those `options.only` names) into
/// `dir`.
pub fn draw_all(rows: &[Row], dir: &Path, options: &Options) -> anyhow::Result<Vec<Drawn>> {
    if let Some(only) = &options.only
        && let Some(unknown) = only.iter().find(|s| !STEMS.contains(&s.as_str()))
    {
        bail!(
            "no plot named `{unknown}`; the plots are {}",
            STEMS.join(", ")
        );
    }
    if options.formats.is_empty() {
        bail!("no picture format asked for (svg, png, pdf)");
    }
    std::fs::create_dir_all(dir)?;
    let groups = sweep::repeats(rows);
    let points: Vec<Measured<'_>> = groups
        .iter()
        .map(|group| Measured {
            median: sweep::median_of(group),
            repeats: group,
        })
        .collect();
    let mut drawn = Vec::new();
    let program = options.program.as_deref();
    for (chart, needs) in charts(&points, program) {
        let wanted = options
            .only
            .as_ref()
            .is_none_or(|only| only.contains(&chart.stem));
        if !wanted {
            continue;
        }
        if chart.series.iter().any(|(_, points)| points.len() >= 2) {
            let files = draw(&chart, dir, options)?;
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

/// A grid point: the median of its runs, and the runs.
struct Measured<'a> {
    median: Row,
    repeats: &'a [&'a Row],
}

/// The charts of a sweep, each with what it needs two of.
/// Over 100 lines: a table of chart definitions, one literal each.
fn charts(points: &[Measured<'_>], program: Option<&str>) -> Vec<(Chart, &'static str)> {
    let label = |row: &Row, parameters: &[&str]| label(row, parameters, program);
    let batch: Vec<&Measured<'_>> = points
        .iter()
        .filter(|p| p.median.mode == InputMode::Batch)
        .collect();
    let windowed: Vec<&Measured<'_>> = batch
        .iter()
        .copied()
        .filter(|p| p.median.workload.has_window())
        .collect();
    let streaming: Vec<&Row> = points
        .iter()
        .map(|p| &p.median)
        .filter(|r| r.mode == InputMode::Streaming && !r.latencies_us.is_empty())
        .collect();
    let mfacts = |r: &Row| r.facts_per_s() / 1e6;
    // With several process counts, a series is a fixed number of workers per process and
    // x counts all workers; otherwise a series is a fixed process count.
    let several_process_counts = batch.iter().any(|p| {
        batch
            .iter()
            .any(|o| o.median.processes != p.median.processes)
    });
    let windows: Vec<u64> = windowed
        .iter()
        .map(|p| p.median.window)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let window_index = |r: &Row| windows.iter().position(|&w| w == r.window).unwrap_or(0) as f64;
    let by_workers = |r: &Row| match (several_process_counts, r.processes) {
        (true, _) => format!(
            "{}, {}",
            label(r, &["window", "rate", "length"]),
            count(r.workers, "worker per process", "workers per process")
        ),
        (false, 1) => label(r, &["window", "rate", "length"]),
        (false, p) => format!(
            "{}, {}",
            label(r, &["window", "rate", "length"]),
            count(p, "process", "processes")
        ),
    };
    let all_workers = |r: &Row| (r.workers * r.processes) as f64;
    let throughput = series(&batch, by_workers, all_workers, mfacts);
    vec![
        (
            Chart {
                stem: STEMS[0].into(),
                title: "Throughput vs workers (batch, median)".into(),
                x_label: "workers (all processes)".into(),
                y_label: "input facts/s (millions)".into(),
                x_axis: XAxis::Log2,
                series: throughput.clone(),
            },
            "worker counts",
        ),
        (
            Chart {
                stem: STEMS[1].into(),
                title: "Throughput vs window size (batch, median)".into(),
                x_label: "window size (time points)".into(),
                y_label: "input facts/s (millions)".into(),
                x_axis: XAxis::Categories(windows.iter().map(u64::to_string).collect()),
                series: series(
                    &windowed,
                    |r| label(r, &["workers", "rate", "length"]),
                    window_index,
                    mfacts,
                ),
            },
            "window sizes",
        ),
        (
            Chart {
                stem: STEMS[2].into(),
                title: "Throughput vs stream length (batch, median)".into(),
                x_label: "time points".into(),
                y_label: "input facts/s (millions)".into(),
                x_axis: XAxis::Log10,
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
                stem: STEMS[3].into(),
                title: "Peak RSS vs stream length (batch, median)".into(),
                x_label: "input facts".into(),
                y_label: "peak RSS (MiB)".into(),
                x_axis: XAxis::Log10,
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
                stem: STEMS[4].into(),
                title: "Per-time-point output latency (streaming)".into(),
                x_label: "latency (ms)".into(),
                y_label: "fraction of time points".into(),
                x_axis: XAxis::Log10,
                series: streaming
                    .iter()
                    .map(|r| {
                        (
                            label(r, &["window", "rate", "length", "workers"]),
                            cdf_ms(&r.latencies_us),
                        )
                    })
                    .collect(),
            },
            "latency samples",
        ),
        (
            Chart {
                stem: STEMS[5].into(),
                title: "Speedup vs workers (batch, median)".into(),
                x_label: "workers (all processes)".into(),
                y_label: "throughput ÷ throughput at the fewest workers".into(),
                x_axis: XAxis::Log2,
                series: relative(&throughput, false),
            },
            "worker counts",
        ),
        (
            Chart {
                stem: STEMS[6].into(),
                title: "Parallel efficiency vs workers (batch, median)".into(),
                x_label: "workers (all processes)".into(),
                y_label: "speedup ÷ workers added (1 = linear)".into(),
                x_axis: XAxis::Log2,
                series: relative(&throughput, true),
            },
            "worker counts",
        ),
        (
            Chart {
                stem: STEMS[7].into(),
                title: "CPU time vs workers (batch, median)".into(),
                x_label: "workers (all processes)".into(),
                y_label: "CPU time, all threads (s)".into(),
                x_axis: XAxis::Log2,
                series: series(&batch, by_workers, all_workers, |r| {
                    r.usage.cpu.as_secs_f64()
                }),
            },
            "worker counts",
        ),
    ]
}

/// Each series of throughput against workers as a speedup over its point with the fewest
/// workers, or with `per_worker`, that speedup divided by the factor of workers added
/// (parallel efficiency: 1 where throughput grows as the workers do).
fn relative(throughput: &[(String, Vec<Point>)], per_worker: bool) -> Vec<(String, Vec<Point>)> {
    (throughput.iter())
        .filter_map(|(name, points)| {
            let base = *points.first()?;
            let scaled = (points.iter())
                .map(|p| {
                    let factor = match per_worker {
                        true => base.y.max(1e-12) * (p.x / base.x),
                        false => base.y.max(1e-12),
                    };
                    Point {
                        x: p.x,
                        y: p.y / factor,
                        low: p.low / factor,
                        high: p.high / factor,
                    }
                })
                .collect();
            Some((name.clone(), scaled))
        })
        .collect()
}

/// `n` with its noun: "1 worker", "4 workers".
fn count(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// The series name of a row: the workload (one's own by its program's name) and the
/// named parameters, each spelt out.
fn label(row: &Row, parameters: &[&str], program: Option<&str>) -> String {
    let mut text = row.workload.display_name(program);
    for &parameter in parameters {
        let part = match parameter {
            "window" if row.workload.has_window() => format!(", window {}", row.window),
            "rate" if row.workload.has_rate() => format!(", {} facts per point", row.rate),
            "length" if row.workload.has_length() => format!(", {} points", row.length),
            "workers" if row.processes > 1 => format!(
                ", {} × {}",
                count(row.processes, "process", "processes"),
                count(row.workers, "worker", "workers")
            ),
            "workers" => format!(", {}", count(row.workers, "worker", "workers")),
            _ => continue,
        };
        text.push_str(&part);
    }
    text
}

/// Groups grid points by `name`, each group's points sorted by x, each point the median's
/// `y` with the range of its repeats' `y`.
fn series(
    points: &[&Measured<'_>],
    name: impl Fn(&Row) -> String,
    x: impl Fn(&Row) -> f64,
    y: impl Fn(&Row) -> f64,
) -> Vec<(String, Vec<Point>)> {
    let mut groups: Vec<(String, Vec<Point>)> = Vec::new();
    for measured in points {
        let row = &measured.median;
        let (low, high) = bounds(measured.repeats.iter().map(|r| y(r)));
        let point = Point {
            x: x(row),
            y: y(row),
            low,
            high,
        };
        let name = name(row);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => groups.push((name, vec![point])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, points) in &mut groups {
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        points.dedup_by(|a, b| a.x == b.x);
    }
    groups
}

/// The empirical CDF of latency `samples` (µs), in ms, at most 200 steps.
fn cdf_ms(samples: &[f64]) -> Vec<Point> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let step = n.div_ceil(200).max(1);
    let point = |us: f64, y: f64| Point {
        x: us.max(1.0) / 1000.0,
        y,
        low: y,
        high: y,
    };
    let mut points: Vec<Point> = (0..n)
        .step_by(step)
        .map(|i| point(sorted[i], (i + 1) as f64 / n as f64))
        .collect();
    if let Some(&last) = sorted.last() {
        points.push(point(last, 1.0));
    }
    points
}

/// Writes `chart` into `dir` in each of `options.formats`.
pub fn draw(chart: &Chart, dir: &Path, options: &Options) -> anyhow::Result<Vec<PathBuf>> {
    draw::register_font();
    let size = (options.size.0.max(320), options.size.1.max(200));
    let mut files = Vec::new();
    for &format in &options.formats {
        let (file, drawn) = match format {
            Format::Svg => {
                let file = dir.join(format!("{}.svg", chart.stem));
                let drawn = render(SVGBackend::new(&file, size).into_drawing_area(), chart)
                    .map_err(|e| e.to_string());
                (file, drawn)
            }
            Format::Png => {
                let file = dir.join(format!("{}.png", chart.stem));
                let drawn = render(BitMapBackend::new(&file, size).into_drawing_area(), chart)
                    .map_err(|e| e.to_string());
                (file, drawn)
            }
            Format::Pdf => {
                // plotters has no PDF backend: its SVG is converted (svg2pdf).
                let file = dir.join(format!("{}.pdf", chart.stem));
                let mut svg = String::new();
                let drawn = render(
                    SVGBackend::with_string(&mut svg, size).into_drawing_area(),
                    chart,
                )
                .map_err(|e| e.to_string())
                .and_then(|()| pdf_of(&svg))
                .and_then(|pdf| std::fs::write(&file, pdf).map_err(|e| e.to_string()));
                (file, drawn)
            }
        };
        drawn.map_err(|e| anyhow!("drawing {}: {e}", file.display()))?;
        files.push(file);
    }
    Ok(files)
}

/// `svg` as a one-page PDF, its text set in the bundled font (a fresh machine may have no
/// fonts installed, and the SVG asks for `sans-serif`).
fn pdf_of(svg: &str) -> Result<Vec<u8>, String> {
    let mut options = svg2pdf::usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(draw::font().to_vec());
    fonts.set_sans_serif_family(draw::FONT_FAMILY);
    let tree = svg2pdf::usvg::Tree::from_str(svg, &options).map_err(|e| e.to_string())?;
    let conversion = svg2pdf::ConversionOptions::default();
    svg2pdf::to_pdf(&tree, conversion, svg2pdf::PageOptions::default()).map_err(|e| e.to_string())
}

/// Where a value sits on the axis (log axes are drawn in log space).
fn to_axis(axis: &XAxis, x: f64) -> f64 {
    match axis {
        XAxis::Log2 => x.max(1e-9).log2(),
        XAxis::Log10 => x.max(1e-9).log10(),
        XAxis::Categories(_) => x,
    }
}

/// The axis's range (in axis space) and its ticks, for these data x values.
fn x_ticks(axis: &XAxis, xs: &[f64]) -> (f64, f64, Vec<f64>) {
    if let XAxis::Categories(names) = axis {
        let n = names.len().max(1) as f64;
        return (-0.5, n - 0.5, (0..names.len()).map(|i| i as f64).collect());
    }
    let (mut lo, mut hi) = bounds(xs.iter().map(|&x| to_axis(axis, x)));
    let pad = if hi > lo { (hi - lo) * 0.06 } else { 0.5 };
    lo -= pad;
    hi += pad;
    let ticks = match axis {
        XAxis::Log2 => {
            let mut ticks: BTreeSet<u64> = (0..40)
                .map(|k| 1u64 << k)
                .filter(|&v| (lo..=hi).contains(&(v as f64).log2()))
                .collect();
            // Counts measured between powers of two (3, 6, 12) get ticks of their own,
            // unless they would crowd the axis.
            let measured: BTreeSet<u64> = xs.iter().map(|&x| x.round().max(1.0) as u64).collect();
            if ticks.len() + measured.len() <= 12 {
                ticks.extend(measured);
            }
            ticks.into_iter().map(|v| (v as f64).log2()).collect()
        }
        _ => decade_ticks(10f64.powf(lo), 10f64.powf(hi))
            .into_iter()
            .map(f64::log10)
            .collect(),
    };
    (lo, hi, ticks)
}

/// Round values in `[lo, hi]` (positive) for a log₁₀ axis: 1, 2 and 5 × 10ᵏ, only the
/// powers of ten where those crowd it, 1–9 × 10ᵏ where the range is too short for two.
fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let within = |multiples: &[f64]| -> Vec<f64> {
        let first = lo.max(1e-300).log10().floor() as i32;
        let last = hi.max(1e-300).log10().ceil() as i32;
        (first..=last)
            .flat_map(|k| multiples.iter().map(move |m| m * 10f64.powi(k)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let ticks = within(&[1.0, 2.0, 5.0]);
    if ticks.len() > 12 {
        within(&[1.0])
    } else if ticks.len() < 2 {
        within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        ticks
    }
}

/// A linear f64 axis ticked exactly at `ticks` (plotters' own `with_key_points` over
/// f64 takes no label formatter).
struct Ticked {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = (self.range.end - self.range.start).max(1e-12);
        let t = (value - self.range.start) / span;
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// The label of an x tick (given in axis space).
fn x_label(axis: &XAxis, v: f64) -> String {
    match axis {
        XAxis::Log2 => format!("{}", 2f64.powf(v).round()),
        XAxis::Log10 => short_number(10f64.powf(v)),
        XAxis::Categories(names) => {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
    }
}

/// A marker per series, so that series stay apart in grey too: a polygon around the
/// point (a circle, a square, a triangle, a diamond), in pixels.
fn marker(i: usize) -> Vec<(i32, i32)> {
    match i % 4 {
        0 => (0..12)
            .map(|k| {
                let a = f64::from(k) * std::f64::consts::PI / 6.0;
                (
                    (4.5 * a.cos()).round() as i32,
                    (4.5 * a.sin()).round() as i32,
                )
            })
            .collect(),
        1 => vec![(-4, -4), (4, -4), (4, 4), (-4, 4)],
        2 => vec![(0, -5), (5, 4), (-5, 4)],
        _ => vec![(0, -5), (5, 0), (0, 5), (-5, 0)],
    }
}

/// Series with more points than this (a CDF) are drawn without markers.
const MOST_MARKERS: usize = 40;

/// Over 100 lines: the axes, the series with their error bars and markers, and the
/// legend, each a few plotters calls.
fn render<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (width, height) = root.dim_in_pixel();
    // The legend gets a column of its own, as wide as its longest name needs (at most
    // two fifths of the picture).
    let longest = chart
        .series
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let legend_width = (longest * 7 + 48).clamp(120, width * 2 / 5);
    let (plot_area, legend_area) = root.split_horizontally(width - legend_width);
    let axis = &chart.x_axis;
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.x))
        .collect();
    let (x0, x1, ticks) = x_ticks(axis, &xs);
    let (_, y_max) = bounds(
        chart
            .series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.high.max(p.y))),
    );
    let y1 = if y_max <= 0.0 { 1.0 } else { y_max * 1.1 };
    let mut plot = ChartBuilder::on(&plot_area)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(
            Ticked {
                range: x0..x1,
                ticks,
            },
            0.0..y1,
        )?;
    let x_format = |v: &f64| x_label(axis, *v);
    let y_format = |v: &f64| short_number(*v);
    plot.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .y_labels(8)
        .bold_line_style(RGBColor(220, 220, 220))
        .light_line_style(TRANSPARENT)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()?;
    for (i, (_, data)) in chart.series.iter().enumerate() {
        let colour = draw::colour(i);
        let data: Vec<(f64, Point)> = data.iter().map(|p| (to_axis(axis, p.x), *p)).collect();
        plot.draw_series(LineSeries::new(
            data.iter().map(|&(x, p)| (x, p.y)),
            colour.stroke_width(2),
        ))?;
        plot.draw_series(
            data.iter()
                .filter(|(_, p)| p.high > p.low)
                .map(|&(x, p)| ErrorBar::new_vertical(x, p.low, p.y, p.high, colour.filled(), 8)),
        )?;
        // A CDF's hundreds of steps would be a smear of markers: a marker for a measured
        // point only.
        let markers = if data.len() <= MOST_MARKERS {
            &data[..]
        } else {
            &[]
        };
        plot.draw_series(
            markers.iter().map(|&(x, p)| {
                EmptyElement::at((x, p.y)) + Polygon::new(marker(i), colour.filled())
            }),
        )?;
    }
    // The legend: a line and a marker per series, names beside them, top to bottom.
    let row = 20;
    let fits = ((height.saturating_sub(60)) / row).max(1) as usize;
    for (i, (name, _)) in chart.series.iter().enumerate().take(fits) {
        let y = 50 + (i as i32) * row as i32;
        let colour = draw::colour(i);
        legend_area.draw(&PathElement::new(
            vec![(8, y), (32, y)],
            colour.stroke_width(2),
        ))?;
        legend_area
            .draw(&(EmptyElement::at((20, y)) + Polygon::new(marker(i), colour.filled())))?;
        legend_area.draw(&Text::new(
            name.clone(),
            (40, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    if chart.series.len() > fits {
        let y = 50 + (fits as i32) * row as i32;
        legend_area.draw(&Text::new(
            format!("… {} more", chart.series.len() - fits),
            (8, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
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

    /// Every tick of a log axis is a round number: its label has one significant digit.
    #[test]
    fn log_axes_are_ticked_at_round_numbers() {
        let (_, _, ticks) = x_ticks(&XAxis::Log10, &[1000.0, 10_000.0, 100_000.0]);
        let labels: Vec<String> = ticks.iter().map(|&t| x_label(&XAxis::Log10, t)).collect();
        assert_eq!(
            labels,
            ["1k", "2k", "5k", "10k", "20k", "50k", "100k"],
            "{ticks:?}"
        );
        // Six decades: only the powers of ten.
        let (_, _, ticks) = x_ticks(&XAxis::Log10, &[1.0, 1e6]);
        let labels: Vec<String> = ticks.iter().map(|&t| x_label(&XAxis::Log10, t)).collect();
        assert_eq!(labels, ["1", "10", "100", "1k", "10k", "100k", "1M"]);
        // Less than a factor of two: 1–9 × 10ᵏ.
        assert_eq!(decade_ticks(3100.0, 4900.0), [4000.0]);
        assert_eq!(decade_ticks(2500.0, 4500.0), [3000.0, 4000.0]);
        let (_, _, ticks) = x_ticks(&XAxis::Log2, &[1.0, 2.0, 4.0, 8.0, 16.0]);
        let labels: Vec<String> = ticks.iter().map(|&t| x_label(&XAxis::Log2, t)).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16"]);
        let (_, _, ticks) = x_ticks(&XAxis::Log2, &[1.0, 3.0, 12.0]);
        let labels: Vec<String> = ticks.iter().map(|&t| x_label(&XAxis::Log2, t)).collect();
        assert_eq!(labels, ["1", "2", "3", "4", "8", "12"]);
        let windows = XAxis::Categories(vec!["10".into(), "100".into(), "1000".into()]);
        let (lo, hi, ticks) = x_ticks(&windows, &[0.0, 2.0]);
        assert_eq!((lo, hi), (-0.5, 2.5));
        let labels: Vec<String> = ticks.iter().map(|&t| x_label(&windows, t)).collect();
        assert_eq!(labels, ["10", "100", "1000"]);
    }

    #[test]
    fn cdf_ends_at_one_and_rises_in_ms() {
        let samples: Vec<f64> = (1..=1000).map(f64::from).collect();
        let points = cdf_ms(&samples);
        assert!(points.len() <= 202);
        assert_eq!(points.last().unwrap().y, 1.0);
        assert_eq!(points.last().unwrap().x, 1.0);
        assert!(
            points
                .windows(2)
                .all(|w| w[0].x <= w[1].x && w[0].y <= w[1].y)
        );
    }

    #[test]
    fn a_chart_renders_to_svg_png_and_pdf() {
        let dir = std::env::temp_dir().join(format!("stgflow-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let point = |x: f64, y: f64| Point {
            x,
            y,
            low: y * 0.9,
            high: y * 1.2,
        };
        let chart = Chart {
            stem: "t".into(),
            title: "test".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_axis: XAxis::Log10,
            series: vec![("series a".into(), vec![point(1.0, 2.0), point(100.0, 3.0)])],
        };
        let files = draw(&chart, &dir, &Options::default()).unwrap();
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("<text") && svg.contains("test"),
            "{svg:.200}"
        );
        assert!(svg.contains("series a"), "the legend names the series");
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(files[2], dir.join("t.pdf"));
        let pdf = std::fs::read(&files[2]).unwrap();
        assert!(pdf.starts_with(b"%PDF-"));
        let embedded = |name: &[u8]| pdf.windows(name.len()).any(|w| w == name);
        assert!(
            embedded(b"DejaVuSans"),
            "the text is set in the bundled font"
        );
        let only_svg = Options {
            size: (400, 300),
            formats: vec![Format::Svg],
            ..Options::default()
        };
        let files = draw(&chart, &dir, &only_svg).unwrap();
        assert_eq!(files, [dir.join("t.svg")]);
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains(r#"width="400" height="300""#), "{svg:.200}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Speedup is over the series' point with the fewest workers, efficiency that divided
    /// by the workers added; legends spell out what they name, one's own program by name.
    #[test]
    fn speedup_and_efficiency_are_relative_to_the_fewest_workers() {
        let point = |x: f64, y: f64| Point {
            x,
            y,
            low: y,
            high: y,
        };
        let points = vec![point(1.0, 2.0), point(2.0, 3.0), point(4.0, 4.0)];
        let throughput = vec![("a".to_owned(), points)];
        let speedup: Vec<f64> = relative(&throughput, false)[0]
            .1
            .iter()
            .map(|p| p.y)
            .collect();
        assert_eq!(speedup, [1.0, 1.5, 2.0]);
        let efficiency: Vec<f64> = relative(&throughput, true)[0]
            .1
            .iter()
            .map(|p| p.y)
            .collect();
        assert_eq!(efficiency, [1.0, 0.75, 0.5]);

        let mut row = crate::sweep::Row {
            workload: crate::workload::Workload::Diamond,
            window: 10,
            rate: 100,
            length: 1000,
            workers: 1,
            processes: 1,
            mode: InputMode::Batch,
            repeat: 0,
            input_facts: 1,
            usage: crate::measure::Usage {
                wall: std::time::Duration::from_millis(1),
                cpu: std::time::Duration::from_millis(1),
                peak_rss_kib: 1,
            },
            latency_p50_us: None,
            latency_p99_us: None,
            latencies_us: Vec::new(),
        };
        let named = label(&row, &["window", "workers"], None);
        assert_eq!(named, "diamond, window 10, 1 worker");
        row.workload = crate::workload::Workload::Own;
        row.workers = 4;
        assert_eq!(
            label(&row, &["window", "workers"], Some("mine.tdl")),
            "mine.tdl, 4 workers"
        );
    }
}
