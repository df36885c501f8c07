//! Input streams: TD facts (`p(a, b, 7).`, time last) and plain CSV (`time,pred,arg1,…`),
//! read line by line from files or stdin.
//!
//! Ordered input is the contract: a time that goes backwards within one source is an
//! error naming the file, the line and both times. A malformed line is an error naming
//! file:line:column. Facts of predicates that the program never mentions are dropped as
//! they are read; facts whose arity disagrees with the program are skipped and counted
//! (reported once per predicate as a warning).

use std::fmt;
use std::io::BufRead;

use hashbrown::HashMap;

use crate::ir::{PredId, Program};
use crate::reference::Tuple;
use crate::value::Value;

/// A fact read from a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct InputFact {
    pub pred: PredId,
    pub args: Tuple,
    pub time: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// `p(a, b, 7).`
    Td,
    /// `7,p,a,b`
    Csv,
}

impl StreamFormat {
    /// The format a file's extension implies: `.csv` is CSV, anything else TD facts.
    pub fn from_path(path: &str) -> StreamFormat {
        if path.to_ascii_lowercase().ends_with(".csv") {
            StreamFormat::Csv
        } else {
            StreamFormat::Td
        }
    }
}

/// A malformed or out-of-order line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct StreamError {
    pub code: &'static str,
    pub file: String,
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The offending line, for the excerpt.
    pub text: String,
    pub help: Option<String>,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error[{}]: {}", self.code, self.message)?;
        writeln!(f, "  --> {}:{}:{}", self.file, self.line, self.column)?;
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        let shown: String = self.text.chars().take(200).collect();
        writeln!(f, "{pad} |")?;
        writeln!(f, "{number} | {shown}")?;
        write!(
            f,
            "{pad} | {}^",
            " ".repeat(self.column.saturating_sub(1).min(200))
        )?;
        if let Some(help) = &self.help {
            write!(f, "\n{pad} = help: {help}")?;
        }
        Ok(())
    }
}

/// Counts of facts that were read but not used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts {
    /// Facts of predicates the program does not mention.
    pub unknown: u64,
    /// Per predicate name: (arity seen, facts skipped, first location).
    pub wrong_arity: HashMap<String, (usize, u64, String)>,
}

/// Predicate names the program knows, with their object arity.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    preds: HashMap<String, (PredId, usize)>,
}

impl Schema {
    pub fn new(program: &Program) -> Schema {
        Schema {
            preds: program
                .predicates
                .iter()
                .enumerate()
                .map(|(id, p)| (p.name.clone(), (id, p.arity)))
                .collect(),
        }
    }
}

/// Reads facts from one source in order.
pub struct FactReader<R> {
    input: R,
    name: String,
    format: StreamFormat,
    schema: Schema,
    line: usize,
    buffer: Vec<u8>,
    /// Facts parsed from the current line not yet handed out (a TD line may hold several).
    pending: std::collections::VecDeque<InputFact>,
    last_time: Option<(u64, usize)>,
    pub skipped: SkipCounts,
}

impl<R> fmt::Debug for FactReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactReader")
            .field("name", &self.name)
            .field("line", &self.line)
            .finish()
    }
}

impl<R: BufRead> FactReader<R> {
    pub fn new(input: R, name: impl Into<String>, format: StreamFormat, schema: Schema) -> Self {
        FactReader {
            input,
            name: name.into(),
            format,
            schema,
            line: 0,
            buffer: Vec::new(),
            pending: Default::default(),
            last_time: None,
            skipped: SkipCounts::default(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next fact, `None` at the end of the input.
    pub fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            if let Some(fact) = self.pending.pop_front() {
                return Ok(Some(fact));
            }
            self.buffer.clear();
            let read = self
                .input
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| StreamError {
                    code: "E103",
                    file: self.name.clone(),
                    line: self.line + 1,
                    column: 1,
                    message: format!("cannot read input: {e}"),
                    text: String::new(),
                    help: None,
                })?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            let buffer = std::mem::take(&mut self.buffer);
            let result = match std::str::from_utf8(&buffer) {
                Ok(text) => {
                    let text = text.trim_end_matches(['\n', '\r']);
                    match self.format {
                        StreamFormat::Td => self.parse_td_line(text),
                        StreamFormat::Csv => self.parse_csv_line(text),
                    }
                }
                Err(e) => Err(self.error(
                    &String::from_utf8_lossy(&buffer),
                    e.valid_up_to(),
                    "invalid UTF-8 in the input".to_owned(),
                    None,
                )),
            };
            self.buffer = buffer;
            result?;
        }
    }

