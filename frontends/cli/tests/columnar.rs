//! Parquet and Arrow IPC files as streams: the same facts as a CSV stream give the same
//! output, byte for byte, on one and several workers and the reference evaluator; a row
//! that breaks the stream's rules is named by its row, its row group (record batch) and
//! the fact it holds.

mod common;

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::FileWriter;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use common::{output_of, root, stdout_of, tempdir};

/// One fact of the stream: time, predicate, arguments (integers or names).
type Fact = (i64, &'static str, Vec<Arg>);

#[derive(Clone)]
enum Arg {
    Int(i64),
    Float(f64),
    Name(String),
}

/// `facts` as a batch of `predicate`, `time` and `arg1`…`argN` columns (a column of
/// integers where every value in it is one, of floats where every value is a float, else
/// of text).
fn batch_of(facts: &[Fact]) -> RecordBatch {
    let width = facts.iter().map(|f| f.2.len()).max().unwrap_or(0);
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (
            "predicate".into(),
            Arc::new(StringArray::from_iter_values(facts.iter().map(|f| f.1))),
        ),
        (
            "time".into(),
            Arc::new(Int64Array::from_iter_values(facts.iter().map(|f| f.0))),
        ),
    ];
    for i in 0..width {
        let cells: Vec<Option<&Arg>> = facts.iter().map(|f| f.2.get(i)).collect();
        let numbers = cells.iter().flatten().all(|a| matches!(a, Arg::Int(_)));
        let floats = cells.iter().flatten().all(|a| matches!(a, Arg::Float(_)));
        let column: ArrayRef = if floats {
            Arc::new(Float64Array::from(
                (cells.iter())
                    .map(|c| c.map(|a| if let Arg::Float(f) = a { *f } else { 0.0 }))
                    .collect::<Vec<_>>(),
            ))
        } else if numbers {
            Arc::new(Int64Array::from(
                (cells.iter())
                    .map(|c| c.map(|a| if let Arg::Int(n) = a { *n } else { 0 }))
                    .collect::<Vec<_>>(),
            ))
        } else {
            Arc::new(StringArray::from(
                (cells.iter())
                    .map(|c| {
                        c.map(|a| match a {
                            Arg::Int(n) => n.to_string(),
                            Arg::Float(f) => f.to_string(),
                            Arg::Name(s) => s.clone(),
                        })
                    })
                    .collect::<Vec<_>>(),
            ))
        };
        columns.push((format!("arg{}", i + 1), column));
    }
    RecordBatch::try_from_iter(columns).unwrap_or_else(|e| panic!("{e}"))
}

/// `facts` as a Parquet file (see [`batch_of`]), row groups of `group` rows.
fn write_parquet(path: &Path, facts: &[Fact], group: usize) {
    parquet_file(path, &batch_of(facts), group);
}

/// Writes a batch to a file in pieces of so many rows.
type Writer = fn(&Path, &RecordBatch, usize);

/// `batch` as a Parquet file, row groups of `group` rows.
fn parquet_file(path: &Path, batch: &RecordBatch, group: usize) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{e}"));
    let properties = WriterProperties::builder()
        .set_max_row_group_size(group)
        .build();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(properties))
        .unwrap_or_else(|e| panic!("{e}"));
    writer.write(batch).unwrap_or_else(|e| panic!("{e}"));
    writer.close().unwrap_or_else(|e| panic!("{e}"));
}

/// `facts` as an Arrow IPC file (see [`batch_of`]), record batches of `rows` rows.
fn write_arrow(path: &Path, facts: &[Fact], rows: usize) {
    arrow_file(path, &batch_of(facts), rows);
}

/// `batch` as an Arrow IPC file, record batches of `rows` rows.
fn arrow_file(path: &Path, batch: &RecordBatch, rows: usize) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{e}"));
    let mut writer = FileWriter::try_new(file, &batch.schema()).unwrap_or_else(|e| panic!("{e}"));
    for start in (0..batch.num_rows()).step_by(rows) {
        let slice = batch.slice(start, rows.min(batch.num_rows() - start));
        writer.write(&slice).unwrap_or_else(|e| panic!("{e}"));
    }
    writer.finish().unwrap_or_else(|e| panic!("{e}"));
}

