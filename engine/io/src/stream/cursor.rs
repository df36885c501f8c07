//! Reading constants from a line: the byte-level fast paths for the usual lines
//! (integers and bare symbols), and the general [`Cursor`] with its errors.

use stgflow_lang::value::{Sym, Value};

/// Where a name (letters, digits, `_`) starting at `at` ends.
#[inline]
pub fn word_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|&b| WORD[usize::from(b)]) {
        at += 1;
    }
    at
}

/// Whether each byte may be part of a name: one load per byte, not the three ranges and
/// `_` tested in turn, a branch in the reader's innermost loop.
static WORD: [bool; 256] = {
    let mut word = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        word[b] = byte.is_ascii_alphanumeric() || byte == b'_';
        b += 1;
    }
    word
};

/// The constant at byte `at` of `text` and where it ends, when it is a plain decimal
/// integer (read by [`Cursor::small_integer`]) or a bare symbol (lower-case first, then
/// letters, digits and `_`); `None` for anything else. The fast paths of the readers of
/// the usual lines.
#[inline]
pub fn simple_constant(text: &str, at: usize) -> Option<(Value, usize)> {
    let bytes = text.as_bytes();
    let first = *bytes.get(at)?;
    if first.is_ascii_digit() {
        let mut cursor = Cursor { text, pos: at };
        let value = cursor.small_integer()?;
        Some((Value::Int(value), cursor.pos))
    } else if first.is_ascii_lowercase() {
        let end = word_end(bytes, at);
        Some((Value::Sym(Sym::identifier(&text[at..end])), end))
    } else {
        None
    }
}

/// The simple constants `c1,…,cn)` from byte `at` of `text` (see [`simple_constant`]),
/// and where the `)` is; `None` for anything else. The argument lists of the fast
/// paths.
#[inline]
pub fn simple_args<A: smallvec::Array<Item = Value>>(
    text: &str,
    mut at: usize,
) -> Option<(smallvec::SmallVec<A>, usize)> {
    let mut args = smallvec::SmallVec::new();
    loop {
        let (value, end) = simple_constant(text, at)?;
        args.push(value);
        at = end;
        match text.as_bytes().get(at)? {
            b',' => at += 1,
            b')' => return Some((args, at)),
            _ => return None,
        }
    }
}

/// A position in a line, reading forward.
#[derive(Debug)]
pub struct Cursor<'a> {
    pub text: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    pub fn peek(&self) -> Option<char> {
        match self.text.as_bytes().get(self.pos) {
            Some(&b) if b.is_ascii() => Some(char::from(b)),
            Some(_) => self.rest().chars().next(),
            None => None,
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    pub fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    /// A plain decimal integer that ends where a constant ends (not a float, not a
    /// symbol such as `12abc`), read without going through `str::parse`; `None` leaves
    /// the cursor where it was, for the general path.
    #[inline]
    pub fn small_integer(&mut self) -> Option<i64> {
        let bytes = self.text.as_bytes();
        let mut at = self.pos;
        let negative = bytes.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let start = at;
        let mut value: i64 = 0;
        while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
            at += 1;
        }
        let ends = bytes
            .get(at)
            .is_none_or(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')));
        if at == start || !ends {
            return None;
        }
        self.pos = at;
        Some(if negative { -value } else { value })
    }

    pub fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    pub fn identifier(&mut self) -> Option<&'a str> {
        if !matches!(self.peek(), Some(c) if c.is_ascii_lowercase()) {
            return None;
        }
        Some(self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'))
    }

    pub fn constant(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(c) if c.is_ascii_lowercase() => Ok(Value::sym(self.identifier().unwrap_or_default())),
            Some(c) if c.is_ascii_digit() || c == '-' => {
                if let Some(i) = self.small_integer() {
                    return Ok(Value::Int(i));
                }
                let text = self.take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
                let digits = text.strip_prefix('-').unwrap_or(text);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && text.parse::<i64>().is_err() {
                    return Err(format!("integer `{text}` is too large (the limit is 2^63 - 1)"));
                }
                number(text).ok_or_else(|| format!("`{text}` is not a number"))
            }
            Some('"') => {
                self.pos += 1;
                // A string without escapes is taken from the line as it is, uncopied.
                let rest = self.rest();
                // Bytes, not chars: both are ASCII, and no byte of a longer character is.
                if let Some(end) = memchr::memchr2(b'"', b'\\', rest.as_bytes()) {
                    if rest.as_bytes()[end] == b'"' {
                        self.pos += end + 1;
                        return Ok(Value::sym(&rest[..end]));
                    }
                }
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
pub fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::Int(i));
    }
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Value::Float)
}
