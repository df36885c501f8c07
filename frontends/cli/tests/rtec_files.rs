//! RTEC's own files (issue 22): an event description given as RTEC's `rules.prolog` and
//! its background knowledge, unchanged, printed with `--mode rtec` and compared with RTEC's
//! recognised intervals on the same data (`../shared/data/rtec/<app>/rtec/`, how RTEC was
//! run: `../shared/data/README.md`).

mod common;

use std::collections::BTreeMap;

use common::{root, stgflow, tempdir};

/// Each fluent-value pair's intervals, by its `recognitions(…)` prefix.
type Recognitions = BTreeMap<String, Vec<(u64, u64)>>;

/// The intervals of each fluent-value pair of `recognitions(predictions,F,[[Args…],V],
/// [(S,E),…]).` lines, clipped to [1, end + 1): RTEC's window is (0, END], and an interval
/// open at END ends at END + 1.
fn recognitions(text: &str, end: u64) -> Recognitions {
    let mut pairs = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("recognitions(")) {
        let (pair, intervals) = line
            .split_once(",[(")
            .unwrap_or_else(|| panic!("not a recognition: {line}"));
        let intervals = intervals.trim_end_matches(")]).");
        let clipped: Vec<(u64, u64)> = intervals
            .split("),(")
            .map(|interval| {
                let (s, e) = interval
                    .split_once(',')
                    .unwrap_or_else(|| panic!("not an interval: {interval} in {line}"));
                let number = |n: &str| {
                    n.trim()
                        .parse::<u64>()
                        .unwrap_or_else(|e| panic!("{n}: {e} in {line}"))
                };
                (number(s).max(1), number(e).min(end + 1))
            })
            .filter(|(s, e)| s < e)
            .collect();
        if !clipped.is_empty() {
            pairs.insert(pair.to_owned(), clipped);
        }
    }
    pairs
}

/// `files` under `../shared/data/rtec/APP`, or the repository's where they start with
/// `datasets/`.
fn paths(app: &str, files: &[&str]) -> Vec<std::path::PathBuf> {
    let dir = root().join("../shared/data/rtec").join(app);
    files
        .iter()
        .map(|f| {
            if f.starts_with("datasets/") {
                root().join(f)
            } else {
                dir.join(f)
            }
        })
        .collect()
}

/// Runs `stgflow run FILES… --mode rtec -q MORE`: our recognitions and RTEC's own (the
/// file `expected`), both clipped to RTEC's window (0, `end`].
fn compared(
    files: &[std::path::PathBuf],
    more: &[&str],
    expected: &std::path::Path,
    end: u64,
) -> (Recognitions, Recognitions) {
    let output = stgflow()
        .arg("run")
        .args(files)
        .args(["--mode", "rtec", "-q"])
        .args(more)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{files:?}: {stderr}");
    let ours = recognitions(&String::from_utf8_lossy(&output.stdout), end);
    let expected = std::fs::read_to_string(expected).unwrap_or_else(|e| panic!("{e}"));
    (ours, recognitions(&expected, end))
}

/// RTEC's files of an application over its data (`files`, see [`paths`]): ours and RTEC's
/// recognitions (`../shared/data/rtec/APP/rtec/rtec-recognised-intervals.txt`).
fn rtec_app(app: &str, files: &[&str], more: &[&str], end: u64) -> (Recognitions, Recognitions) {
    let expected = root()
        .join("../shared/data/rtec")
        .join(app)
        .join("rtec/rtec-recognised-intervals.txt");
    compared(&paths(app, files), more, &expected, end)
}

#[test]
fn toy_from_rtecs_own_files_unchanged_gives_rtecs_intervals() {
    let (ours, theirs) = rtec_app(
        "toy",
        &[
            "rtec/rules.prolog",
            "rtec/toy_var_domain.prolog",
            "toy_data.csv",
        ],
        &[],
        21,
    );
    assert_eq!(theirs.len(), 4, "RTEC's file: {theirs:?}");
    assert_eq!(ours, theirs);
    // Background knowledge holds from the timeline's first time point, wherever it is.
    let (from_5, _) = rtec_app(
        "toy",
        &[
            "rtec/rules.prolog",
            "rtec/toy_var_domain.prolog",
            "toy_data.csv",
        ],
        &["--from", "5"],
        21,
    );
    assert_eq!(from_5, theirs);
}

/// CTM from RTEC's rules and vehicle list unchanged: its grounding (which values of
/// internal_temperature exist, `initially` for every vehicle, punctuality=non_punctual
/// as the complement of =punctual) gives RTEC's 1,400 fluent-value pairs exactly.
#[test]
fn ctm_from_rtecs_own_files_unchanged_gives_rtecs_intervals() {
    let streams = [
        "abrupt_acceleration.csv",
        "abrupt_deceleration.csv",
        "internal_temperature_change.csv",
        "noise_level_change.csv",
        "passenger_density_change.csv",
        "sharp_turn.csv",
        "stop_enter_leave.csv",
    ];
    let mut files = vec!["rtec/rules.prolog", "rtec/vehicles.prolog"];
    files.extend(streams);
    let (ours, theirs) = rtec_app("ctm", &files, &[], 50_000);
    assert_eq!(theirs.len(), 1400, "RTEC's file");
    let differing = differing(&ours, &theirs);
    assert!(
        differing.is_empty(),
        "{} differ: {differing:#?}",
        differing.len()
    );
    assert_eq!(ours.len(), theirs.len());
}

/// RTEC's files over an excerpt of an application's data in `datasets/ec/APP/`, with
/// `more`: our recognitions and RTEC's own on the same excerpt (`datasets/ec/APP/rtec-
/// recognised-intervals.txt`, see `datasets/ec/README.md`), both clipped to (0, `end`].
fn rtec_excerpt(
    app: &str,
    files: &[&str],
    more: &[&str],
    end: u64,
) -> (Recognitions, Recognitions) {
    let excerpt = root().join("datasets/ec").join(app);
    let mut streams: Vec<std::path::PathBuf> = std::fs::read_dir(&excerpt)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|x| x == "csv"))
        .collect();
    streams.sort();
    let files = [paths(app, files), streams].concat();
    compared(
        &files,
        more,
        &excerpt.join("rtec-recognised-intervals.txt"),
        end,
    )
}

/// The excerpts of CAVIAR (frames up to 27960), CTM (time < 2000, the 100 buses) and
/// voting (time < 20, two rounds on each motion) that CI runs in a blink: RTEC's own
/// files give RTEC's own recognitions on each, pair by pair. CTM's timeline runs to
/// RTEC's end time, 2000, where an interval record (`abrupt_acceleration|1999|1994|1999
/// |…`) reaches past the last record's time.
#[test]
fn excerpts_of_caviar_ctm_and_voting_from_rtecs_files_give_rtecs_intervals() {
    for (app, files, more, end, pairs) in [
        (
            "caviar",
            &[
                "rtec/rules.prolog",
                "rtec/list-of-ids.prolog",
                "datasets/ec/caviar_distance.ec",
            ][..],
            &["--tick", "40"][..],
            27_960,
            42,
        ),
        (
            "ctm",
            &["rtec/rules.prolog", "rtec/vehicles.prolog"][..],
            &["--until", "2000"][..],
            2000,
            1216,
        ),
        (
            "voting",
            &["rtec/rules.prolog", "rtec/voting_static_generator.prolog"][..],
            &[][..],
            19,
            4051,
        ),
    ] {
        let (ours, theirs) = rtec_excerpt(app, files, more, end);
        assert_eq!(theirs.len(), pairs, "{app}: RTEC's file");
        let differing = differing(&ours, &theirs);
        assert!(differing.is_empty(), "{app}: {differing:#?}");
        assert_eq!(ours.len(), theirs.len(), "{app}");
    }
}

/// Each pair RTEC reports that is not identical here, with ours and RTEC's intervals.
fn differing(ours: &Recognitions, theirs: &Recognitions) -> Vec<String> {
    theirs
        .iter()
        .filter(|(pair, expected)| ours.get(*pair) != Some(*expected))
        .map(|(pair, expected)| format!("{pair}: {:?} against RTEC's {expected:?}", ours.get(pair)))
        .collect()
}

/// CAVIAR's RTEC files, `datasets/ec/caviar_distance.ec` in place of RTEC's Prolog
/// pre-processing, and the run's further arguments.
fn caviar(more: &[&str]) -> (Recognitions, Recognitions) {
    let mut args = vec!["--tick", "40"];
    args.extend(more);
    rtec_app(
        "caviar",
        &[
            "rtec/rules.prolog",
            "rtec/list-of-ids.prolog",
            "datasets/ec/caviar_distance.ec",
            "appearance.csv",
            "movementB.csv",
        ],
        &args,
        1_006_800,
    )
}

