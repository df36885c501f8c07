//! The markdown report of a sweep: where and how it ran, a table of medians, the charts.

use std::fmt::Write as _;

use crate::plot::Drawn;
use crate::sweep::Row;

/// Where a sweep ran, for the report's header.
#[derive(Clone, Debug)]
pub struct Machine {
    pub host: String,
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_gib: f64,
}

impl Machine {
    /// `host — N CPUs (model), M GiB`.
    pub fn describe(&self) -> String {
        format!(
            "{} — {} CPUs ({}), {:.0} GiB",
            self.host, self.cpus, self.cpu_model, self.memory_gib
        )
    }

    /// This machine, from `/proc` where it is there.
    pub fn this() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or_else(|| "unknown CPU".to_owned(), |(_, m)| m.trim().to_owned());
        let memory_kib: f64 = std::fs::read_to_string("/proc/meminfo")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|l| l.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0);
        Machine {
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map_or_else(|_| "unknown host".to_owned(), |h| h.trim().to_owned()),
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            cpu_model,
            memory_gib: memory_kib / (1024.0 * 1024.0),
        }
    }
}

/// Where, when and how a sweep ran; kept in `meta.txt` beside the results, so that a
/// report redrawn later (`stgflow-bench replot`) still names the original run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub command: String,
    pub date: String,
    pub machine: String,
    /// What the stgflow binary says of itself (`stgflow --version`) and the commit of the
    /// checkout it ran in, if known.
    pub stgflow: Option<String>,
    pub commit: Option<String>,
    /// stgflow's output mode for every run.
    pub output: Option<String>,
}

impl Header {
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "command: {}\ndate: {}\nmachine: {}\n",
            self.command, self.date, self.machine
        );
        for (name, value) in self.optional() {
            let _ = writeln!(text, "{name}: {value}");
        }
        text
    }

    /// The fields a sweep before they were recorded does not have.
    fn optional(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("stgflow", &self.stgflow),
            ("commit", &self.commit),
            ("output mode", &self.output),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name, value.as_deref()?)))
    }

    pub fn from_text(text: &str) -> Option<Header> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(str::to_owned)
        };
        Some(Header {
            command: field("command")?,
            date: field("date")?,
            machine: field("machine")?,
            stgflow: field("stgflow"),
            commit: field("commit"),
            output: field("output mode"),
        })
    }
}

/// The report's markdown.
pub fn markdown(
    header: &Header,
    medians: &[Row],
    drawn: &[Drawn],
    program: Option<&str>,
) -> String {
    let mut text = String::from("# stgflow sweep\n\n");
    let _ = writeln!(text, "- command: `{}`", header.command);
    let _ = writeln!(text, "- date: {}", header.date);
    let _ = writeln!(text, "- machine: {}", header.machine);
    for (name, value) in header.optional() {
        let _ = writeln!(text, "- {name}: {value}");
    }
    text.push_str("- every run: `stgflow run PROGRAM STREAM --mode MODE -q` (`--output`, `changes` unless the command says otherwise), output discarded (batch) or read back per time point (streaming); raw runs in `results.csv`, latency samples in `latencies.csv`\n\n");
    text.push_str("## Medians\n\n");
    text.push_str("| workload | window | rate | time points | workers | processes | input | runs | input facts | wall s | CPU s | peak RSS MiB | M facts/s | latency p50 µs | p99 µs |\n");
    text.push_str("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in medians {
        let dash = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{v:.0}"));
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.1} | {:.3} | {} | {} |",
            row.workload.display_name(program),
            if row.workload.has_window() {
                row.window.to_string()
            } else {
                "–".into()
            },
            if row.workload.has_rate() {
                row.rate.to_string()
            } else {
                "–".into()
            },
            if row.workload.has_length() {
                row.length.to_string()
            } else {
                "–".into()
            },
            row.workers,
            row.processes,
            row.mode.name(),
            row.repeat,
            row.input_facts,
            row.usage.wall.as_secs_f64(),
            row.usage.cpu.as_secs_f64(),
            row.usage.peak_rss_kib as f64 / 1024.0,
            row.facts_per_s() / 1e6,
            dash(row.latency_p50_us),
            dash(row.latency_p99_us),
        );
    }
    text.push_str("\n## Charts\n\n");
    if drawn.iter().any(|d| matches!(d, Drawn::Written { .. })) {
        text.push_str("Each point is the median of its runs; an error bar spans their minimum and maximum.\n\n");
    }
    for entry in drawn {
        match entry {
            Drawn::Written { chart, files } => {
                // A picture markdown shows: the SVG or PNG, not the PDF.
                let shown = (files.iter())
                    .find(|f| f.extension().is_none_or(|e| e != "pdf"))
                    .or(files.first());
                let file = shown.and_then(|f| f.file_name()).map_or_else(
                    || format!("{}.svg", chart.stem),
                    |f| f.to_string_lossy().into_owned(),
                );
                let _ = writeln!(
                    text,
                    "### {}\n\n![{}](plots/{file})\n",
                    chart.title, chart.title
                );
            }
            Drawn::Skipped { stem, why } => {
                let _ = writeln!(text, "- `{stem}` not drawn: {why}.");
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Usage;
    use crate::sweep::InputMode;
    use crate::workload::Workload;
    use std::time::Duration;

    #[test]
    fn the_table_has_a_row_per_median_and_skips_are_explained() {
        let row = Row {
            workload: Workload::Tick,
            window: 0,
            rate: 0,
            length: 100,
            workers: 2,
            processes: 1,
            mode: InputMode::Streaming,
            repeat: 3,
            input_facts: 100,
            usage: Usage {
                wall: Duration::from_millis(10),
                cpu: Duration::from_millis(15),
                peak_rss_kib: 4096,
            },
            latency_p50_us: Some(120.4),
            latency_p99_us: Some(900.0),
            latencies_us: vec![],
        };
        let machine = Machine {
            host: "h".into(),
            cpus: 2,
            cpu_model: "cpu".into(),
            memory_gib: 24.0,
        };
        let drawn = [Drawn::Skipped {
            stem: "throughput_vs_window".into(),
            why: "the grid has fewer than two window sizes".into(),
        }];
        let header = Header {
            command: "stgflow-bench sweep".into(),
            date: "2026-11-30".into(),
            machine: machine.describe(),
            stgflow: Some("stgflow 0.1.0".into()),
            commit: Some("86a35d7".into()),
            output: Some("changes".into()),
        };
        assert_eq!(Header::from_text(&header.to_text()), Some(header.clone()));
        // A meta.txt from before these fields were recorded still reads.
        let old = "command: c\ndate: d\nmachine: m\n";
        let read = Header::from_text(old).unwrap_or_else(|| panic!("an old meta.txt"));
        assert_eq!((read.stgflow, read.commit, read.output), (None, None, None));
        let mut own = row.clone();
        own.workload = Workload::Own;
        let text = markdown(&header, &[row, own], &drawn, Some("mine.tdl"));
        assert!(text.contains("| mine.tdl | – | – | – | 2 |"), "{text}");
        assert!(text.contains("| tick | – | – | 100 | 2 | 1 | streaming | 3 | 100 | 0.010 | 0.015 | 4.0 | 0.010 | 120 | 900 |"), "{text}");
        assert!(text.contains(
            "- `throughput_vs_window` not drawn: the grid has fewer than two window sizes."
        ));
        assert!(text.contains("h — 2 CPUs (cpu), 24 GiB"));
        assert!(
            text.contains("- commit: 86a35d7\n- output mode: changes\n"),
            "{text}"
        );
    }
}