    fn error(
        &self,
        text: &str,
        byte: usize,
        message: String,
        help: Option<String>,
    ) -> Box<StreamError> {
        let column = text
            .get(..byte.min(text.len()))
            .map_or(byte, |s| s.chars().count())
            + 1;
        Box::new(StreamError {
            code: "E101",
            file: self.name.clone(),
            line: self.line,
            column,
            message,
            text: text.to_owned(),
            help,
        })
    }

    /// Queues a parsed fact after checking order, predicate and arity.
    fn accept(
        &mut self,
        text: &str,
        name: &str,
        args: Vec<Value>,
        time: u64,
        at: usize,
    ) -> Result<(), Box<StreamError>> {
        if let Some((last, last_line)) = self.last_time {
            if time < last {
                let mut error = self.error(
                    text,
                    at,
                    format!("time goes backwards: {time} after {last} (line {last_line})"),
                    Some("streams must be ordered by time".to_owned()),
                );
                error.code = "E102";
                return Err(error);
            }
        }
        self.last_time = Some((time, self.line));
        let Some(&(pred, arity)) = self.schema.preds.get(name) else {
            self.skipped.unknown += 1;
            return Ok(());
        };
        if args.len() != arity {
            let location = format!("{}:{}", self.name, self.line);
            let entry = self.skipped.wrong_arity.entry(name.to_owned()).or_insert((
                args.len() + 1,
                0,
                location,
            ));
            entry.1 += 1;
            return Ok(());
        }
        self.pending.push_back(InputFact {
            pred,
            args: args.into_boxed_slice(),
            time,
        });
        Ok(())
    }

    fn parse_td_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let mut cursor = Cursor { text, pos: 0 };
        loop {
            cursor.skip_space();
            if cursor.at_end() || cursor.peek() == Some('%') {
                return Ok(());
            }
            let start = cursor.pos;
            let name = cursor.identifier().ok_or_else(|| {
                self.error(
                    text,
                    cursor.pos,
                    "expected a fact such as `p(a, 7).`".to_owned(),
                    None,
                )
            })?;
            cursor.skip_space();
            if !cursor.eat('(') {
                return Err(self.error(
                    text,
                    cursor.pos,
                    format!("expected `(` after `{name}`"),
                    Some(format!("a fact has its time last: `{name}(…, 7).`")),
                ));
            }
            let mut args: Vec<(Value, usize)> = Vec::new();
            loop {
                cursor.skip_space();
                let at = cursor.pos;
                let value = cursor
                    .constant()
                    .map_err(|message| self.error(text, at, message, None))?;
                args.push((value, at));
                cursor.skip_space();
                if cursor.eat(',') {
                    continue;
                }
                if cursor.eat(')') {
                    break;
                }
                return Err(self.error(text, cursor.pos, "expected `,` or `)`".to_owned(), None));
            }
            cursor.skip_space();
            if !cursor.eat('.') {
                return Err(self.error(
                    text,
                    cursor.pos,
                    "expected `.` after the fact".to_owned(),
                    Some("every fact ends with `.`".to_owned()),
                ));
            }
            let (time, at) = args.pop().unwrap_or((Value::Int(-1), start));
            let time = self.time_of(text, time, at)?;
            self.accept(
                text,
                name,
                args.into_iter().map(|(v, _)| v).collect(),
                time,
                start,
            )?;
        }
    }

    fn time_of(&self, text: &str, value: Value, at: usize) -> Result<u64, Box<StreamError>> {
        match value {
            Value::Int(t) if t >= 0 => Ok(t as u64),
            other => Err(self.error(
                text,
                at,
                format!("the time must be a non-negative integer, found `{other}`"),
                Some("the last argument of a fact is its time point".to_owned()),
            )),
        }
    }

    fn parse_csv_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', '%']) {
            return Ok(());
        }
        if self.line == 1 && trimmed.to_ascii_lowercase().starts_with("time,") {
            return Ok(());
        }
        let fields = split_csv(text)
            .map_err(|at| self.error(text, at, "unterminated quoted field".to_owned(), None))?;
        let [(time_text, time_at), (pred, pred_at), rest @ ..] = fields.as_slice() else {
            return Err(self.error(
                text,
                text.len(),
                "expected at least two fields: `time,predicate,arg…`".to_owned(),
                None,
            ));
        };
        let time = match time_text.trim().parse::<u64>() {
            Ok(t) => t,
            Err(_) => {
                return Err(self.error(
                    text,
                    *time_at,
                    format!(
                        "the time must be a non-negative integer, found `{}`",
                        time_text.trim()
                    ),
                    Some("CSV lines read `time,predicate,arg1,…`".to_owned()),
                ));
            }
        };
        let pred = pred.trim();
        if pred.is_empty() {
            return Err(self.error(text, *pred_at, "empty predicate name".to_owned(), None));
        }
        let args = rest.iter().map(|(field, _)| csv_value(field)).collect();
        let pred = pred.to_owned();
        self.accept(text, &pred, args, time, 0)
    }
}