/// CAVIAR from RTEC's rules and id lists unchanged, with `datasets/ec/caviar_distance.ec`
/// in place of RTEC's Prolog pre-processing: every pair RTEC reports is identical. RTEC
/// grounds `close_34(P1, P2)=false` (a complement) over its dynamic domain `id`, which
/// holds every id of its window from the window's start; read ahead from the files
/// (`--ec-domains input`, the default for RTEC's files), so does the domain here.
#[test]
fn caviar_from_rtecs_own_files_gives_rtecs_intervals() {
    let (ours, theirs) = caviar(&[]);
    assert_eq!(theirs.len(), 195, "RTEC's file");
    let differing = differing(&ours, &theirs);
    assert!(
        differing.is_empty(),
        "{} differ: {differing:#?}",
        differing.len()
    );
    assert_eq!(ours.len(), theirs.len());
}

/// With `--ec-domains stream`, as a live stream knows them, CAVIAR's ids are known from
/// their first appearance on: `close_34(P1, P2)=false` then starts where both ids have
/// appeared (and an interval of RTEC's that ends before then vanishes), and every other
/// pair is RTEC's.
#[test]
fn caviar_with_domains_read_as_the_stream_goes_knows_an_id_from_its_first_appearance() {
    let (ours, theirs) = caviar(&["--ec-domains", "stream"]);
    assert_eq!(ours.len(), theirs.len());
    // The first time point at which each id appears in the input.
    let mut first: BTreeMap<String, u64> = BTreeMap::new();
    for file in ["appearance.csv", "movementB.csv"] {
        let path = root().join("../shared/data/rtec/caviar").join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        for line in text.lines() {
            let fields: Vec<&str> = line.split('|').collect();
            let time: u64 = fields[1].parse().unwrap_or_else(|e| panic!("{e}: {line}"));
            for id in fields[2..].iter().filter(|f| f.starts_with("id")) {
                let known = first.entry((*id).to_owned()).or_insert(time);
                *known = (*known).min(time);
            }
        }
    }
    let mut unseen = 0;
    for (pair, expected) in &theirs {
        let got = ours.get(pair).unwrap_or_else(|| panic!("{pair} missing"));
        if got == expected {
            continue;
        }
        let ids = pair
            .strip_prefix("recognitions(predictions,close_34,[[")
            .and_then(|rest| rest.strip_suffix("],false]"))
            .unwrap_or_else(|| panic!("{pair}: {got:?} against RTEC's {expected:?}"));
        let (a, b) = ids.split_once(',').unwrap_or_else(|| panic!("{ids}"));
        let seen = first[a].max(first[b]);
        let mut clipped = expected.clone();
        clipped[0].0 = clipped[0].0.max(seen);
        clipped.retain(|(s, e)| s < e);
        assert_eq!(got, &clipped, "{pair}: both ids seen from {seen}");
        unseen += 1;
    }
    assert_eq!(
        unseen, 45,
        "pairs whose first interval starts where both ids are seen"
    );
}

/// voting from RTEC's rules and static generator unchanged: its `findall`/`length`
/// counts are `#count`s, and its derived event `auxMotionOutcomeEvent`, triggered by
/// `start(status(M)=voted)`, happens where RTEC has it (a point before it is known). RTEC's
/// window (0, 99] leaves out the records at time 0; so does this run. `sanctioned(C)`'s
/// deadline (`fi(sanctioned(C)=true, sanctioned(C)=false, 4)`) runs from initiations at
/// `end(status(M)=voted)`, which take effect at once. Every pair RTEC reports is
/// identical, chair 550's too: RTEC's dynamic domain `person` holds every person of its
/// window from the window's first time point, so `obl(declare(550, M, carried))=true`
/// starts at 8, before 550's first record (at 9); read ahead from the file, so does it
/// here.
#[test]
fn voting_from_rtecs_own_files_gives_rtecs_intervals() {
    let dir = tempdir();
    let data = root().join("../shared/data/rtec/voting/voting.csv");
    let text = std::fs::read_to_string(&data).unwrap_or_else(|e| panic!("{e}"));
    let after_zero: String = text
        .lines()
        .filter(|line| line.split('|').nth(1) != Some("0"))
        .map(|line| format!("{line}\n"))
        .collect();
    let stream = dir.join("voting.csv");
    std::fs::write(&stream, after_zero).unwrap_or_else(|e| panic!("{e}"));
    let stream = stream.to_string_lossy().into_owned();
    let (ours, theirs) = rtec_app(
        "voting",
        &[
            "rtec/rules.prolog",
            "rtec/voting_static_generator.prolog",
            &stream,
        ],
        &[],
        99,
    );
    assert_eq!(theirs.len(), 6454, "RTEC's file");
    let differing = differing(&ours, &theirs);
    assert!(
        differing.is_empty(),
        "{} differ: {differing:#?}",
        differing.len()
    );
    assert_eq!(ours.len(), theirs.len());
    let chair_550 = theirs.keys().filter(|p| p.contains("(550,")).count();
    assert_eq!(chair_550, 9, "chair 550's pairs are among those compared");
}

