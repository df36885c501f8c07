//! Constants: symbols (identifiers and quoted strings), integers and floats.
//!
//! Symbols are interned process-wide, so a [`Value`] is 16 bytes, `Copy`, and hashes in
//! a few instructions. A quoted string and an identifier with the same text are the same
//! symbol (`"a"` = `a`); it is printed bare when it reads as an identifier and quoted
//! otherwise. Floats compare by their bit pattern for joins and hashing (so `1.0` and `1`
//! are different constants) but numerically in the comparison built-ins.

use std::cmp::Ordering;
use std::fmt;
use std::sync::{OnceLock, RwLock};

use hashbrown::HashMap;

/// An interned symbol.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Sym(u32);

#[derive(Default, Debug)]
struct Interner {
    ids: HashMap<&'static str, u32>,
    names: Vec<&'static str>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(Default::default)
}

impl Sym {
    /// Interns `text`, returning the same symbol for the same text every time.
    pub fn new(text: &str) -> Sym {
        if let Some(&id) = interner()
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .ids
            .get(text)
        {
            return Sym(id);
        }
        let mut table = interner()
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(&id) = table.ids.get(text) {
            return Sym(id);
        }
        let id = u32::try_from(table.names.len()).unwrap_or(u32::MAX);
        // Interned text lives as long as the process: symbols are shared by every
        // program, stream and worker, and are few compared with facts.
        let stored: &'static str = Box::leak(text.to_owned().into_boxed_str());
        table.names.push(stored);
        table.ids.insert(stored, id);
        Sym(id)
    }

    /// The symbol's text.
    pub fn as_str(self) -> &'static str {
        interner()
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .names
            .get(self.0 as usize)
            .copied()
            .unwrap_or("?")
    }
}

/// A constant.
#[derive(Clone, Copy, Debug)]
pub enum Value {
    Int(i64),
    Float(f64),
    Sym(Sym),
}

impl Value {
    pub fn sym(text: &str) -> Value {
        Value::Sym(Sym::new(text))
    }

    fn as_f64(self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(i as f64),
            Value::Float(f) => Some(f),
            Value::Sym(_) => None,
        }
    }

    /// Numeric order between numbers, text order between symbols, `None` across kinds
    /// (and for NaN).
    pub fn compare(self, other: Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(&b)),
            (Value::Sym(a), Value::Sym(b)) => Some(a.as_str().cmp(b.as_str())),
            (a, b) => a.as_f64()?.partial_cmp(&b.as_f64()?),
        }
    }

    /// Parses a constant as it appears in CSV input: an integer, a float, or else a symbol.
    pub fn parse_loose(text: &str) -> Value {
        if let Ok(i) = text.parse::<i64>() {
            return Value::Int(i);
        }
        if looks_like_float(text) {
            if let Ok(f) = text.parse::<f64>() {
                return Value::Float(f);
            }
        }
        Value::sym(text)
    }
}

fn looks_like_float(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
            (Value::Sym(a), Value::Sym(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Value::Int(i) => {
                state.write_u8(0);
                state.write_i64(*i);
            }
            Value::Float(f) => {
                state.write_u8(1);
                state.write_u64(f.to_bits());
            }
            Value::Sym(s) => {
                state.write_u8(2);
                state.write_u32(s.0);
            }
        }
    }
}

/// A total order for sorting output deterministically: ints, then floats, then symbols.
impl Ord for Value {
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Sym(a), Value::Sym(b)) => a.as_str().cmp(b.as_str()),
            (a, b) => a.kind_rank().cmp(&b.kind_rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Value {
    fn kind_rank(self) -> u8 {
        match self {
            Value::Int(_) => 0,
            Value::Float(_) => 1,
            Value::Sym(_) => 2,
        }
    }
}

/// True when `text` can be written without quotes: a lower-case identifier.
pub fn is_bare_symbol(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text != "not"
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                let text = format!("{x}");
                if x.is_finite() && !text.contains(['.', 'e', 'E']) {
                    write!(f, "{text}.0")
                } else {
                    f.write_str(&text)
                }
            }
            Value::Sym(s) => {
                let text = s.as_str();
                if is_bare_symbol(text) {
                    f.write_str(text)
                } else {
                    write_quoted(f, text)
                }
            }
        }
    }
}

fn write_quoted(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in text.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_intern_to_the_same_id_and_print_bare_or_quoted() {
        assert_eq!(Sym::new("abc"), Sym::new("abc"));
        assert_eq!(Value::sym("abc").to_string(), "abc");
        assert_eq!(Value::sym("Abc d").to_string(), "\"Abc d\"");
        assert_eq!(Value::sym("a\"b").to_string(), "\"a\\\"b\"");
    }

    #[test]
    fn floats_always_print_with_a_point() {
        assert_eq!(Value::Float(3.0).to_string(), "3.0");
        assert_eq!(Value::Float(2.5).to_string(), "2.5");
        assert_eq!(Value::Float(-0.125).to_string(), "-0.125");
    }

    #[test]
    fn comparison_is_numeric_across_ints_and_floats_and_none_across_kinds() {
        assert_eq!(
            Value::Int(2).compare(Value::Float(2.5)),
            Some(Ordering::Less)
        );
        assert_eq!(Value::Int(1).compare(Value::sym("a")), None);
        assert_ne!(Value::Int(1), Value::Float(1.0));
    }

    #[test]
    fn loose_parsing_recognises_numbers() {
        assert_eq!(Value::parse_loose("12"), Value::Int(12));
        assert_eq!(Value::parse_loose("-1.5"), Value::Float(-1.5));
        assert_eq!(Value::parse_loose("id0"), Value::sym("id0"));
        assert_eq!(Value::parse_loose("1e3"), Value::Float(1000.0));
        assert_eq!(Value::parse_loose("12abc"), Value::sym("12abc"));
    }
}
