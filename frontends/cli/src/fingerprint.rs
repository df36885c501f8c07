//! What a cluster's processes must agree on (`stgflow_engine::Fingerprint`): the compiled
//! program, the options that change the evaluation or the output, the version, and the
//! input files. A process that differs in any would build another dataflow or feed other
//! facts, and the others would wait on it for ever; the greeting refuses it instead.

use stgflow_engine::Fingerprint;
use stgflow_lang::ir::Program;

use crate::args::RunArgs;

/// Overrides the version a cluster process says it runs (for tests of a mixed cluster).
const VERSION_OVERRIDE: &str = "STGFLOW_CLUSTER_VERSION";

/// The fingerprint of a run of `program` (compiled, its domains read) as `args` ask.
pub(crate) fn of(args: &RunArgs, program: &Program) -> Fingerprint {
    let version =
        std::env::var(VERSION_OVERRIDE).unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_owned());
    Fingerprint {
        program: Fingerprint::digest(program_text(program).as_bytes()),
        options: Fingerprint::digest(options_text(args).as_bytes()),
        version: Fingerprint::digest(version.as_bytes()),
        // A live stream comes to process 0 alone: no process reads the others' files.
        inputs: match args.streams.iter().any(|s| s == "-") {
            true => [0u8; 16],
            false => Fingerprint::digest(inputs_text(&args.streams).as_bytes()),
        },
    }
}

/// The program as compiled, without where its parts came from (paths differ between
/// machines; what they say does not).
fn program_text(program: &Program) -> String {
    let mut text = String::new();
    for (p, predicate) in program.predicates.iter().enumerate() {
        let kind = if program.is_derived(p) {
            "derived"
        } else {
            "input"
        };
        text.push_str(&format!("{}/{} {kind}\n", predicate.name, predicate.arity));
    }
    for rule in &program.rules {
        text.push_str(&format!("{}\n", program.display_rule(rule)));
    }
    for fact in &program.facts {
        let args: Vec<String> = fact.args.iter().map(ToString::to_string).collect();
        text.push_str(&format!(
            "{}({}) @{}\n",
            program.pred_name(fact.pred),
            args.join(","),
            fact.time
        ));
    }
    let outputs: Vec<&str> = (program.output_predicates().iter())
        .map(|&p| program.pred_name(p))
        .collect();
    text.push_str(&format!("output {}\n", outputs.join(",")));
    text
}

/// Every option that changes what is evaluated, how the dataflow is built, or what is
/// written; not those of this process alone (`-p`, `-h`, the connect timeout, the
/// report, verbosity), nor `-n` and `-w`, which the greeting compares itself.
fn options_text(args: &RunArgs) -> String {
    format!(
        "{:?}",
        (
            (args.engine, args.no_lowering, args.mode, &args.output),
            (args.output_dir.is_some(), args.output_format, &args.format),
            (args.tick, args.from, args.until, args.print_from),
            (
                args.tolerance.lateness,
                args.tolerance.skip_late,
                args.tolerance.strict,
            ),
            (
                args.batch_points,
                args.diff_on_workers,
                args.read_on_workers,
                args.format_on_workers,
                args.block_bytes,
                args.part_bytes,
            ),
        )
    )
}

/// The streams as named, each with its size where it is a file.
fn inputs_text(streams: &[String]) -> String {
    let mut text = String::new();
    for stream in streams {
        let size = std::fs::metadata(stream)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len().to_string())
            .unwrap_or_else(|| "-".to_owned());
        text.push_str(&format!("{stream} {size}\n"));
    }
    text
}