/// `--window rtec` reads the timeline as RTEC's window (0, END]: over RTEC's files and
/// data as they are (voting's 117 records at time 0 included), the lines of `--mode rtec`
/// are RTEC's own result file's, sorted alike (`diff <(sort …) <(sort …)` is empty; RTEC
/// writes them in its own order), with no clipping by hand; CAVIAR's interval open at the
/// end ends at END + 1 in its 40-unit frames, as RTEC's.
#[test]
fn rtecs_window_gives_rtecs_result_file_line_for_line() {
    let ctm = common::ctm_streams();
    let ctm: Vec<&str> = ctm.iter().map(String::as_str).collect();
    let caviar = [
        "rtec/list-of-ids.prolog",
        "datasets/ec/caviar_distance.ec",
        "appearance.csv",
        "movementB.csv",
    ];
    let apps: [(&str, Vec<&str>, &[&str]); 4] = [
        (
            "toy",
            vec!["rtec/toy_var_domain.prolog", "toy_data.csv"],
            &[],
        ),
        ("ctm", [&["rtec/vehicles.prolog"][..], &ctm].concat(), &[]),
        (
            "voting",
            vec!["rtec/voting_static_generator.prolog", "voting.csv"],
            &[],
        ),
        ("caviar", caviar.to_vec(), &["--tick", "40"]),
    ];
    for (app, files, more) in apps {
        let files = [&["rtec/rules.prolog"][..], &files].concat();
        let output = stgflow()
            .arg("run")
            .args(paths(app, &files))
            .args(["--mode", "rtec", "--window", "rtec", "-q"])
            .args(more)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{app}: {stderr}");
        let sorted = |text: &str| {
            let mut lines: Vec<String> = text
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect();
            lines.sort();
            lines
        };
        let theirs =
            std::fs::read_to_string(paths(app, &["rtec/rtec-recognised-intervals.txt"])[0].clone())
                .unwrap_or_else(|e| panic!("{e}"));
        let (ours, theirs) = (
            sorted(&String::from_utf8_lossy(&output.stdout)),
            sorted(&theirs),
        );
        assert!(!theirs.is_empty());
        let differing: Vec<_> = ours
            .iter()
            .filter(|l| !theirs.contains(l))
            .take(3)
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{app}: {differing:#?}");
        assert!(ours == theirs, "{app}: {differing:#?}");
    }
}

/// `check` on RTEC's voting files warns about what is there to see only: the `pow`
/// fluents no grounding declaration names (never computed, in RTEC either), `voted`'s
/// `null` initiation over no condition, and the background knowledge nothing reads; not
/// the termination of `outcome` whatever its value (RTEC's meaning exactly), nor an
/// `#output` of the fluents never computed.
#[test]
fn rtecs_voting_files_are_warned_about_what_is_there_to_see_only() {
    let files = paths(
        "voting",
        &["rtec/rules.prolog", "rtec/voting_static_generator.prolog"],
    );
    let mut args = vec!["check".to_owned()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = common::output_of(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let codes: Vec<&str> = (stderr.lines())
        .filter_map(|line| line.strip_prefix('[')?.split(']').next())
        .collect();
    assert_eq!(
        codes,
        ["W504", "W504", "W504", "W504", "W504", "W504", "W507"],
        "{stderr}"
    );
    assert!(stderr.contains("`_V` of `voted`"), "{stderr}");
    assert!(!stderr.contains("`outcome`"), "{stderr}");
}

/// A dynamic domain over a complement: `quiet(X)` holds for every node not yet `seen`.
const QUIET: &str = "\
initiatedAt(seen(X)=true, T) :- happensAt(ping(X), T).
holdsFor(quiet(X)=true, I) :- holdsFor(seen(X)=true, I1), complement_all([I1], I).
dynamicDomain(node(_)).
grounding(ping(X)) :- node(X).
grounding(seen(X)=true) :- node(X).
grounding(quiet(X)=true) :- node(X).
";

/// Read ahead from a file (RTEC's reading, the default for RTEC's files), a node is in
/// the domain from the window's first time point, 1; as a stream goes (`--ec-domains
/// stream`, the default for `.ec` and for stdin, with a warning there), from its first
/// `ping`. Reading ahead from stdin is an error that says what to give instead, and
/// prints nothing. Read ahead, the rules by which the domain grows are dropped.
#[test]
fn dynamic_domains_hold_from_the_windows_start_when_read_ahead() {
    let dir = tempdir();
    for name in ["quiet.prolog", "quiet.ec"] {
        std::fs::write(dir.join(name), QUIET).unwrap_or_else(|e| panic!("{e}"));
    }
    let records = "ping|3|3|a\nping|8|8|b\nping|12|12|a\n";
    let stream = dir.join("pings.csv");
    std::fs::write(&stream, records).unwrap_or_else(|e| panic!("{e}"));
    let run = |program: &str, from_stdin: bool, more: &[&str]| {
        let mut command = stgflow();
        command
            .arg("run")
            .arg(dir.join(program))
            .args(["--mode", "intervals", "--output", "quiet"])
            .args(more);
        if from_stdin {
            let file = std::fs::File::open(&stream).unwrap_or_else(|e| panic!("{e}"));
            command.args(["-", "--format", "rtec"]).stdin(file);
        } else {
            command.arg(&stream);
        }
        command.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let ahead = "quiet(a,true) [1,4)\nquiet(b,true) [1,9)\n";
    let as_seen = "quiet(a,true) [3,4)\nquiet(b,true) [8,9)\n";
    for (program, from_stdin, more, expected, warned) in [
        ("quiet.prolog", false, &[][..], ahead, false),
        (
            "quiet.prolog",
            false,
            &["--ec-domains", "stream"][..],
            as_seen,
            false,
        ),
        ("quiet.ec", false, &[][..], as_seen, false),
        (
            "quiet.ec",
            false,
            &["--ec-domains", "input"][..],
            ahead,
            false,
        ),
        ("quiet.prolog", true, &[][..], as_seen, true),
    ] {
        let output = run(program, from_stdin, more);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{program} {more:?}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{program} {more:?}, stdin: {from_stdin}"
        );
        assert_eq!(
            stderr.contains("warning: stdin is read as it comes"),
            warned,
            "{stderr}"
        );
    }
    // From the timeline's first point on (`--from 3`), a node named there holds there,
    // as the rule by which the domain grows gives it; read ahead, that rule is dropped
    // (the node component only keeps what it holds), as the stream goes it stays.
    let from_3 = run("quiet.prolog", false, &["--from", "3", "--stats"]);
    assert_eq!(
        String::from_utf8_lossy(&from_3.stdout),
        "quiet(a,true) [3,4)\nquiet(b,true) [4,9)\n"
    );
    let stats = String::from_utf8_lossy(&from_3.stderr);
    let node = |stats: &str| {
        stats
            .lines()
            .find(|line| line.contains("persist node:"))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no node component: {stats}"))
    };
    assert!(!node(&stats).contains("ping"), "{stats}");
    let as_it_goes = run(
        "quiet.prolog",
        false,
        &["--ec-domains", "stream", "--stats"],
    );
    assert!(
        node(&String::from_utf8_lossy(&as_it_goes.stderr)).contains("reads ping"),
        "the domain grows with its pings as the stream goes"
    );
    let output = run("quiet.prolog", true, &["--ec-domains", "input"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.contains("stdin cannot be read twice; give --ec-domains stream"),
        "{stderr}"
    );
}

/// A large file is read ahead for the dynamic domains in parts, one per thread
/// (`--parse-threads`), each on its own: the domains are those of the file read whole, as
/// a gzip file is read, on a file in time order, on one whose later parts may start with
/// a line too late to be read (`--skip-late`: its node is in no domain), and on one with a
/// line that cannot be read (the domains hold what comes before it; the run ends there).
#[test]
fn dynamic_domains_read_ahead_in_parts_are_those_of_the_file_read_whole() {
    let dir = tempdir();
    std::fs::write(dir.join("quiet.prolog"), QUIET).unwrap_or_else(|e| panic!("{e}"));
    let in_order: String = (0..20_000)
        .map(|i| format!("ping|{t}|{t}|node{n}\n", t = 10 + i / 8, n = i % 700))
        .collect();
    // Three lines too late after each line in order, each naming a node of its own.
    let late: String = (0..12_000)
        .map(|i| {
            let t = 10 + i / 8;
            let late: String = (0..3)
                .map(|k| format!("ping|{k}|{k}|late{i}_{k}\n"))
                .collect();
            format!("ping|{t}|{t}|node{n}\n{late}", n = i % 700)
        })
        .collect();
    let with_error = format!(
        "{}ping|x|3|bad\n{}",
        &in_order[..in_order.len() / 3],
        &in_order[in_order.len() / 3..]
    );
    for (name, text, ends_well) in [
        ("in_order", &in_order, true),
        ("late", &late, true),
        ("error", &with_error, false),
    ] {
        assert!(text.len() > 300_000, "{name}: large enough to be cut");
        let plain = dir.join(format!("{name}.csv"));
        let gz = dir.join(format!("{name}.csv.gz"));
        std::fs::write(&plain, text).unwrap_or_else(|e| panic!("{e}"));
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&gz, encoder.finish().unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let run = |stream: &std::path::Path, threads: &str| {
            stgflow()
                .arg("run")
                .arg(dir.join("quiet.prolog"))
                .arg(stream)
                .args(["--mode", "intervals", "--output", "quiet", "--skip-late"])
                .args(["--parse-threads", threads])
                .output()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let whole = run(&gz, "1");
        assert_eq!(whole.status.success(), ends_well, "{name}");
        let printed = String::from_utf8_lossy(&whole.stdout).into_owned();
        // Every node in order is in the domain, pinged or not yet; no late one is.
        assert!(
            printed.contains("quiet(node699,true) [1,"),
            "{name}: {printed}"
        );
        assert!(!printed.contains("late"), "{name}: {printed}");
        for threads in ["1", "2", "3", "5", "7"] {
            let parts = run(&plain, threads);
            assert_eq!(
                parts.status.code(),
                whole.status.code(),
                "{name}, {threads}"
            );
            assert_eq!(
                String::from_utf8_lossy(&parts.stdout),
                printed,
                "{name}, --parse-threads {threads}"
            );
        }
    }
}

/// Writes `files` (name, text) into a new directory and runs `stgflow run` on them (the
/// first the description, the rest its streams) with `more`; stdout, after checking the
/// run succeeded.
/// What `stgflow check` says of the description `text` (in a file `name`), which it
/// must refuse.
fn refused(name: &str, text: &str) -> String {
    let dir = tempdir();
    let program = dir.join(name);
    std::fs::write(&program, text).unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .arg("check")
        .arg(&program)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    stderr
}

/// Runs `files` on the dataflow engine and the reference with `--mode rtec --window rtec
/// --until UNTIL`, RTEC's one window (0, UNTIL], and asserts their lines are `expected`.
fn assert_rtec_lines(files: &[(&str, &str)], until: &str, expected: &[&str]) {
    for engine in ["dataflow", "reference"] {
        let args = [
            "--mode", "rtec", "--window", "rtec", "--until", until, "--engine", engine,
        ];
        assert_eq!(
            common::sorted(&run_description(files, &args)),
            expected,
            "{engine}"
        );
    }
}

/// The lines of `out` that start with `prefix`, sorted.
fn lines_of(out: &str, prefix: &str) -> Vec<String> {
    let mut lines = common::sorted(out);
    lines.retain(|line| line.starts_with(prefix));
    lines
}

fn run_description(files: &[(&str, &str)], more: &[&str]) -> String {
    let dir = tempdir();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let output = stgflow()
        .arg("run")
        .args(files.iter().map(|(name, _)| dir.join(name)))
        .args(more)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{more:?}: {stderr}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// RTEC's cyclic form (`initiatedAt(F=V, T1, T, T2)` reading another fluent's
/// initiations, `fi` deadlines included), a background fact with variables
/// (`price(_, 10).`, as NetBill's), and `\+ M=C` in a grounding declaration, as RTEC's
/// NetBill writes them. A deal initiates a debt; paying the price discharges it (9 is
/// not the price); a deal's deadline with the debt still owed bans the consumer, whose
/// next acceptance makes no deal. A merchant dealing with itself is no grounded deal,
/// but the cyclic form reads the initiating rule's body, grounded or not, so it owes from
/// then on. The expected lines are what RTEC (aartikis/RTEC, `run_rtec.sh`, one window)
/// printed for these files, `price(_, 10).` given as its background knowledge.
#[test]
fn the_cyclic_form_patterns_and_negated_comparisons_mean_what_they_mean_to_rtec() {
    let description = "\
initiatedAt(deal(M, C)=true, T) :- happensAt(accept(C, M), T), \\+ holdsAt(banned(C)=true, T).
fi(deal(M, C)=true, deal(M, C)=false, 3).
initiatedAt(owes(C)=true, T1, T, T2) :- initiatedAt(deal(_M, C)=true, T1, T, T2).
initiatedAt(owes(C)=false, T) :- happensAt(pay(C, G, P), T), price(G, P).
initiatedAt(banned(C)=true, T1, T, T2) :-
    initiatedAt(deal(_M, C)=false, T1, T, T2), holdsAt(owes(C)=true, T).
dynamicDomain(pair(_, _)).
grounding(accept(C, M)) :- pair(M, C).
grounding(deal(M, C)=true) :- pair(M, C), \\+ M=C.
grounding(deal(M, C)=false) :- pair(M, C), \\+ M=C.
grounding(owes(C)=true) :- pair(_M, C).
grounding(owes(C)=false) :- pair(_M, C).
grounding(banned(C)=true) :- pair(_M, C).
";
    let records = "accept|2|2|c1|m1\naccept|3|3|m1|m1\npay|4|4|c1|book|10\n\
                   accept|10|10|c2|m1\npay|12|12|c2|book|9\naccept|20|20|c2|m1\n";
    let files = [
        ("deals.prolog", description),
        ("prices.prolog", "price(_, 10).\n"),
        ("deals.csv", records),
    ];
    let expected = [
        "recognitions(predictions,banned,[[c2],true],[(14,21)]).",
        "recognitions(predictions,deal,[[m1,c1],false],[(6,21)]).",
        "recognitions(predictions,deal,[[m1,c1],true],[(3,6)]).",
        "recognitions(predictions,deal,[[m1,c2],false],[(14,21)]).",
        "recognitions(predictions,deal,[[m1,c2],true],[(11,14)]).",
        "recognitions(predictions,owes,[[c1],false],[(5,21)]).",
        "recognitions(predictions,owes,[[c1],true],[(3,5)]).",
        "recognitions(predictions,owes,[[c2],true],[(11,21)]).",
        "recognitions(predictions,owes,[[m1],true],[(4,21)]).",
    ];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "rtec", "--engine", engine]);
        assert_eq!(common::sorted(&out), expected, "{engine}");
    }
    // The window's bounds are RTEC's; a condition that reads one is an error naming it.
    let stderr = refused(
        "bounds.prolog",
        "initiatedAt(f(X)=true, T1, T, T2) :- happensAt(e(X), T), T > T1.\n",
    );
    assert!(
        stderr.contains("E504") && stderr.contains("`T1`, a bound of RTEC's cyclic form"),
        "{stderr}"
    );
}

/// RTEC's cyclic form writes `initially` as an initiation at -1 that the window reaches
/// back to (RTEC's unit test `cycles/test_1`); it means `initially`.
#[test]
fn an_initiation_at_minus_one_in_the_cyclic_form_is_initially() {
    let rest = "\
initiatedAt(strength(X)=tired, T) :- happensAt(work(X), T), holdsAt(strength(X)=full, T).
dynamicDomain(person(_)).
grounding(work(X)) :- person(X).
grounding(strength(X)=full) :- person(X).
grounding(strength(X)=tired) :- person(X).
";
    let records = ("work.csv", "work|5|5|chris\nwork|9|9|ann\n");
    let cyclic = format!("initiatedAt(strength(_X)=full, T1, -1, T2) :- T1=<(-1), -1<T2.\n{rest}");
    let plain = format!("initially(strength(_X)=full).\n{rest}");
    let expected = [
        "strength(ann,full) [1,10)",
        "strength(chris,full) [1,6)",
        "strength(chris,tired) [6,10)",
    ];
    for text in [&cyclic, &plain] {
        let out = run_description(&[("s.prolog", text), records], &["--mode", "intervals"]);
        assert_eq!(common::sorted(&out), expected, "{text}");
    }
}

/// RTEC's `startI(F=V)` happens at the first time point of F=V's interval, `start(F=V)`
/// the point before (RTEC's reading), so `glad` starts a point after `eager`; a fluent
/// grounded with a variable value (`grounding(place(P)=Where) :- spot(Where).`) is one
/// pair with its value unbound to RTEC, whose values do not end each other (`pub` holds
/// on after `home`), and `--mode rtec` prints all its values. The expected lines are what
/// RTEC (aartikis/RTEC, `run_rtec.sh`, one window) printed for these files.
#[test]
fn start_i_and_a_grounding_with_a_variable_value_are_rtecs() {
    let description = "\
initiatedAt(rich(X)=true, T) :- happensAt(win(X), T).
terminatedAt(rich(X)=true, T) :- happensAt(lose(X), T).
initiatedAt(glad(X)=true, T) :- happensAt(startI(rich(X)=true), T).
initiatedAt(eager(X)=true, T) :- happensAt(start(rich(X)=true), T).
initiatedAt(place(X)=Y, T) :- happensAt(go(X, Y), T).
grounding(win(P)) :- person(P).
grounding(lose(P)) :- person(P).
grounding(go(P, Where)) :- person(P), spot(Where).
grounding(rich(P)=true) :- person(P).
grounding(glad(P)=true) :- person(P).
grounding(eager(P)=true) :- person(P).
grounding(place(P)=Where) :- person(P), spot(Where).
person(ann).
spot(home).
spot(pub).
";
    let records = "go|3|3|ann|pub\nwin|5|5|ann\ngo|7|7|ann|home\nlose|9|9|ann\n\
                   win|12|12|ann\ngo|14|14|ann|pub\n";
    let files = [("rich.prolog", description), ("rich.csv", records)];
    let expected = [
        "recognitions(predictions,eager,[[ann],true],[(6,15)]).",
        "recognitions(predictions,glad,[[ann],true],[(7,15)]).",
        "recognitions(predictions,place,[[ann],home],[(8,15)]).",
        "recognitions(predictions,place,[[ann],pub],[(4,15)]).",
        "recognitions(predictions,rich,[[ann],true],[(6,10),(13,15)]).",
    ];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "rtec", "--engine", engine]);
        assert_eq!(common::sorted(&out), expected, "{engine}");
    }
}

