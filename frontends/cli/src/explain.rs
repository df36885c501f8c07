//! `stgflow explain`: why a fact holds (its derivation, down to input facts), or why not.

use std::io::{BufReader, Write};

use stgflow_io::drive::{FactSource, ProgramFacts, RunError, Timeline};
use stgflow_io::stream::{FactReader, Schema};

use crate::args::ExplainArgs;
use crate::{Context, Failure};

impl Context<'_> {
    pub(crate) fn explain(
        &mut self,
        args: ExplainArgs,
        stdout: &mut dyn Write,
    ) -> Result<(), Failure> {
        use stgflow_eval::explain;
        crate::run::timeline_is_not_empty("--from", args.from, args.until)?;
        self.timeline_start = args.from.map_or(0, |t| t / args.tick);
        let mut compiled = self.compile(&args.program, &args.background)?;
        let Some((fact_text, streams)) = args.rest.split_last() else {
            return Err(Failure::Message("explain: which fact?".to_owned()));
        };
        let ahead = crate::domains::Ahead {
            streams,
            format: args.format.as_deref(),
            tick: args.tick,
            tolerance: stgflow_io::stream::Tolerance::default(),
            until: args.until.map(|t| t / args.tick),
            threads: None,
        };
        self.read_domains_ahead(&mut compiled, &ahead)?;
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        let mut fact =
            explain::parse_fact(program, fact_text).map_err(|e| Failure::Message(e.to_string()))?;
        if fact.time % args.tick != 0 {
            return Err(Failure::Message(format!(
                "{fact_text}: time {} is not a multiple of --tick {}",
                fact.time, args.tick
            )));
        }
        fact.time /= args.tick;
        let schema = Schema::new(program);
        let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(program))];
        for stream in streams {
            let format = self.stream_format(args.format.as_deref(), stream);
            if stgflow_io::stream::columnar::is_columnar(stream) {
                let like =
                    FactReader::new(std::io::empty(), stream.clone(), format, schema.clone())
                        .with_tick(args.tick);
                sources.push(Box::new(stgflow_io::stream::columnar::Columnar::open(
                    stream, like,
                )));
                continue;
            }
            let (file, _) = crate::run::open_input(stream, None)?;
            sources.push(Box::new(
                FactReader::new(BufReader::new(file), stream.clone(), format, schema.clone())
                    .with_tick(args.tick),
            ));
        }
        let timeline = Timeline {
            from: args.from.map(|t| t / args.tick),
            until: args.until.map(|t| t / args.tick),
        };
        let through = Some(fact.time);
        let mut materialised =
            match explain::materialise(program, analysis, &mut sources, timeline, through) {
                Ok(materialised) => materialised,
                Err(RunError::Stream(e)) => {
                    let _ = writeln!(self.stderr, "{e}");
                    return Err(Failure::Reported);
                }
                Err(e) => return Err(Failure::Message(e.to_string())),
            };
        materialised.time_scale = args.tick;
        let answer = materialised.explain(&fact);
        let text = if args.json {
            explain::render_json(program, &compiled.sources, &answer, args.tick, args.depth)
        } else {
            explain::render_scaled(program, &compiled.sources, &answer, args.tick, args.depth)
        };
        stdout
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Message(format!("cannot write the output: {e}")))
    }
}