/// A CSV field's value: quoted fields are symbols, others numbers when they parse.
fn csv_value(field: &str) -> Value {
    let trimmed = field.trim();
    match trimmed.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => Value::sym(&inner.replace("\"\"", "\"")),
        None => Value::parse_loose(trimmed),
    }
}

/// Splits a CSV line on commas outside double quotes; each field with its byte offset.
fn split_csv(text: &str) -> Result<Vec<(&str, usize)>, usize> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut quote_start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '"' => {
                quoted = !quoted;
                quote_start = i;
            }
            ',' if !quoted => {
                fields.push((&text[start..i], start));
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(quote_start);
    }
    fields.push((&text[start..], start));
    Ok(fields)
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn identifier(&mut self) -> Option<&'a str> {
        if !matches!(self.peek(), Some(c) if c.is_ascii_lowercase()) {
            return None;
        }
        Some(self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'))
    }

    fn constant(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(c) if c.is_ascii_lowercase() => Ok(Value::sym(self.identifier().unwrap_or_default())),
            Some(c) if c.is_ascii_digit() || c == '-' => {
                let text = self.take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
                number(text).ok_or_else(|| format!("`{text}` is not a number"))
            }
            Some('"') => {
                self.pos += 1;
                let mut value = String::new();
                loop {
                    let Some(c) = self.peek() else {
                        return Err("unterminated string".to_owned());
                    };
                    self.pos += c.len_utf8();
                    match c {
                        '"' => return Ok(Value::sym(&value)),
                        '\\' => {
                            let Some(next) = self.peek() else {
                                return Err("unterminated string".to_owned());
                            };
                            self.pos += next.len_utf8();
                            value.push(match next {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        c => value.push(c),
                    }
                }
            }
            Some(c) if c.is_ascii_uppercase() || c == '_' => {
                Err("variables are not allowed in stream facts (constants start lower-case, or are quoted)".to_owned())
            }
            Some(c) => Err(format!("expected a constant, found `{}`", c.escape_debug())),
            None => Err("expected a constant, found the end of the line".to_owned()),
        }
    }
}

/// An integer or a float literal (a trailing `.` ends the fact, so `7.` is the integer 7
/// only when the cursor stops before it: digits followed by `.` then a non-digit).
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::Int(i));
    }
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Value::Float)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile_str;

    fn read_all(text: &str, format: StreamFormat) -> Result<Vec<InputFact>, Box<StreamError>> {
        let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in",
            format,
            Schema::new(&compiled.program),
        );
        let mut facts = Vec::new();
        while let Some(fact) = reader.next_fact()? {
            facts.push(fact);
        }
        Ok(facts)
    }

    #[test]
    fn td_facts_several_per_line_with_comments() {
        let facts = read_all(
            "p(a, 1, 3). s(3).  % c\n\np(\"x y\", -2.5, 4).\n",
            StreamFormat::Td,
        )
        .unwrap_or_default();
        assert_eq!(facts.len(), 3);
        assert_eq!(facts[2].args[..], [Value::sym("x y"), Value::Float(-2.5)]);
        assert_eq!(facts[2].time, 4);
    }

    #[test]
    fn a_fact_ending_in_an_integer_then_dot_reads_the_integer() {
        let facts = read_all("s(7).", StreamFormat::Td).unwrap_or_default();
        assert_eq!(facts[0].time, 7);
    }

    #[test]
    fn csv_lines() {
        let facts =
            read_all("time,pred,a,b\n1,p,a,2\n2,s\n", StreamFormat::Csv).unwrap_or_default();
        assert_eq!(facts.len(), 2);
        assert_eq!(facts[0].args[..], [Value::sym("a"), Value::Int(2)]);
    }

    #[test]
    fn errors_name_line_and_column() {
        let error = read_all("s(1).\np(a b, 2).\n", StreamFormat::Td).err();
        let error = error.map(|e| (e.code, e.line, e.column));
        assert_eq!(error, Some(("E101", 2, 5)));
        let backwards = read_all("s(5).\ns(3).\n", StreamFormat::Td).err();
        assert!(
            backwards.is_some_and(|e| e.code == "E102" && e.message.contains("3 after 5 (line 1)"))
        );
    }
}