/// A postponable deadline (`p(F=V)` with `fi`) re-initiated at the deadline's own time
/// point: RTEC postpones it ("the fluent is extended when the re-initiation takes place
/// at the same time as the deadline"), so `busy(a)=true` ends 3 points after the second
/// ping (RTEC, run on these files with groundings for `busy`, printed the same intervals); in the paper's reading (`--ec-timing paper`) the deadline is checked against
/// the re-initiations before it, so `false` is initiated at 5 as `true` is initiated
/// again, and both hold from 6 (the paper's simultaneous initiation).
#[test]
fn a_reinitiation_at_the_deadline_postpones_it_in_rtecs_reading() {
    let files = [
        (
            "busy.prolog",
            "initiatedAt(busy(X)=true, T) :- happensAt(ping(X), T).\n\
             fi(busy(X)=true, busy(X)=false, 3).\n\
             p(busy(_X)=true).\n",
        ),
        ("busy.csv", "ping|2|2|a\nping|5|5|a\nping|12|12|b\n"),
    ];
    for engine in ["dataflow", "reference"] {
        let rtec = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        assert_eq!(
            common::sorted(&rtec),
            ["busy(a,false) [9,13)", "busy(a,true) [3,9)"],
            "{engine}"
        );
        let paper = run_description(
            &files,
            &[
                "--mode",
                "intervals",
                "--engine",
                engine,
                "--ec-timing",
                "paper",
            ],
        );
        assert_eq!(
            common::sorted(&paper),
            ["busy(a,false) [6,13)", "busy(a,true) [3,9)"],
            "{engine}"
        );
    }
}