/// `facts` as CSV lines `time,predicate,arg…`.
fn write_csv(path: &Path, facts: &[Fact]) {
    let mut text = String::new();
    for (time, predicate, args) in facts {
        text.push_str(&format!("{time},{predicate}"));
        for arg in args {
            match arg {
                Arg::Int(n) => text.push_str(&format!(",{n}")),
                Arg::Float(f) => text.push_str(&format!(",{f:?}")),
                Arg::Name(s) => text.push_str(&format!(",{s}")),
            }
        }
        text.push('\n');
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// Repairs and warnings of devices by name, and readings with a number (a predicate the
/// program does not read: skipped alike), over 300 time points.
fn device_stream() -> Vec<Fact> {
    device_stream_of(300)
}

/// [`device_stream`] over `points` time points.
fn device_stream_of(points: i64) -> Vec<Fact> {
    let mut facts = Vec::new();
    for t in 0..points {
        let device = Arg::Name(format!("d{}", t % 7));
        facts.push((
            t,
            if t % 3 == 0 { "warning" } else { "repair" },
            vec![device.clone()],
        ));
        if t % 5 == 0 {
            facts.push((t, "reading", vec![device, Arg::Int(t * 10)]));
        }
    }
    facts
}

#[test]
fn parquet_and_arrow_streams_give_the_csv_streams_output_on_every_path() {
    let dir = tempdir();
    let facts = device_stream();
    let (parquet, csv) = (dir.join("events.parquet"), dir.join("events.csv"));
    let arrow = dir.join("events.arrow");
    write_parquet(&parquet, &facts, 64);
    write_arrow(&arrow, &facts, 50);
    write_csv(&csv, &facts);
    let program = "datasets/examples/device_safety.tdl";
    for mode in ["points", "changes", "intervals"] {
        for path in [&["-w", "1"][..], &["-w", "3"], &["--engine", "reference"]] {
            let run = |stream: &Path, format: &[&str]| {
                let mut args = vec![
                    "run",
                    program,
                    stream.to_str().unwrap_or_default(),
                    "--mode",
                    mode,
                ];
                args.extend(format);
                args.extend(path);
                stdout_of(&args)
            };
            let from_csv = run(&csv, &["--format", "csv"]);
            assert!(from_csv.lines().count() > 100, "{mode} {path:?}");
            assert!(
                run(&parquet, &[]) == from_csv,
                "{mode} {path:?}: Parquet differs from CSV"
            );
            assert!(
                run(&arrow, &[]) == from_csv,
                "{mode} {path:?}: Arrow differs from CSV"
            );
        }
    }
}

/// The arguments of a run of `program` over `stream` in `mode` on `workers` workers, read
/// in parts of about `part_bytes` (a row weighing as a text line).
fn in_parts<'a>(
    program: &'a str,
    stream: &'a str,
    mode: &'a str,
    workers: &'a str,
) -> Vec<&'a str> {
    let parts = ["--part-bytes", "700", "--stats"];
    let mut args = vec!["run", program, stream, "--mode", mode, "-w", workers];
    args.extend(parts);
    args
}

#[test]
fn columnar_streams_read_in_parts_give_the_sequential_csv_output() {
    let dir = tempdir();
    let facts = device_stream_of(1000);
    let (parquet, arrow, csv) = (
        dir.join("events.parquet"),
        dir.join("events.arrow"),
        dir.join("events.csv"),
    );
    write_parquet(&parquet, &facts, 100);
    write_arrow(&arrow, &facts, 90);
    write_csv(&csv, &facts);
    // Recursion through time, by key; and a window, by time.
    let window = dir.join("window.tdl");
    let rules = "seen(X, T) :- warning(X, T-4).\npair(X, Y, T) :- seen(X, T), repair(Y, T-1).\n";
    std::fs::write(&window, rules).unwrap_or_else(|e| panic!("{e}"));
    let programs: [(&str, &str, &[&str]); 2] = [
        // Points of a recursion through time, and intervals of parts by time, go the
        // threaded way.
        (
            "datasets/examples/device_safety.tdl",
            "by key",
            &["changes", "intervals"],
        ),
        (
            window.to_str().unwrap_or_default(),
            "by time",
            &["points", "changes"],
        ),
    ];
    for (program, how, modes) in programs {
        for &mode in modes {
            let csv = csv.to_str().unwrap_or_default();
            let args = [
                "run", program, csv, "--format", "csv", "--mode", mode, "-w", "1",
            ];
            let sequential = stdout_of(&args);
            assert!(sequential.lines().count() > 300, "{program} {mode}");
            for stream in [&parquet, &arrow] {
                let stream = stream.to_str().unwrap_or_default();
                for workers in ["2", "4"] {
                    let output = output_of(&in_parts(program, stream, mode, workers));
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    assert!(output.status.success(), "{stderr}");
                    // Read in parts, many of them within a row group.
                    assert!(
                        stderr.contains(&format!("parallel      {how}"))
                            && !stderr.contains(" 1 part(s)"),
                        "{program} {mode}: {stderr}"
                    );
                    assert!(
                        output.stdout == sequential.as_bytes(),
                        "{program} {mode} {stream} -w {workers}: differs from the sequential CSV"
                    );
                }
            }
        }
    }
    // A table handed over is read in parts as a file is.
    let table = batch_of(&facts);
    let program = "datasets/examples/device_safety.tdl";
    let (code, from_table, stderr) =
        run_with_table(&in_parts(program, "<table>", "changes", "3"), &table, 70);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("parallel      by key"), "{stderr}");
    let csv = csv.to_str().unwrap_or_default();
    let args = [
        "run", program, csv, "--format", "csv", "--mode", "changes", "-w", "1",
    ];
    assert!(from_table == stdout_of(&args), "the table in parts differs");
}

