//! Plain CSV: `time,pred,arg1,…`, one fact per line; a first line starting `time,` is a
//! header; `#` and `%` start comments. Quoted fields are symbols, others numbers when they
//! parse.

use stgflow_lang::value::{Row, Value};

use super::{Format, ReaderState, StreamError};

/// The CSV format (`.csv` files).
#[derive(Clone, Copy, Debug, Default)]
pub struct Csv;

impl Format for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn about(&self) -> &'static str {
        "CSV: `7,p,a,b`"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".csv"]
    }

    fn parse_line(&self, text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', '%']) {
            return Ok(());
        }
        if state.line() == 1 && trimmed.to_ascii_lowercase().starts_with("time,") {
            return Ok(());
        }
        let fields = split_csv(text)
            .map_err(|at| state.error(text, at, "unterminated quoted field".to_owned(), None))?;
        let [(time_text, time_at), (pred, pred_at), rest @ ..] = fields.as_slice() else {
            return Err(state.error(
                text,
                text.len(),
                "expected at least two fields: `time,predicate,arg…`".to_owned(),
                None,
            ));
        };
        let time = match time_text.trim().parse::<u64>() {
            Ok(t) => t,
            Err(_) => {
                return Err(state.error(
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
            return Err(state.error(text, *pred_at, "empty predicate name".to_owned(), None));
        }
        let args: Row = rest.iter().map(|(field, _)| csv_value(field)).collect();
        let pred = pred.to_owned();
        state.accept(text, &pred, args, time, 0)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::stream::tests::read_all;

    #[test]
    fn csv_lines() {
        let facts = read_all("time,pred,a,b\n1,p,a,2\n2,s\n", Arc::new(Csv)).unwrap_or_default();
        assert_eq!(facts.len(), 2);
        assert_eq!(facts[0].args[..], [Value::sym("a"), Value::Int(2)]);
    }
}