/// RTEC's idiom for selecting intervals by their length (`findall` over `member` of a
/// list, `E - S`) is an error that names it and says why: the length of an interval is
/// known only at its end (RTEC's unit test `findall/test_1`). So is maritime's
/// `intDurLess`, and `intDurGreater` where another rule reads what it keeps.
#[test]
fn selecting_intervals_by_their_length_is_an_error_that_says_why() {
    let stderr = refused(
        "long.prolog",
        "holdsFor(long(X)=true, I) :-\n    holdsFor(busy(X)=true, I1),\n    \
         findall((S,E), (member((S,E), I1), Diff is E-S, compare(>, Diff, 2)), I).\n",
    );
    assert!(
        stderr.contains("[E507]")
            && stderr.contains("a `findall` over the intervals of a list is not supported")
            && stderr.contains("known only once it has ended"),
        "{stderr}"
    );
    let stderr = refused(
        "shorter.prolog",
        "holdsFor(short(X)=true, I) :-\n    holdsFor(busy(X)=true, I1),\n    \
         intDurLess(I1, 3600, I).\n",
    );
    assert!(
        stderr.contains("[E507]")
            && stderr.contains("`intDurLess` over a list of intervals is not supported yet")
            && stderr.contains("only once it has ended"),
        "{stderr}"
    );
    // A fluent kept by `intDurGreater` is known only its duration after each interval
    // starts: a rule that reads it (maritime's loitering reads anchoredOrMoored) is refused.
    let stderr = refused(
        "longer.prolog",
        "holdsFor(long(X)=true, I) :-\n    holdsFor(busy(X)=true, I1),\n    \
         intDurGreater(I1, 3600, I).\n\
         holdsFor(idle(X)=true, I) :-\n    holdsFor(busy(X)=true, I1),\n    \
         holdsFor(long(X)=true, I2),\n    relative_complement_all(I1, [I2], I).\n",
    );
    assert!(
        stderr.contains("[E507]")
            && stderr.contains("`long` keeps intervals by their duration (intDurGreater), and another rule reads it")
            && stderr.contains("known only 3600 time points after it starts"),
        "{stderr}"
    );
}

/// `intDurGreater(I1, D, I)` (RTEC's maritime helper, its clause of `compare.prolog` given):
/// the intervals of I1 longer than D, as RTEC computes them in one window. a (8 long) and
/// b's second (10) are kept; b's first and c (5: not longer than 5) are not. Of the
/// intervals still open at the end, RTEC measures each up to the last time point, 30: d
/// (25) and e (8) are kept, f (5) and g (2) are not. The expected lines are what RTEC
/// (aartikis/RTEC at d7215f4, `run_rtec.sh --app=maritime` with these files as event
/// description and background knowledge, window and step 30) printed. In `--mode
/// intervals`, each kept interval is output 5 time points after it starts, once it has
/// lasted longer than 5 (RTEC's are then written from their starts).
#[test]
fn intervals_longer_than_a_duration_are_rtecs() {
    let description = "\
initiatedAt(busy(X)=true, T) :-
    happensAt(start_work(X), T).
terminatedAt(busy(X)=true, T) :-
    happensAt(stop_work(X), T).
holdsFor(long(X)=true, I) :-
    holdsFor(busy(X)=true, I1),
    thresholds(longTime, D),
    intDurGreater(I1, D, I).
thresholds(longTime, 5).
dynamicDomain(worker(_)).
grounding(start_work(X)) :- worker(X).
grounding(stop_work(X)) :- worker(X).
grounding(busy(X)=true) :- worker(X).
grounding(long(X)=true) :- worker(X).
";
    let compare = "\
intDurGreater(If,V,I) :-
\t\tfindall((S,E), (member((S,E), If),(E \\= inf -> (Diff is E - S, Diff > V); (queryTime(QT), Diff is QT - S, Diff > V ))), I).
";
    let records = "start_work|1|1|a\nstart_work|2|2|b\nstart_work|3|3|c\nstart_work|4|4|d\n\
                   stop_work|7|7|b\nstop_work|8|8|c\nstop_work|9|9|a\nstart_work|10|10|b\n\
                   stop_work|20|20|b\nstart_work|21|21|e\nstart_work|24|24|f\n\
                   start_work|27|27|g\nstart_work|28|28|b\n";
    let files = [
        ("long.prolog", description),
        ("compare.prolog", compare),
        ("work.csv", records),
    ];
    assert_rtec_lines(
        &files,
        "30",
        &[
            "recognitions(predictions,busy,[[a],true],[(2,10)]).",
            "recognitions(predictions,busy,[[b],true],[(3,8),(11,21),(29,31)]).",
            "recognitions(predictions,busy,[[c],true],[(4,9)]).",
            "recognitions(predictions,busy,[[d],true],[(5,31)]).",
            "recognitions(predictions,busy,[[e],true],[(22,31)]).",
            "recognitions(predictions,busy,[[f],true],[(25,31)]).",
            "recognitions(predictions,busy,[[g],true],[(28,31)]).",
            "recognitions(predictions,long,[[a],true],[(2,10)]).",
            "recognitions(predictions,long,[[b],true],[(11,21)]).",
            "recognitions(predictions,long,[[d],true],[(5,31)]).",
            "recognitions(predictions,long,[[e],true],[(22,31)]).",
        ],
    );
    let out = run_description(&files, &["--mode", "intervals", "--until", "30", "-w", "3"]);
    let long = lines_of(&out, "long");
    assert_eq!(
        long,
        [
            "long(a,true) [7,10)",
            "long(b,true) [16,21)",
            "long(d,true) [10,31)",
            "long(e,true) [27,31)",
            "long(f,true) [30,31)",
        ],
        "{out}"
    );
}

#[test]
fn background_files_are_read_in_order_and_their_diagnostics_name_them() {
    let dir = tempdir();
    let rules = dir.join("rules.prolog");
    let knowledge = dir.join("knowledge.pl");
    std::fs::write(
        &rules,
        "initiatedAt(rich(X)=true, T) :- happensAt(win(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        &knowledge,
        "person(chris).\nperson(pat).\n\nterminatedAt(rich(X)=true, T) :- happensAt(lose(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stream = dir.join("data.csv");
    std::fs::write(&stream, "win|2|2|chris\nlose|5|5|chris\n").unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .arg("run")
        .args([&rules, &knowledge, &stream])
        .args(["--mode", "intervals"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The termination in the second file is part of the description.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "rich(chris,true) [3,6)\n"
    );
    assert!(
        stderr.contains("[W507]") && stderr.contains("knowledge.pl:1:1"),
        "{stderr}"
    );
    assert!(stderr.contains("`person/1` (2 facts)"), "{stderr}");

    // An error in the second file names it, line and column.
    std::fs::write(
        &knowledge,
        "person(chris).\ninitiatedAt(rich(X)=true) :- happensAt(win(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check"])
        .args([&rules, &knowledge])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("knowledge.pl:2:"), "{stderr}");
}

#[test]
fn only_an_event_description_takes_more_program_files() {
    let dir = tempdir();
    let knowledge = dir.join("knowledge.pl");
    std::fs::write(&knowledge, "person(chris).\n").unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check", "datasets/examples/device_safety.tdl"])
        .arg(&knowledge)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("only an event description"), "{stderr}");
}