#[test]
fn a_bad_row_read_in_parts_ends_the_run_as_read_whole() {
    let dir = tempdir();
    let name = |t: i64| vec![Arg::Name(format!("d{}", t % 5))];
    let mut facts: Vec<Fact> = (0..600i64).map(|t| (t / 2, "repair", name(t))).collect();
    // A row back in time deep into the stream; and, in another file, a time off the tick.
    let mut back = facts.clone();
    back[450].0 = 10;
    facts[450].0 = 225 * 2 + 1;
    let odd: Vec<Fact> = facts
        .iter()
        .map(|(t, p, a)| (t * 2, *p, a.clone()))
        .collect();
    let mut odd = odd;
    odd[450].0 = 451;
    let cases: [(&str, &Vec<Fact>, &[&str], &str); 2] = [
        ("back", &back, &[], "E102"),
        (
            "odd",
            &odd,
            &["--tick", "2"],
            "not a multiple of the clock tick",
        ),
    ];
    for (stem, facts, tick, expected) in cases {
        for (ending, write) in [("parquet", parquet_file as Writer), ("arrow", arrow_file)] {
            let path = dir.join(format!("{stem}.{ending}"));
            write(&path, &batch_of(facts), 64);
            let path = path.to_str().unwrap_or_default();
            let run = |more: &[&str]| {
                let mut args = vec!["run", "datasets/examples/device_safety.tdl", path];
                args.extend(["--mode", "changes"]);
                args.extend(tick);
                args.extend(more);
                output_of(&args)
            };
            let whole = run(&["-w", "1"]);
            let whole_err = String::from_utf8_lossy(&whole.stderr);
            assert_eq!(whole.status.code(), Some(1), "{whole_err}");
            assert!(whole_err.contains(expected), "{whole_err}");
            assert!(whole_err.contains("row 2 in it"), "{whole_err}");
            assert!(!whole.stdout.is_empty(), "{stem}.{ending}");
            for workers in ["2", "3"] {
                let parts = run(&["-w", workers, "--part-bytes", "500"]);
                let parts_err = String::from_utf8_lossy(&parts.stderr);
                assert_eq!(parts.status.code(), Some(1), "{parts_err}");
                assert!(
                    parts.stdout == whole.stdout,
                    "{stem}.{ending} -w {workers}: output differs"
                );
                let first = |text: &str| text.lines().next().unwrap_or_default().to_owned();
                assert_eq!(first(&parts_err), first(&whole_err), "{stem}.{ending}");
            }
        }
    }
}

/// `stgflow ARGS` through the library, with `table` handed over in memory as the stream
/// `<table>` (as the Python package hands over a DataFrame): the exit code, standard
/// output and standard error.
fn run_with_table(args: &[&str], table: &RecordBatch, rows: usize) -> (i32, String, String) {
    let batches = (0..table.num_rows())
        .step_by(rows)
        .map(|start| table.slice(start, rows.min(table.num_rows() - start)))
        .collect();
    let streams = stgflow_cli::Streams {
        tables: vec![stgflow_cli::StreamTable {
            name: "<table>".to_owned(),
            schema: table.schema(),
            batches,
        }],
        ..Default::default()
    };
    let (code, out, err) = in_process(args, streams);
    (
        code,
        String::from_utf8(out).unwrap_or_else(|e| panic!("{e}")),
        err,
    )
}

