//! The `stgflow-bench` binary end to end: a tiny sweep grid (CSV rows, plots, report), a
//! loopback cluster point, and `compare` against stand-in peers (shell scripts written
//! here that print known answers and keep the stream they were given).
//!
//! The sweep runs the `stgflow` binary built beside `stgflow-bench` (`cargo test
//! --workspace` builds both).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn harness() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_stgflow-bench"))
}

fn stgflow() -> PathBuf {
    let path = harness().with_file_name("stgflow");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p stgflow-cli` (or `cargo test --workspace`) first",
        path.display()
    );
    path
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stgflow-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

fn bench(args: &[&str]) -> Output {
    Command::new(harness())
        .args(args)
        .arg("--stgflow")
        .arg(stgflow())
        .output()
        .expect("run stgflow-bench")
}

/// `stgflow-bench ARGS` for a subcommand that runs no stgflow (`replot`).
fn replot(args: &[&str]) -> Output {
    Command::new(harness())
        .arg("replot")
        .args(args)
        .output()
        .expect("run stgflow-bench replot")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn csv_rows(path: &Path) -> Vec<Vec<String>> {
    let content = std::fs::read_to_string(path).expect("read the CSV");
    let mut lines = content.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert_eq!(header[0], "workload");
    // The run's 15 columns, then the stgflow version, the commit, the output mode, the
    // machine and one's own program.
    assert_eq!(header.len(), 20);
    assert_eq!(
        header[15..],
        ["stgflow", "commit", "output", "machine", "program"]
    );
    lines
        .map(|line| {
            let fields: Vec<String> = line.split(',').map(str::to_owned).collect();
            assert_eq!(fields.len(), header.len(), "{line}");
            fields
        })
        .collect()
}

#[test]
fn sweep_tiny_grid_writes_every_row_plot_and_the_report() {
    let out = scratch("sweep");
    let out_arg = out.to_string_lossy().into_owned();
    let result = bench(&[
        "sweep",
        "--workload",
        "diamond,tick",
        "--window",
        "1,2",
        "--workers",
        "1,2",
        "--rate",
        "5",
        "--length",
        "10,20",
        "--mode",
        "batch,streaming",
        "--repeat",
        "1",
        "--out",
        &out_arg,
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    // diamond: 2 windows × 2 lengths × 2 modes × 2 worker counts; tick: 2 × 2 × 2.
    assert_eq!(rows.len(), 16 + 8);
    let mut keys: Vec<String> = rows.iter().map(|r| r[..7].join(",")).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 24, "every grid point once");
    for row in &rows {
        let (workload, window, rate, length, mode) = (&row[0], &row[1], &row[2], &row[3], &row[6]);
        let length: u64 = length.parse().unwrap_or(0);
        let expected_facts = if workload == "diamond" {
            assert!(window == "1" || window == "2");
            assert_eq!(rate, "5");
            5 * length
        } else {
            // Written empty: tick has neither.
            assert_eq!((window.as_str(), rate.as_str()), ("", ""));
            length
        };
        assert_eq!(row[8], expected_facts.to_string(), "{row:?}");
        let wall: f64 = row[9].parse().expect("wall seconds");
        let rss: u64 = row[11].parse().expect("peak RSS");
        assert!(wall > 0.0 && rss > 0, "{row:?}");
        // Streaming rows carry latencies (every time point prints a change here).
        assert_eq!(mode == "streaming", !row[13].is_empty(), "{row:?}");
    }
    for stem in [
        "throughput_vs_workers",
        "throughput_vs_window",
        "throughput_vs_length",
        "memory_vs_length",
        "latency_cdf",
        "speedup_vs_workers",
        "efficiency_vs_workers",
        "cpu_vs_workers",
    ] {
        let png = std::fs::read(out.join("plots").join(format!("{stem}.png"))).expect("a PNG");
        assert!(
            png.len() > 1000 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{stem}.png"
        );
        let svg =
            std::fs::read_to_string(out.join("plots").join(format!("{stem}.svg"))).expect("an SVG");
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{stem}.svg");
        let pdf = std::fs::read(out.join("plots").join(format!("{stem}.pdf"))).expect("a PDF");
        assert!(pdf.starts_with(b"%PDF-"), "{stem}.pdf");
    }
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(
        report.contains("| diamond | 2 | 5 | 20 | 2 | 1 | streaming | 1 | 100 |"),
        "{report}"
    );
    assert!(
        report
            .contains("![Throughput vs workers (batch, median)](plots/throughput_vs_workers.svg)")
    );
    let latencies = std::fs::read_to_string(out.join("latencies.csv")).expect("latencies");
    assert!(latencies.lines().count() > 20);
    // replot draws what it is asked for, at the size and in the format asked, and leaves
    // the report whole.
    std::fs::remove_dir_all(out.join("plots")).expect("remove the plots");
    let result = replot(&[
        &out_arg,
        "--only",
        "throughput_vs_workers,latency_cdf",
        "--format",
        "svg",
        "--size",
        "640x400",
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let mut drawn: Vec<String> = std::fs::read_dir(out.join("plots"))
        .expect("the plots")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    drawn.sort();
    assert_eq!(drawn, ["latency_cdf.svg", "throughput_vs_workers.svg"]);
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).expect("the report"),
        report,
        "replot --only rewrote the report"
    );
    let svg = std::fs::read_to_string(out.join("plots").join("throughput_vs_workers.svg"))
        .expect("an SVG");
    assert!(svg.contains(r#"width="640" height="400""#), "{svg:.300}");
    for (args, expected) in [
        (
            &["--only", "throughput"][..],
            "no plot named `throughput`; the plots are throughput_vs_workers,",
        ),
        (&["--size", "10x10"][..], "expected WIDTHxHEIGHT"),
        (&["--format", "gif"][..], "unknown picture format `gif`"),
    ] {
        let result = replot(&[&[out_arg.as_str()][..], args].concat());
        assert!(!result.status.success(), "{args:?}");
        assert!(
            text(&result.stderr).contains(expected),
            "{args:?}: {}",
            text(&result.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `--stgflow-arg` reaches every run (here `--read-on-workers`, and `--stats-json FILE`,
/// whose file shows it), and meta.txt names the binary's version, the commit it was built
/// from and the output mode.
#[test]
fn sweep_passes_extra_arguments_and_records_the_version_and_commit() {
    let out = scratch("extra");
    let out_arg = out.to_string_lossy().into_owned();
    let stats = out.join("stats.json");
    let stats_arg = format!("--stgflow-arg={}", stats.to_string_lossy());
    let result = bench(&[
        "sweep",
        "--workload",
        "inertia",
        "--workers",
        "2",
        "--rate",
        "50",
        "--length",
        "40",
        "--repeat",
        "1",
        "--stgflow-arg=--read-on-workers",
        "--stgflow-arg=--stats-json",
        &stats_arg,
        "--out",
        &out_arg,
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    assert_eq!(rows.len(), 1);
    let json = std::fs::read_to_string(&stats).expect("the run wrote --stats-json");
    assert!(json.contains("\"time_points\":40"), "{json}");
    let meta = std::fs::read_to_string(out.join("meta.txt")).expect("meta.txt");
    assert!(meta.contains("stgflow: stgflow 0.1.0"), "{meta}");
    assert!(meta.contains("output mode: changes"), "{meta}");
    assert!(meta.contains("--stgflow-arg=--read-on-workers"), "{meta}");
    // The commit is the one around the binary (a target directory outside the checkout
    // has none).
    let binary_dir = stgflow()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let in_git = std::process::Command::new("git")
        .current_dir(&binary_dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert_eq!(meta.contains("\ncommit: "), in_git, "{meta}");
    // results.csv carries the same on each row.
    assert_eq!(rows[0][15], "stgflow 0.1.0", "{:?}", rows[0]);
    assert_eq!(!rows[0][16].is_empty(), in_git, "{:?}", rows[0]);
    assert!(meta.contains(&format!("commit: {}\n", rows[0][16])) || !in_git);
    assert_eq!(rows[0][17], "changes", "{:?}", rows[0]);
    assert!(rows[0][18].contains(" CPUs ("), "{:?}", rows[0]);
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(report.contains("- output mode: changes"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn sweep_runs_a_two_process_loopback_cluster() {
    let out = scratch("cluster");
    let out_arg = out.to_string_lossy().into_owned();
    let result = bench(&[
        "sweep",
        "--workload",
        "device-safety",
        "--processes",
        "2",
        "--rate",
        "20",
        "--length",
        "30",
        "--mode",
        "batch,streaming",
        "--repeat",
        "1",
        "--out",
        &out_arg,
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r[5] == "2"));
    // Two plots need two points on an axis; one grid point draws none, and says so.
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(
        report.contains(
            "- `throughput_vs_workers` not drawn: the grid has fewer than two worker counts."
        ),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn sweep_rejects_an_unknown_workload() {
    let result = bench(&["sweep", "--workload", "triangle"]);
    assert_eq!(result.status.code(), Some(2));
    assert!(text(&result.stderr).contains("unknown workload `triangle`"));
}

/// A stand-in peer: copies the stream it is given to `seen`, prints `answer`.
fn peer_script(dir: &Path, name: &str, answer: &str) -> String {
    let answer_file = dir.join(format!("{name}.answer"));
    std::fs::write(&answer_file, answer).expect("write the answer");
    let seen = dir.join(format!("{name}.seen"));
    format!(
        "cp {{stream}} '{}' && cat '{}'",
        seen.display(),
        answer_file.display()
    )
}

#[test]
fn compare_converts_streams_diffs_answers_and_tabulates() {
    let dir = scratch("compare");
    let program = dir.join("q.tdl");
    std::fs::write(
        &program,
        "q(A, B, T) :- p(A, B, T).\nf(A, true, T) :- p(A, B, T).\n#output q, f.\n",
    )
    .expect("write the program");
    let stream = dir.join("s.facts");
    std::fs::write(&stream, "p(1, 2, 0).\np(3,4,2).\n").expect("write the stream");
    // Laser's answer includes f, since stgflow's points output does.
    let laser = peer_script(
        &dir,
        "laser",
        "0: q(1,2) f(1,true)\n1:\n2: q(3,4) f(3,true)\nfinished in 1 ms\n",
    );
    let rtec = peer_script(
        &dir,
        "rtec",
        "holdsFor(f(1)=true, [(0,1)]).\nholdsFor(f(3)=true, [(2,3)]).\nholdsFor(q(1)=2, [(0,1)]).\nholdsFor(q(3)=4, [(2,3)]).\n",
    );
    let wrong = peer_script(&dir, "wrong", "0: q(1,2) f(1,true)\n2: q(3,5) f(3,true)\n");
    let out = dir.join("out");
    let base = |peers: &[String]| -> Vec<String> {
        let mut args: Vec<String> = vec![
            "compare".into(),
            "--program".into(),
            program.to_string_lossy().into_owned(),
            "--stream".into(),
            stream.to_string_lossy().into_owned(),
            "--repeat".into(),
            "1".into(),
            "--out".into(),
            out.to_string_lossy().into_owned(),
        ];
        for peer in peers {
            args.push("--peer".into());
            args.push(peer.clone());
        }
        args
    };

    let args = base(&[format!("laser={laser}"), format!("rtec={rtec}")]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let equal = bench(&args);
    assert_eq!(equal.status.code(), Some(0), "{}", text(&equal.stderr));
    let table = text(&equal.stdout);
    assert!(
        table.starts_with(
            "| system | wall s | CPU s | peak RSS MiB | wall vs stgflow | answers | output |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| stgflow |") && table.contains("| 1.00× | 4 | reference |"),
        "{table}"
    );
    assert!(
        table.contains("| laser |") && table.contains("| 4 | equal |"),
        "{table}"
    );
    assert!(
        table.contains("| rtec |") && table.contains("| 4 | equal |"),
        "{table}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("laser.seen")).expect("laser saw a stream"),
        "#timeline 0 2\n0: p(1,2)\n1:\n2: p(3,4)\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("rtec.seen")).expect("rtec saw a stream"),
        "p|0|0|1|2\np|2|2|3|4\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("table.md")).expect("table.md"),
        table
    );

    let mut args = base(&[format!("wrong={wrong}")]);
    args.extend(["--peer-kind".to_owned(), "wrong=laser".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let differs = bench(&args);
    assert_eq!(differs.status.code(), Some(1), "{}", text(&differs.stderr));
    let table = text(&differs.stdout);
    assert!(
        table.contains("| wrong |")
            && table.contains("DIFFERS: 1 only in wrong, 1 only in stgflow"),
        "{table}"
    );
    assert!(
        table.contains("    > 2: q(3,5)\n") && table.contains("    < 2: q(3,4)\n"),
        "{table}"
    );

    // A peer with its own input: {stream0} is that file, unconverted.
    let own = dir.join("own.rtec");
    std::fs::write(&own, "p|0|0|1|2\n").expect("write the peer's own input");
    let mut args = base(&[format!("rtec={}", rtec.replace("{stream}", "{stream0}"))]);
    args.extend([
        "--peer-stream".to_owned(),
        format!("rtec={}", own.display()),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let own_input = bench(&args);
    assert_eq!(
        own_input.status.code(),
        Some(0),
        "{}",
        text(&own_input.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("rtec.seen")).expect("rtec saw its own input"),
        "p|0|0|1|2\n"
    );

    let unknown = bench(&[
        "compare",
        "--program",
        "q.tdl",
        "--stream",
        "s.facts",
        "--peer",
        "mystery=true",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(text(&unknown.stderr).contains("give its kind with --peer-kind mystery=laser"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sweep_runs_the_recorded_event_calculus_workloads() {
    let out = scratch("recorded");
    let out_arg = out.to_string_lossy().into_owned();
    // The excerpts under datasets/ec, laid out as RTEC's full data is: each application's
    // records beside RTEC's own event description (`rtec/`, from ../shared).
    let excerpts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/ec");
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/rtec");
    let data = out.join("data");
    for app in ["caviar", "ctm", "voting"] {
        std::fs::create_dir_all(data.join(app)).expect("a data directory");
        for entry in std::fs::read_dir(excerpts.join(app)).expect("an excerpt") {
            let path = entry.expect("an excerpt's file").path();
            if path.extension().is_some_and(|x| x == "csv") {
                let name = path.file_name().expect("a file name");
                std::fs::copy(&path, data.join(app).join(name)).expect("a copy");
            }
        }
        std::os::unix::fs::symlink(shared.join(app).join("rtec"), data.join(app).join("rtec"))
            .expect("a link to RTEC's description");
    }
    let data_arg = data.to_string_lossy().into_owned();
    let result = bench(&[
        "sweep",
        "--workload",
        "caviar,ctm,voting",
        "--data",
        &data_arg,
        "--repeat",
        "1",
        "--out",
        &out_arg,
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    let workloads: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(workloads, ["caviar", "ctm", "voting"]);
    for row in &rows {
        let recorded: Vec<String> = match row[0].as_str() {
            "caviar" => vec![
                "caviar/appearance.csv".into(),
                "caviar/movementB.csv".into(),
            ],
            "voting" => vec!["voting/voting.csv".into()],
            _ => std::fs::read_dir(data.join("ctm"))
                .expect("the CTM excerpt")
                .filter_map(|e| e.ok())
                .map(|e| format!("ctm/{}", e.file_name().to_string_lossy()))
                .filter(|name| name.ends_with(".csv"))
                .collect(),
        };
        let records: usize = recorded
            .iter()
            .map(|f| {
                std::fs::read_to_string(data.join(f))
                    .expect("an excerpt")
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .count()
            })
            .sum();
        assert_eq!(row[8], records.to_string(), "{row:?}");
    }
    let streaming = bench(&[
        "sweep",
        "--workload",
        "voting",
        "--data",
        &data_arg,
        "--mode",
        "streaming",
        "--out",
        &out_arg,
    ]);
    assert_eq!(streaming.status.code(), Some(2));
    assert!(text(&streaming.stderr).contains("streaming mode needs a generated TD stream"));
    let _ = std::fs::remove_dir_all(&out);
}

/// `stgflow-bench compare` once on a program and a stream (their texts) written into `dir`,
/// with `more` arguments (the peers), writing into `dir/out`.
fn compare_in(dir: &Path, (program, stream): (&str, &str), more: &[&str]) -> Output {
    let (program_path, stream_path) = (dir.join("q.tdl"), dir.join("s.facts"));
    std::fs::write(&program_path, program).expect("write the program");
    std::fs::write(&stream_path, stream).expect("write the stream");
    let (program_path, stream_path, out) = (
        program_path.to_string_lossy().into_owned(),
        stream_path.to_string_lossy().into_owned(),
        dir.join("out").to_string_lossy().into_owned(),
    );
    let args = [
        "compare",
        "--program",
        &program_path,
        "--stream",
        &stream_path,
    ];
    let args = [&args[..], &["--repeat", "1", "--out", &out], more].concat();
    bench(&args)
}

/// A peer that hangs is killed at `--timeout`, with whatever it started, and `compare`
/// stops with an error that names it instead of waiting for it.
#[test]
fn compare_kills_a_peer_past_its_timeout() {
    let dir = scratch("timeout");
    let started = std::time::Instant::now();
    let hung = compare_in(
        &dir,
        ("q(A, T) :- p(A, T).\n", "p(1, 0).\n"),
        &["--timeout", "2", "--peer", "laser=sleep 30"],
    );
    let stderr = text(&hung.stderr);
    assert_eq!(hung.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("timed out and was killed"), "{stderr}");
    assert!(stderr.contains("sleep 30"), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Peers of kind `td` (here stgflow's reference engine itself, reading the TD stream as
/// it is) and `csv` (a stand-in reading the stream converted to CSV); the CSV peer's
/// line that is no answer is counted and shown, and its wrong answer listed.
#[test]
fn compare_takes_td_and_csv_peers_and_reports_lines_it_could_not_read() {
    let dir = scratch("compare-kinds");
    let td = format!(
        "{} run {{program}} {{stream}} --engine reference --mode points",
        stgflow().display()
    );
    let csv = peer_script(&dir, "csv", "time,pred,a,b\n0,q,1,2\n2,q,3,5\nloading…\n");
    let (td, mine) = (format!("td={td}"), format!("mine={csv}"));
    let result = compare_in(
        &dir,
        (
            "q(A, B, T) :- p(A, B, T).\n#output q.\n",
            "p(1, 2, 0).\np(3,4,2).\n",
        ),
        &["--peer", &td, "--peer", &mine, "--peer-kind", "mine=csv"],
    );
    let table = text(&result.stdout);
    assert_eq!(
        result.status.code(),
        Some(1),
        "{table}{}",
        text(&result.stderr)
    );
    assert!(
        table.contains("| td |") && table.contains("| equal |"),
        "{table}"
    );
    assert!(
        table.contains("DIFFERS: 1 only in mine, 1 only in stgflow"),
        "{table}"
    );
    assert!(
        table.contains(
            "`mine` printed 1 line(s) that were not read as answers; the first: `loading…`"
        ),
        "{table}"
    );
    assert!(
        table.contains("    > 2: q(3,5)") && table.contains("    < 2: q(3,4)"),
        "{table}"
    );
    let seen = std::fs::read_to_string(dir.join("csv.seen")).expect("the CSV peer's input");
    assert_eq!(seen, "0,p,1,2\n2,p,3,4\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sweep --program FILE --stream FILE`: the user's own program and stream over a grid of
/// workers (the workload `own`); `--workload own` without them is an error.
#[test]
fn sweep_runs_one_s_own_program_and_stream() {
    let out = scratch("own");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let program = repo.join("datasets/examples/device_safety.tdl");
    let stream = repo.join("datasets/examples/device_safety.facts");
    let lines = std::fs::read_to_string(&stream)
        .expect("the example stream")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let result = bench(&[
        "sweep",
        "--program",
        &program.to_string_lossy(),
        "--stream",
        &stream.to_string_lossy(),
        "--workers",
        "1,2",
        "--repeat",
        "1",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(
            (row[0].as_str(), row[8].clone()),
            ("own", lines.to_string()),
            "{row:?}"
        );
        // No window, rate or length of its own: empty, not 0; the program by name.
        assert_eq!(row[1..4], ["", "", ""], "{row:?}");
        assert_eq!(row[19], "device_safety.tdl", "{row:?}");
    }
    // The report and the legends name the program, not "own".
    let report = std::fs::read_to_string(out.join("report.md")).expect("the report");
    assert!(
        report.contains("| device_safety.tdl | – | – | – | 1 |"),
        "{report}"
    );
    let svg = std::fs::read_to_string(out.join("plots/speedup_vs_workers.svg"))
        .expect("the speedup plot");
    assert!(svg.contains("device_safety.tdl"), "{svg:.300}");
    assert!(!svg.contains(">own"), "{svg:.300}");
    // Nothing generated: no empty folders for generated streams and programs left behind.
    for made in ["streams", "programs"] {
        assert!(!out.join(made).exists(), "{made}/ left behind");
    }
    let refused = bench(&[
        "sweep",
        "--workload",
        "own",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("needs --program and --stream"));
    let _ = std::fs::remove_dir_all(&out);
}

/// The `netbill` workload reads a narrative per length from NetBill's directory, laid out
/// as `scripts/peers/netbill_data.sh` writes it; here RTEC's toy description stands in
/// for NetBill's (whose files RTEC ships only in its own repository).
#[test]
fn sweep_runs_netbill_over_a_narrative_per_length() {
    let out = scratch("netbill");
    let out_arg = out.to_string_lossy().into_owned();
    let toy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/rtec/toy");
    let data = out.join("data");
    let netbill = data.join("netbill");
    std::fs::create_dir_all(netbill.join("rtec")).expect("a data directory");
    std::fs::copy(
        toy.join("rtec/rules.prolog"),
        netbill.join("rtec/rules.prolog"),
    )
    .expect("a copy");
    std::fs::copy(
        toy.join("rtec/toy_var_domain.prolog"),
        netbill.join("rtec/netbill_static_generator.prolog"),
    )
    .expect("a copy");
    let records = std::fs::read_to_string(toy.join("toy_data.csv")).expect("toy's data");
    let lines: Vec<&str> = records.lines().filter(|l| !l.trim().is_empty()).collect();
    for (end, take) in [(10, 1), (30, lines.len())] {
        let narrative: String = lines[..take].iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(netbill.join(format!("end{end}.csv")), narrative).expect("a narrative");
    }
    let data_arg = data.to_string_lossy().into_owned();
    let result = bench(&[
        "sweep",
        "--workload",
        "netbill",
        "--data",
        &data_arg,
        "--length",
        "10,30",
        "--repeat",
        "1",
        "--output",
        "rtec",
        "--out",
        &out_arg,
    ]);
    assert!(result.status.success(), "{}", text(&result.stderr));
    let rows = csv_rows(&out.join("results.csv"));
    let seen: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[3].as_str(), r[8].as_str()))
        .collect();
    let all = lines.len().to_string();
    assert_eq!(
        seen,
        [("netbill", "10", "1"), ("netbill", "30", all.as_str())]
    );
    let missing = bench(&[
        "sweep",
        "--workload",
        "netbill",
        "--data",
        &data_arg,
        "--length",
        "50",
        "--out",
        &out_arg,
    ]);
    assert!(!missing.status.success());
    assert!(
        text(&missing.stderr).contains("end50.csv"),
        "{}",
        text(&missing.stderr)
    );
    let _ = std::fs::remove_dir_all(&out);
}