#[test]
fn rtec_mode_is_one_file_not_one_per_predicate() {
    let dir = tempdir();
    let toy = root().join("../shared/data/rtec/toy");
    let output = stgflow()
        .arg("run")
        .arg(toy.join("rtec/rules.prolog"))
        .arg(toy.join("toy_data.csv"))
        .args(["--mode", "rtec", "-q", "--output-dir"])
        .arg(dir.join("out"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--mode rtec"), "{stderr}");
}

/// RTEC's CAVIAR pre-processing is Prolog code: one error that says so and what to give
/// instead, not one per clause it could not read.
#[test]
fn rtecs_prolog_pre_processing_is_one_error_that_names_the_replacement() {
    let caviar = root().join("../shared/data/rtec/caviar/rtec");
    let output = stgflow()
        .args(["check", "-q"])
        .arg(caviar.join("rules.prolog"))
        .arg(caviar.join("list-of-ids.prolog"))
        .arg(caviar.join("pre-processing.prolog"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("[E").count(), 1, "{stderr}");
    assert!(
        stderr.contains("pre-processing.prolog:11:1")
            && stderr.contains("datasets/ec/caviar_distance.ec"),
        "{stderr}"
    );
}

/// The rules of RTEC's own unit tests (`unit-tests/RTEC-tests/rules/rulesV1/toy_rules.
/// prolog`) that `happy` reads, with the declarations that test loads: each value of
/// `location` declared with `simpleFluent`, and grounded with a variable value. RTEC
/// breaks `location(chris)=pub` where another value so declared is initiated, so going
/// home at 21 ends it; RTEC's tester expects `happy(chris)=true` over (14, 22) for this
/// narrative (`RTEC_version_1.prolog`, case intervalManipulation 1, one query at 21).
/// Without the declarations, as RTEC's compiler declares a variable value, `pub` holds on.
#[test]
fn values_declared_one_by_one_end_each_other_as_rtecs_unit_tests_expect() {
    let rules = "\
initiatedAt(rich(X)=true, T) :- happensAt(win_lottery(X), T).
terminatedAt(rich(X)=true, T) :- happensAt(lose_wallet(X), T).
initiatedAt(location(X)=Y, T) :- happensAt(go_to(X, Y), T).
holdsFor(happy(X)=true, I) :-
    holdsFor(rich(X)=true, I1), holdsFor(location(X)=pub, I2), union_all([I1, I2], I).
grounding(location(Person)=Place) :- person(Person), place(Place).
grounding(rich(Person)=true) :- person(Person).
grounding(happy(Person)=true) :- person(Person).
person(chris).
place(home).
place(pub).
place(work).
";
    let declared = "\
simpleFluent(location(_)=home).
simpleFluent(location(_)=pub).
simpleFluent(location(_)=work).
";
    let narrative = "go_to|9|9|chris|work\nwin_lottery|13|13|chris\ngo_to|17|17|chris|pub\n\
                     lose_wallet|19|19|chris\ngo_to|21|21|chris|home\n";
    let window = ["--mode", "rtec", "--from", "0", "--until", "22"];
    let happy = |out: &str| {
        out.lines()
            .find(|l| l.contains(",happy,"))
            .map(str::to_owned)
            .unwrap_or_default()
    };
    let with = format!("{rules}{declared}");
    let out = run_description(&[("toy.prolog", &with), ("im1.csv", narrative)], &window);
    assert_eq!(
        happy(&out),
        "recognitions(predictions,happy,[[chris],true],[(14,22)]).",
        "{out}"
    );
    let out = run_description(&[("toy.prolog", rules), ("im1.csv", narrative)], &window);
    assert_eq!(
        happy(&out),
        "recognitions(predictions,happy,[[chris],true],[(14,23)]).",
        "{out}"
    );
}

/// RTEC's compiled form, as RTEC's unit tests load it (`rules/voting/
/// motion_cycle_deadlines_extended/vopr_RTEC_compiled.prolog`, the rules of `status`):
/// window bounds checked in every rule (`T1 =< T, T < T2`), `happensAtIE`,
/// `holdsAtCyclic(Index, F=V, T)`, and `fi` rules on background knowledge (`:- motion(M)`).
/// A proposal at 5 is not renewed by the one at 9 (status is not null there), so its
/// deadline makes it null from 16 and the second at 18 finds nothing to second: RTEC's
/// tester expects null over (0, 6) and (16, inf), proposed over (6, 16), and no voting
/// (`voting_motion_cycles_deadlines_extended.prolog`, voting_4, one query at 20).
#[test]
fn rtecs_compiled_form_and_fi_rules_give_what_rtecs_unit_tests_expect() {
    let compiled = "\
fi(status(M)=proposed, status(M)=null, 10) :- motion(M).
p(status(_M)=proposed).
initiatedAt(status(_M)=null, T1, -1, T2) :- T1=<(-1), -1<T2.
initiatedAt(status(M)=proposed, T1, T, T2) :-
    happensAtIE(propose(_P,M), T), T1 =< T, T< T2, holdsAtCyclic(M, status(M)=null, T).
initiatedAt(status(M)=voting, T1, T, T2) :-
    happensAtIE(second(_S,M), T), T1 =< T, T< T2, holdsAtCyclic(M, status(M)=proposed, T).
cachingOrder2(M, status(M)=null) :- queryMotion(M).
grounding(status(M)=null) :- queryMotion(M).
grounding(status(M)=proposed) :- queryMotion(M).
grounding(status(M)=voting) :- queryMotion(M).
motion(1).
queryMotion(1).
";
    let narrative = "propose|5|5|1|1\npropose|9|9|1|1\nsecond|18|18|1|1\n";
    let out = run_description(
        &[("vopr.prolog", compiled), ("voting_4.csv", narrative)],
        &["--mode", "rtec", "--from", "0", "--until", "21"],
    );
    assert_eq!(
        common::sorted(&out),
        [
            "recognitions(predictions,status,[[1],null],[(0,6),(16,22)]).",
            "recognitions(predictions,status,[[1],proposed],[(6,16)]).",
        ],
        "(16, 22) is RTEC's (16, inf): open at 21"
    );
}

/// RTEC's dynamic grounding as its compiled declarations write it (`collectGrounds(
/// [ping(X)], node(X))` with `dgrounded(…)`, as in RTEC's unit tests' `rulesV1_dg`) means
/// what `dynamicDomain(node(_))` with `grounding(ping(X)) :- node(X).` means.
#[test]
fn collect_grounds_is_a_dynamic_domain_grown_by_the_events_it_lists() {
    let compiled = "\
initiatedAt(seen(X)=true, T) :- happensAt(ping(X), T).
holdsFor(quiet(X)=true, I) :- holdsFor(seen(X)=true, I1), complement_all([I1], I).
collectGrounds([ping(X)], node(X)).
grounding(seen(X)=true) :- node(X).
dgrounded(seen(X)=true, node(X)).
grounding(quiet(X)=true) :- node(X).
dgrounded(quiet(X)=true, node(X)).
";
    let records = "ping|3|3|a\nping|8|8|b\nping|12|12|a\n";
    let run = |description: &str| {
        run_description(
            &[("quiet.prolog", description), ("pings.csv", records)],
            &["--mode", "intervals", "--output", "quiet"],
        )
    };
    let expected = "quiet(a,true) [1,4)\nquiet(b,true) [1,9)\n";
    assert_eq!(run(QUIET), expected);
    assert_eq!(run(compiled), expected);
}

/// RTEC's background knowledge loads more files with Prolog directives
/// (`loadStaticData.prolog`: `:- ['./vesselInformation/vesselStaticInfo.prolog'].`): each
/// is read from the loading file's folder, with `.pl` added to a name without it, once
/// however often it is named, and a term of operators in its facts
/// (`cargo-hazarda(major)`) is one constant, as in a condition. A file that cannot be
/// read is an error at the directive that names it.
#[test]
fn background_files_load_the_files_their_directives_name() {
    let dir = tempdir();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path
    };
    let rules = write(
        "patterns/rules.prolog",
        "\
initiatedAt(towing(V)=true, T) :- happensAt(slow(V), T), vesselType(V, tug).
initiatedAt(hazard(V)=true, T) :- happensAt(slow(V), T), vesselType(V, cargo-hazarda(major)).
dynamicDomain(vessel(_)).
grounding(slow(V)) :- vessel(V).
grounding(towing(V)=true) :- vessel(V).
grounding(hazard(V)=true) :- vessel(V).
",
    );
    let load = write(
        "auxiliary/load.prolog",
        ":- multifile vesselType/2.\n:- ['./info/vessels.prolog'].\n:- consult(types).\n",
    );
    write(
        "auxiliary/info/vessels.prolog",
        "vesselType(v1, tug).\nvesselType(v2, cargo-hazarda(major)).\n",
    );
    // Loads vessels.prolog again: its facts are read once.
    write(
        "auxiliary/types.pl",
        ":- ['info/vessels'].\nvesselType(v3, tug).\n",
    );
    let records = write(
        "slow.csv",
        "slow|1|1|v1\nslow|2|2|v2\nslow|3|3|v3\nslow|4|4|v4\n",
    );
    let run = |program: &[&std::path::Path]| {
        stgflow()
            .arg("run")
            .args(program)
            .arg(&records)
            .args(["--mode", "intervals"])
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let output = run(&[&rules, &load]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        common::sorted(&String::from_utf8_lossy(&output.stdout)),
        [
            "hazard(v2,true) [3,5)",
            "towing(v1,true) [2,5)",
            "towing(v3,true) [4,5)"
        ],
        "{stderr}"
    );
    assert!(
        !stderr.contains("W507"),
        "every fact is read once: {stderr}"
    );

    let missing = write(
        "auxiliary/missing.prolog",
        "\n:- ['./info/vessels.prolog', 'areas/ports'].\n",
    );
    let output = run(&[&rules, &missing]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("E514")
            && stderr.contains("cannot load `areas/ports`")
            && stderr.contains("missing.prolog:2:30"),
        "{stderr}"
    );
}

/// Background knowledge as a condition of a holdsFor rule, held and negated (RTEC's
/// maritime `oneIsTug(V1, V2)`, `\+ oneIsPilot(V1, V2)`), beside `I \= []`, RTEC's other
/// spelling of an optimisation check: towing needs a tug first and no pilot second, so v2
/// (no tug) towing v1 and v3 or v1 towing v4 (a pilot) is none.
#[test]
fn background_knowledge_selects_the_instances_of_a_holds_for_rule() {
    let description = "\
initiatedAt(near(V1, V2)=true, T) :- happensAt(meet(V1, V2), T).
terminatedAt(near(V1, V2)=true, T) :- happensAt(part(V1, V2), T).
holdsFor(towing(V1, V2)=true, I) :-
    holdsFor(near(V1, V2)=true, In), tug(V1), \\+ pilot(V2),
    intersect_all([In], I), I \\= [].
tug(v1).
tug(v3).
pilot(v4).
dynamicDomain(pair(_, _)).
grounding(meet(V1, V2)) :- pair(V1, V2).
grounding(part(V1, V2)) :- pair(V1, V2).
grounding(near(V1, V2)=true) :- pair(V1, V2).
grounding(towing(V1, V2)=true) :- pair(V1, V2).
";
    let records = "meet|1|1|v1|v2\nmeet|2|2|v2|v1\nmeet|3|3|v3|v4\npart|5|5|v1|v2\n\
                   meet|6|6|v1|v4\nmeet|6|6|v3|v2\npart|8|8|v3|v4\n";
    let files = [("towing.prolog", description), ("moves.csv", records)];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        let towing = lines_of(&out, "towing");
        assert_eq!(
            towing,
            ["towing(v1,v2,true) [2,6)", "towing(v3,v2,true) [7,9)"],
            "{engine}: {out}"
        );
    }
}

/// A background predicate given at two arities is two predicates, as to Prolog
/// (maritime's `areaType(fishing).` and `areaType(Area, Type) :- …`), and a clause that
/// fails (`buildFromPoints(_) :- fail.`) says nothing.
#[test]
fn a_background_name_at_two_arities_is_two_predicates() {
    let description = "\
initiatedAt(towing(V)=true, T) :- happensAt(slow(V), T), vesselType(V, Type), vesselType(Type).
dynamicDomain(vessel(_)).
grounding(slow(V)) :- vessel(V).
grounding(towing(V)=true) :- vessel(V).
vesselType(v1, tug).
vesselType(v2, cargo).
vesselType(tug).
buildFromPoints(_) :- fail.
";
    let files = [
        ("types.prolog", description),
        ("slow.csv", "slow|1|1|v1\nslow|2|2|v2\n"),
    ];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        assert_eq!(common::sorted(&out), ["towing(v1,true) [2,3)"], "{engine}");
    }
}

/// A deadline's delay given by background knowledge (maritime's `fi(…, TrawlingCrs) :-
/// thresholds(trawlingCrs, TrawlingCrs).`) is the number its fact gives: the description
/// runs as with the number written. A delay the facts give two values, or none, is an
/// error that says so.
#[test]
fn a_deadline_delay_from_background_knowledge_is_its_facts_number() {
    let rest = "\
initiatedAt(moving(V)=true, T) :- happensAt(go(V), T).
thresholds(crs, 3).
thresholds(other, 7).
dynamicDomain(vessel(_)).
grounding(go(V)) :- vessel(V).
grounding(moving(V)=true) :- vessel(V).
grounding(moving(V)=false) :- vessel(V).
";
    let records = ("go.csv", "go|1|1|v1\ngo|3|3|v2\ngo|4|4|v1\ngo|12|12|v3\n");
    let given =
        format!("fi(moving(V)=true, moving(V)=false, Crs) :- thresholds(crs, Crs).\n{rest}");
    let written = format!("fi(moving(V)=true, moving(V)=false, 3).\n{rest}");
    let out = run_description(
        &[("given.prolog", &given), records],
        &["--mode", "intervals"],
    );
    let expected = run_description(
        &[("written.prolog", &written), records],
        &["--mode", "intervals"],
    );
    assert!(out.contains("moving(v1,false)"), "{out}");
    assert_eq!(out, expected);

    for (delay, message) in [
        (
            "thresholds(_, Crs)",
            "the background facts give the delay `Crs` 2 values: 3, 7",
        ),
        (
            "thresholds(none, Crs)",
            "no background fact gives the delay `Crs`",
        ),
    ] {
        let text = format!("fi(moving(V)=true, moving(V)=false, Crs) :- {delay}.\n{rest}");
        let stderr = refused("bad.prolog", &text);
        assert!(
            stderr.contains("E504") && stderr.contains(message),
            "{stderr}"
        );
    }
}

/// A background rule whose head has a variable its body does not bind (maritime's
/// `oneIsTug(V1, _V2) :- vesselType(V1, tug).`: for any V2) is read as Prolog calls it:
/// held where one of its clauses holds, negated where none does, in holdsFor rules,
/// time-point rules and grounding declarations alike.
#[test]
fn a_background_rule_for_any_value_of_a_head_variable_holds_as_prolog_calls_it() {
    let description = "\
initiatedAt(near(V1, V2)=true, T) :- happensAt(meet(V1, V2), T).
terminatedAt(near(V1, V2)=true, T) :- happensAt(part(V1, V2), T).
holdsFor(tugging(V1, V2)=true, I) :-
    holdsFor(near(V1, V2)=true, In), oneIsTug(V1, V2), intersect_all([In], I).
holdsFor(meeting(V1, V2)=true, I) :-
    holdsFor(near(V1, V2)=true, In), \\+ oneIsTug(V1, V2), intersect_all([In], I).
initiatedAt(alarm(V1)=true, T) :- happensAt(meet(V1, V2), T), oneIsTug(V1, V2).
oneIsTug(V1, _V2) :- vesselType(V1, tug).
oneIsTug(_V1, V2) :- vesselType(V2, tug).
vesselType(v1, tug).
vesselType(v2, cargo).
vesselType(v3, cargo).
dynamicDomain(pair(_, _)).
grounding(meet(V1, V2)) :- pair(V1, V2).
grounding(part(V1, V2)) :- pair(V1, V2).
grounding(near(V1, V2)=true) :- pair(V1, V2).
grounding(tugging(V1, V2)=true) :- pair(V1, V2).
grounding(meeting(V1, V2)=true) :- pair(V1, V2).
grounding(alarm(V1)=true) :- pair(V1, V2), oneIsTug(V1, V2).
";
    let records = "meet|1|1|v1|v2\nmeet|2|2|v2|v1\nmeet|3|3|v2|v3\npart|6|6|v1|v2\n";
    let files = [("tugs.prolog", description), ("moves.csv", records)];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        let derived: Vec<String> = common::sorted(&out)
            .into_iter()
            .filter(|line| !line.starts_with("near"))
            .collect();
        assert_eq!(
            derived,
            [
                "alarm(v1,true) [2,7)",
                "alarm(v2,true) [3,7)",
                "meeting(v2,v3,true) [4,7)",
                "tugging(v1,v2,true) [2,7)",
                "tugging(v2,v1,true) [3,7)",
            ],
            "{engine}: {out}"
        );
    }
}