/// `stgflow ARGS` through the library, in this process, with `streams` (the paths under
/// `datasets/` from the repository root): the exit code, standard output and standard
/// error.
fn in_process(args: &[&str], streams: stgflow_cli::Streams) -> (i32, Vec<u8>, String) {
    let root = root();
    let args = args.iter().map(|a| match a.starts_with("datasets/") {
        true => root.join(a).to_string_lossy().into_owned(),
        false => (*a).to_owned(),
    });
    let argv = std::iter::once("stgflow".to_owned()).chain(args);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = stgflow_cli::run(argv, std::io::empty(), &mut out, &mut err, streams);
    (code, out, String::from_utf8_lossy(&err).into_owned())
}

#[test]
fn a_table_handed_over_gives_the_csv_streams_output_on_every_path() {
    let dir = tempdir();
    let facts = device_stream();
    let csv = dir.join("events.csv");
    write_csv(&csv, &facts);
    let table = batch_of(&facts);
    let program = "datasets/examples/device_safety.tdl";
    for mode in ["points", "changes", "intervals"] {
        for path in [&["-w", "1"][..], &["-w", "3"], &["--engine", "reference"]] {
            let csv = csv.to_str().unwrap_or_default();
            let mut csv_args = vec!["run", program, csv, "--format", "csv", "--mode", mode];
            csv_args.extend(path);
            let from_csv = stdout_of(&csv_args);
            assert!(from_csv.lines().count() > 100, "{mode} {path:?}");
            let mut args = vec!["run", program, "<table>", "--mode", mode];
            args.extend(path);
            let (code, from_table, stderr) = run_with_table(&args, &table, 50);
            assert_eq!(code, 0, "{stderr}");
            assert!(
                from_table == from_csv,
                "{mode} {path:?}: the table differs from CSV"
            );
        }
    }
}

#[test]
fn a_table_handed_over_names_its_bad_row_and_keeps_the_output_before_it() {
    let facts: Vec<Fact> = [1, 2, 3, 9, 4]
        .into_iter()
        .map(|t| (t, "repair", vec![Arg::Name("d1".into())]))
        .collect();
    let args = ["run", "datasets/examples/device_safety.tdl", "<table>"];
    let (code, stdout, stderr) = run_with_table(&args, &batch_of(&facts), 2);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("E102") && stderr.contains("(record batch 2, row 0 in it)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("<table>:5:1") && stderr.contains("4,repair,d1"),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("safe(d1,2).\n") && stdout.ends_with("trusted(d1,8).\n"),
        "{stdout}"
    );
    let unnamed = RecordBatch::try_from_iter([(
        "name",
        Arc::new(StringArray::from_iter_values(["a"])) as ArrayRef,
    )])
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, _, stderr) = run_with_table(&args, &unnamed, 1);
    assert_eq!(code, 1, "{stderr}");
    let missing = "an Arrow stream needs a `predicate` and a `time` column; it has name";
    assert!(stderr.contains(missing), "{stderr}");
}

/// The changes `rule` derives from `facts` read from a columnar file (`name`, written by
/// `write`), which must be those it derives from the same facts as CSV.
fn changes_as_from_csv(rule: &str, facts: &[Fact], (name, write): (&str, Writer)) -> String {
    let dir = tempdir();
    let program = dir.join("window.tdl");
    std::fs::write(&program, rule).unwrap_or_else(|e| panic!("{e}"));
    let (columnar, csv) = (dir.join(name), dir.join("p.csv"));
    write(&columnar, &batch_of(facts), 64);
    write_csv(&csv, facts);
    let program = program.to_str().unwrap_or_default();
    let run = |stream: &Path, format: &[&str]| {
        let mut args = vec!["run", program, stream.to_str().unwrap_or_default()];
        args.extend(format);
        args.extend(["--mode", "changes"]);
        stdout_of(&args)
    };
    let from_csv = run(&csv, &["--format", "csv"]);
    assert!(run(&columnar, &[]) == from_csv, "{name} differs from CSV");
    from_csv
}

