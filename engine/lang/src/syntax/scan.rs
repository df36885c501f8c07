//! What the three languages' lexers (TD, LARS in Laser's syntax, RTEC's Prolog) read
//! alike: identifiers, numbers and quoted text, each from a byte offset of the text to the
//! offset after it. Each lexer keeps its own tokens and errors around these.

/// The end of the identifier characters (ASCII letters, digits, `_`) from `start`.
pub fn word_end(text: &str, start: usize) -> usize {
    let rest = text.get(start..).unwrap_or_default();
    rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(text.len(), |n| start + n)
}

/// A number's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// Why a number's text has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// An integer past 2^63 - 1.
    TooLarge,
    /// A float that is not finite.
    OutOfRange,
}

impl NumberError {
    pub fn message(self) -> &'static str {
        match self {
            NumberError::TooLarge => "integer too large (the limit is 2^63 - 1)",
            NumberError::OutOfRange => "number out of range",
        }
    }
}

/// The number from `start` (a `-`, if there, then digits; a fraction where a digit follows
/// the point, so that a clause's closing `.` stays apart; with `exponent`, an exponent
/// where a digit follows it): where it ends, and its value.
pub fn number(text: &str, start: usize, exponent: bool) -> (usize, Result<Number, NumberError>) {
    let bytes = text.as_bytes();
    let digits = |mut at: usize| {
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        at
    };
    let mut end = digits(start + usize::from(bytes.get(start) == Some(&b'-')));
    let mut float = false;
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        end = digits(end + 1);
    }
    if exponent && matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            float = true;
            end = digits(end + 1 + sign);
        }
    }
    let text = &text[start..end];
    let value = match float {
        true => match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Number::Float(x)),
            _ => Err(NumberError::OutOfRange),
        },
        false => text
            .parse::<i64>()
            .map(Number::Int)
            .map_err(|_| NumberError::TooLarge),
    };
    (end, value)
}

/// How a quoted text reads a backslash before a character other than `n`, `t`, the
/// quote and the backslash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownEscape {
    /// As written, backslash and all.
    Kept,
    /// As the character alone.
    Dropped,
}

/// The quoted text whose opening `quote` is at `start`, up to the closing one, with `\n`,
/// `\t`, `\\` and an escaped quote read as such: where it ends and its value, or, where a
/// line or the text ends first, an error with what was read and where it stopped.
pub fn quoted(
    text: &str,
    start: usize,
    quote: char,
    unknown: UnknownEscape,
) -> (usize, Result<String, String>) {
    let mut value = String::new();
    let from = start + quote.len_utf8();
    let mut chars = text.get(from..).unwrap_or_default().char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            c if c == quote => return (from + offset + c.len_utf8(), Ok(value)),
            '\\' => match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, 't')) => value.push('\t'),
                Some((_, c)) if c == quote || c == '\\' => value.push(c),
                None => return (from + offset + 1, Err(value)),
                Some((_, c)) => {
                    if unknown == UnknownEscape::Kept {
                        value.push('\\');
                    }
                    value.push(c);
                }
            },
            '\n' => return (from + offset + 1, Err(value)),
            c => value.push(c),
        }
    }
    (text.len(), Err(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_end_where_their_digits_do() {
        assert_eq!(number("7).", 0, true), (1, Ok(Number::Int(7))));
        assert_eq!(number("x 2.5,", 2, false), (5, Ok(Number::Float(2.5))));
        assert_eq!(number("-3 ", 0, false), (2, Ok(Number::Int(-3))));
        assert_eq!(number("1e3", 0, true), (3, Ok(Number::Float(1000.0))));
        assert_eq!(number("1e3", 0, false), (1, Ok(Number::Int(1))));
        assert_eq!(number("3.", 0, true), (1, Ok(Number::Int(3))));
        let huge = "99999999999999999999";
        assert_eq!(number(huge, 0, true), (20, Err(NumberError::TooLarge)));
    }

    #[test]
    fn quoted_text_reads_its_escapes_and_stops_at_a_line_end() {
        let text = r#""a\"b\n\q" rest"#;
        assert_eq!(
            quoted(text, 0, '"', UnknownEscape::Kept),
            (10, Ok("a\"b\n\\q".to_owned()))
        );
        assert_eq!(
            quoted(text, 0, '"', UnknownEscape::Dropped),
            (10, Ok("a\"b\nq".to_owned()))
        );
        let unterminated = quoted("'ab\ncd'", 0, '\'', UnknownEscape::Dropped);
        assert_eq!(unterminated, (4, Err("ab".to_owned())));
        assert_eq!(
            quoted("\"ab", 0, '"', UnknownEscape::Kept),
            (3, Err("ab".to_owned()))
        );
        assert_eq!(word_end("ab_1(x)", 0), 4);
    }
}