/// A background rule of comparisons only (maritime's `inRange(Var, Min, Max) :- Var >
/// Min, Var < Max.`) is its comparisons where it is a condition, held or negated, and
/// `inf` in it is infinity, as in Prolog's arithmetic.
#[test]
fn a_background_rule_of_comparisons_is_its_comparisons() {
    let description = "\
initiatedAt(fast(V)=true, T) :- happensAt(velocity(V, S), T), inRange(S, 10, inf).
initiatedAt(slow(V)=true, T) :- happensAt(velocity(V, S), T), inRange(S, 0, 5).
initiatedAt(odd(V)=true, T) :-
    happensAt(velocity(V, S), T), \\+ inRange(S, 0, 5), \\+ inRange(S, 10, inf).
inRange(Var, Min, Max) :- Var > Min, Var < Max.
dynamicDomain(vessel(_)).
grounding(velocity(V, _)) :- vessel(V).
grounding(fast(V)=true) :- vessel(V).
grounding(slow(V)=true) :- vessel(V).
grounding(odd(V)=true) :- vessel(V).
";
    let records = "velocity|1|1|v1|12\nvelocity|2|2|v2|3\nvelocity|3|3|v3|7\n\
                   velocity|4|4|v4|0\nvelocity|6|6|v5|20\n";
    let files = [("speeds.prolog", description), ("speeds.csv", records)];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        assert_eq!(
            common::sorted(&out),
            [
                "fast(v1,true) [2,7)",
                "odd(v3,true) [4,7)",
                "odd(v4,true) [5,7)",
                "slow(v2,true) [3,7)",
            ],
            "{engine}"
        );
    }
}