#[test]
fn integer_columns_are_numbers_as_in_csv() {
    let facts: Vec<Fact> = (0..500i64)
        .map(|t| (t / 3, "p", vec![Arg::Int(t), Arg::Name(format!("n{t}"))]))
        .collect();
    let rule = "q(A, B, T) :- p(A, B, T-2).\n";
    let changes = changes_as_from_csv(rule, &facts, ("p.parquet", parquet_file));
    assert!(changes.contains("+q(7,n7) @4"), "{changes:.200}");
}

#[test]
fn float_columns_are_floats_as_in_csv() {
    let facts: Vec<Fact> = (0..200i64)
        .map(|t| (t / 2, "p", vec![Arg::Float(t as f64 / 4.0), Arg::Int(t)]))
        .collect();
    let rule = "q(A, B, T) :- p(A, B, T-1).\n";
    let changes = changes_as_from_csv(rule, &facts, ("p.arrow", arrow_file));
    assert!(changes.contains("+q(0.25,1) @1"), "{changes:.200}");
}

/// The columns of [`batch_of`] with each text and integer column as another type arrow
/// has for it: per variant, the predicate's, the time's and the two arguments' types.
fn retyped(batch: &RecordBatch, variant: usize) -> RecordBatch {
    use arrow_array::types::Int32Type;
    use arrow_array::{
        Array, DictionaryArray, Int32Array, LargeStringArray, StringViewArray, UInt32Array,
        UInt64Array,
    };
    let text = |i: usize| -> Vec<Option<String>> {
        let column = (batch.column(i).as_any())
            .downcast_ref::<StringArray>()
            .unwrap_or_else(|| panic!("column {i} is not text"));
        (0..column.len())
            .map(|r| column.is_valid(r).then(|| column.value(r).to_owned()))
            .collect()
    };
    let integers = |i: usize| -> Vec<Option<i64>> {
        let column = (batch.column(i).as_any())
            .downcast_ref::<Int64Array>()
            .unwrap_or_else(|| panic!("column {i} is not integers"));
        (0..column.len())
            .map(|r| column.is_valid(r).then(|| column.value(r)))
            .collect()
    };
    let as_text = |values: Vec<Option<String>>, kind: usize| -> ArrayRef {
        match kind {
            0 => Arc::new(LargeStringArray::from(values)),
            1 => Arc::new(StringViewArray::from(values)),
            _ => Arc::new(
                (values.iter())
                    .map(Option::as_deref)
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
        }
    };
    let as_integers = |values: Vec<Option<i64>>, kind: usize| -> ArrayRef {
        match kind {
            0 => Arc::new(Int32Array::from_iter(
                values.iter().map(|v| v.map(|v| v as i32)),
            )),
            1 => Arc::new(UInt32Array::from_iter(
                values.iter().map(|v| v.map(|v| v as u32)),
            )),
            _ => Arc::new(UInt64Array::from_iter(
                values.iter().map(|v| v.map(|v| v as u64)),
            )),
        }
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("predicate", as_text(text(0), (variant + 2) % 3)),
        ("time", as_integers(integers(1), variant)),
        ("arg1", as_text(text(2), variant)),
        ("arg2", as_integers(integers(3), (variant + 1) % 3)),
    ];
    RecordBatch::try_from_iter(columns).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn text_and_integer_columns_of_every_type_read_as_their_csv() {
    let dir = tempdir();
    let facts: Vec<Fact> = (0..600i64)
        .map(|t| {
            let predicate = if t % 5 == 0 { "r" } else { "p" };
            let name = format!("a_name_longer_than_inline_{}", t % 7);
            (t / 3, predicate, vec![Arg::Name(name), Arg::Int(t % 11)])
        })
        .collect();
    let program = dir.join("window.tdl");
    std::fs::write(
        &program,
        "q(A, B, T) :- p(A, B, T-2).
q(A, B, T) :- r(A, B, T).
",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let csv = dir.join("p.csv");
    write_csv(&csv, &facts);
    let program = program.to_str().unwrap_or_default();
    let run = |stream: &Path, workers: &str| {
        let stream = stream.to_str().unwrap_or_default();
        let mut args = vec!["run", program, stream, "--mode", "changes", "-w", workers];
        if stream.ends_with(".csv") {
            args.extend(["--format", "csv"]);
        } else {
            args.extend(["--part-bytes", "700"]);
        }
        stdout_of(&args)
    };
    let from_csv = run(&csv, "1");
    assert!(
        from_csv.contains("+q(a_name_longer_than_inline_3,3) @3"),
        "{from_csv:.300}"
    );
    let batch = batch_of(&facts);
    for variant in 0..3 {
        let retyped = retyped(&batch, variant);
        for (name, write) in [
            ("p.parquet", parquet_file as Writer),
            ("p.arrow", arrow_file),
        ] {
            let path = dir.join(format!("{variant}{name}"));
            write(&path, &retyped, 64);
            for workers in ["1", "3"] {
                let output = run(&path, workers);
                assert!(
                    output == from_csv,
                    "{name}, variant {variant} ({:?}), -w {workers}: differs from CSV",
                    retyped.schema()
                );
            }
        }
    }
}

#[test]
fn a_row_out_of_order_is_named_by_row_and_row_group_or_record_batch() {
    let dir = tempdir();
    let facts: Vec<Fact> = [1, 2, 3, 9, 4]
        .into_iter()
        .map(|t| (t, "repair", vec![Arg::Name("d1".into())]))
        .collect();
    let (parquet, arrow) = (dir.join("back.parquet"), dir.join("back.arrow"));
    write_parquet(&parquet, &facts, 2);
    write_arrow(&arrow, &facts, 2);
    for (stream, place) in [(&parquet, "row group 2"), (&arrow, "record batch 2")] {
        let output = output_of(&[
            "run",
            "datasets/examples/device_safety.tdl",
            stream.to_str().unwrap_or_default(),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("E102"), "{stderr}");
        assert!(
            stderr.contains(&format!("({place}, row 0 in it)")),
            "{stderr}"
        );
        let name = stream
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert!(stderr.contains(&format!("{name}:5:1")), "{stderr}");
        assert!(stderr.contains("4,repair,d1"), "{stderr}");
        // Time points 1..8 are complete (a row of 9 came): their output is written.
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.starts_with("safe(d1,2).\n") && stdout.ends_with("trusted(d1,8).\n"),
            "{stdout}"
        );
    }
}

#[test]
fn a_file_without_the_stream_columns_is_refused_with_what_it_has() {
    let dir = tempdir();
    let batch = RecordBatch::try_from_iter([(
        "name",
        Arc::new(StringArray::from_iter_values(["a"])) as ArrayRef,
    )])
    .unwrap_or_else(|e| panic!("{e}"));
    let written: [(&str, Writer, &str); 2] = [
        ("plain.parquet", parquet_file, "a Parquet"),
        ("plain.arrow", arrow_file, "an Arrow"),
    ];
    for (name, write, format) in written {
        let path = dir.join(name);
        write(&path, &batch, 10);
        let stderr = refused(&path);
        let missing =
            format!("{format} stream needs a `predicate` and a `time` column; it has name");
        assert!(stderr.contains(&missing), "{stderr}");
        std::fs::write(&path, "not columns").unwrap_or_else(|e| panic!("{e}"));
        let stderr = refused(&path);
        let unreadable = format!("as {}", format.split(' ').nth(1).unwrap_or_default());
        assert!(
            stderr.contains("E103") && stderr.contains(&unreadable),
            "{stderr}"
        );
    }
}

/// The standard error of a run over `stream`, which must exit 1 without a panic.
fn refused(stream: &Path) -> String {
    let output = output_of(&[
        "run",
        "datasets/examples/device_safety.tdl",
        stream.to_str().unwrap_or_default(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn stats_count_the_records_of_a_run_to_records_as_lines() {
    let dir = tempdir();
    let csv = dir.join("events.csv");
    write_csv(&csv, &device_stream());
    let args = [
        "run",
        "datasets/examples/device_safety.tdl",
        csv.to_str().unwrap_or_default(),
        "--format",
        "csv",
        "--mode",
        "changes",
        "--stats",
    ];
    let lines = stdout_of(&args[..7]).lines().count();
    assert!(lines > 100);
    let streams = stgflow_cli::Streams {
        records: true,
        ..Default::default()
    };
    let (code, records, stderr) = in_process(&args, streams);
    assert_eq!(code, 0, "{stderr}");
    assert!(records.len() > lines * 10, "records, not text");
    assert!(
        stderr.contains(&format!("output        {lines} lines")),
        "{stderr}"
    );
}