/// Background rules of arithmetic (maritime's `absoluteAngleDiff`, which calls `fmod`,
/// in `compare.prolog`) are their assignments where they are a condition; Prolog's
/// functions (`abs`, `floor`) are TD's, and Prolog's `/` does not truncate. The file also
/// defines RTEC's `intDurGreater` and `intDurLess` for Prolog: those definitions are not
/// read (W508). By hand: v1 (350 against 10) differs by 20; v2 (10 against 350) by 20,
/// where a truncating `/` would give 340 (−160 / 360 is 0, not −0.44, so `floor` is 0,
/// not −1); v3 by 70 at 3, then by 10 at 5, so drifting holds from 4 until 5 is past.
/// 7 / 2 is 3.5 > 3 (v4 goes half fast), 6 / 2 is 3 (v5 does not).
#[test]
fn a_background_rule_of_arithmetic_is_its_assignments() {
    let rules = "\
initiatedAt(drifting(V)=true, T) :-
    happensAt(velocity(V, Course, Heading), T),
    absoluteAngleDiff(Course, Heading, Diff), Diff > 45.
terminatedAt(drifting(V)=true, T) :-
    happensAt(velocity(V, Course, Heading), T),
    absoluteAngleDiff(Course, Heading, Diff), Diff =< 45.
initiatedAt(halfFast(V)=true, T) :- happensAt(speed(V, S), T), Half is S / 2, Half > 3.
dynamicDomain(vessel(_)).
grounding(velocity(V, _, _)) :- vessel(V).
grounding(speed(V, _)) :- vessel(V).
grounding(drifting(V)=true) :- vessel(V).
grounding(halfFast(V)=true) :- vessel(V).
";
    let compare = "\
% the angle between two headings, from 0 to 180
absoluteAngleDiff(X, Y, D) :- A is X - Y + 180, fmod(A, 360, M), D is abs(M - 180).
fmod(A, B, M) :- Q is A / B, F is floor(Q) * B, M is A - F.
% Prolog's own versions of RTEC's interval manipulation
intDurGreater(L, D, I) :-
    findall((S, E), (member((S, E), L), (E \\= inf -> E - S > D ; true)), I).
intDurLess(L, D, I) :- findall((S, E), (member((S, E), L), E - S < D), I).
";
    let records = "velocity|1|1|v1|350|10\nvelocity|2|2|v2|10|350\nspeed|2|2|v4|7\n\
                   velocity|3|3|v3|100|30\nspeed|3|3|v5|6\nvelocity|5|5|v3|100|90\n\
                   speed|6|6|v5|5\n";
    let files = [
        ("rules.prolog", rules),
        ("compare.prolog", compare),
        ("moves.csv", records),
    ];
    for engine in ["dataflow", "reference"] {
        let out = run_description(&files, &["--mode", "intervals", "--engine", engine]);
        assert_eq!(
            common::sorted(&out),
            ["drifting(v3,true) [4,6)", "halfFast(v4,true) [3,7)"],
            "{engine}"
        );
    }
    let dir = tempdir();
    for (name, text) in &files[..2] {
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }
    let output = stgflow()
        .arg("check")
        .arg(dir.join("rules.prolog"))
        .arg(dir.join("compare.prolog"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for name in ["intDurGreater/3", "intDurLess/3"] {
        assert!(
            stderr.contains(&format!(
                "[W508] Warning: this definition of `{name}` is not read"
            )),
            "{stderr}"
        );
    }
}

/// RTEC breaks a value where another value its rules' heads name is initiated, although
/// the fluent's grounding names its value by a variable and a termination names it so
/// (`movingSpeed(V)=_Status`, as RTEC's maritime writes it): `speed=below`, initiated at
/// 12, ends `speed=normal` there. The expected lines are what RTEC (aartikis/RTEC,
/// `run_rtec.sh`, one window (0, 20]) printed for these files.
#[test]
fn a_value_named_by_a_rule_head_breaks_the_others_where_the_grounding_names_any() {
    let description = "\
initiatedAt(speed(V)=below, T) :- happensAt(velocity(V, S), T), S < 5.
initiatedAt(speed(V)=normal, T) :- happensAt(velocity(V, S), T), S >= 5.
terminatedAt(speed(V)=_Status, T) :- happensAt(velocity(V, S), T), S < 1.
dynamicDomain(vessel(_)).
grounding(velocity(V, _)) :- vessel(V).
grounding(speed(V)=Status) :- vessel(V), status(Status).
status(below). status(normal).
";
    let records = "velocity|5|5|v|6\nvelocity|12|12|v|3\nvelocity|18|18|v|0\n";
    let files = [("speed.prolog", description), ("speed.csv", records)];
    assert_rtec_lines(
        &files,
        "20",
        &[
            "recognitions(predictions,speed,[[v],below],[(13,19)]).",
            "recognitions(predictions,speed,[[v],normal],[(6,13)]).",
        ],
    );
}

/// An initiation at the time point where an `end` terminates the value starts nothing,
/// as a termination there does: at 6, `drifting` is initiated while `underWay` holds and
/// `underWay` ends (RTEC's `end` is its last time point, which a stream knows a point
/// later). The expected lines are what RTEC (`run_rtec.sh`, one window (0, 20]) printed.
#[test]
fn an_initiation_where_an_end_terminates_the_value_starts_nothing() {
    let description = "\
initiatedAt(moving(V)=true, T) :- happensAt(velocity(V, S, _), T), S > 1.
terminatedAt(moving(V)=true, T) :- happensAt(velocity(V, S, _), T), S =< 1.
holdsFor(underWay(V)=true, I) :- holdsFor(moving(V)=true, I1), union_all([I1], I).
initiatedAt(drifting(V)=true, T) :-
    happensAt(velocity(V, _, A), T), A > 40, holdsAt(underWay(V)=true, T).
terminatedAt(drifting(V)=true, T) :- happensAt(end(underWay(V)=true), T).
dynamicDomain(vessel(_)).
grounding(velocity(V, _, _)) :- vessel(V).
grounding(moving(V)=true) :- vessel(V).
grounding(underWay(V)=true) :- vessel(V).
grounding(drifting(V)=true) :- vessel(V).
";
    let records = "velocity|2|2|v1|5|10\nvelocity|4|4|v1|5|10\nvelocity|6|6|v1|0|90\n\
                   velocity|8|8|v1|5|10\nvelocity|10|10|v1|5|60\nvelocity|14|14|v1|0|10\n";
    let files = [("drift.prolog", description), ("drift.csv", records)];
    assert_rtec_lines(
        &files,
        "20",
        &[
            "recognitions(predictions,drifting,[[v1],true],[(11,15)]).",
            "recognitions(predictions,moving,[[v1],true],[(3,7),(9,15)]).",
            "recognitions(predictions,underWay,[[v1],true],[(3,7),(9,15)]).",
        ],
    );
}

/// A deadline that `p` lets re-initiations postpone is postponed by a re-initiation with
/// immediate effect too: `busy=true`, initiated by the `start` of `changing` at 3 and
/// again at 8, ends at 8 + 10, not 3 + 10 (maritime's `sarMovement`). The expected lines
/// are what RTEC (`run_rtec.sh`, one window (0, 30]) printed for these files.
#[test]
fn a_re_initiation_by_a_start_postpones_a_deadline() {
    let description = "\
initiatedAt(changing(V)=true, T) :- happensAt(change_start(V), T).
terminatedAt(changing(V)=true, T) :- happensAt(change_end(V), T).
initiatedAt(busy(V)=true, T) :- happensAt(start(changing(V)=true), T).
fi(busy(V)=true, busy(V)=false, 10).
p(busy(_V)=true).
dynamicDomain(vessel(_)).
grounding(change_start(V)) :- vessel(V).
grounding(change_end(V)) :- vessel(V).
grounding(changing(V)=true) :- vessel(V).
grounding(busy(V)=true) :- vessel(V).
grounding(busy(V)=false) :- vessel(V).
";
    let records = "change_start|3|3|v\nchange_end|5|5|v\nchange_start|8|8|v\nchange_end|9|9|v\n";
    let files = [("busy.prolog", description), ("busy.csv", records)];
    assert_rtec_lines(
        &files,
        "30",
        &[
            "recognitions(predictions,busy,[[v],false],[(19,31)]).",
            "recognitions(predictions,busy,[[v],true],[(4,19)]).",
            "recognitions(predictions,changing,[[v],true],[(4,6),(9,10)]).",
        ],
    );
}
