//! Values as output text: TD's own formatting of integers and symbols, without `fmt`
//! where it can, and CSV fields and JSON values and strings for the other encodings.

use stgflow_lang::value::Value;

/// Appends a value as `Display` writes it, with integers formatted without `fmt`.
pub fn push_value(line: &mut Vec<u8>, value: Value) {
    match value {
        Value::Int(i) => {
            if i < 0 {
                line.push(b'-');
            }
            push_u64(line, i.unsigned_abs());
        }
        Value::Sym(sym) => stgflow_lang::value::push_symbol(line, sym),
        other => {
            use std::io::Write as _;
            let _ = write!(line, "{other}");
        }
    }
}

/// Appends a value as a CSV field: a number as it is, a symbol's text, quoted (with `""`
/// for a quote) when it holds a comma, a quote, a line break or a leading or trailing
/// space.
pub(super) fn push_csv_value(line: &mut Vec<u8>, value: Value) {
    let Value::Sym(sym) = value else {
        return push_value(line, value);
    };
    let text = sym.as_bytes();
    let quote = text
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        || text.first() == Some(&b' ')
        || text.last() == Some(&b' ');
    if !quote {
        return line.extend_from_slice(text);
    }
    line.push(b'"');
    for &b in text {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

/// Appends a value as JSON: an integer or a finite float as a number, anything else as a
/// string (a symbol's text; `NaN` and the infinities as they print).
pub(super) fn push_json_value(line: &mut Vec<u8>, value: Value) {
    let text = match value {
        Value::Int(_) => return push_value(line, value),
        Value::Float(f) if f.is_finite() => return push_value(line, value),
        Value::Float(f) => f.to_string(),
        Value::Sym(sym) => sym.as_str().to_owned(),
    };
    push_json_string(line, &text);
}

/// `text` as a JSON string.
pub fn json_string(text: &str) -> String {
    let mut line = Vec::with_capacity(text.len() + 2);
    push_json_string(&mut line, text);
    // Only whole characters and ASCII escapes were pushed.
    String::from_utf8(line).unwrap_or_default()
}

/// Appends `text` as a JSON string.
fn push_json_string(line: &mut Vec<u8>, text: &str) {
    line.push(b'"');
    for c in text.chars() {
        match c {
            '"' => line.extend_from_slice(b"\\\""),
            '\\' => line.extend_from_slice(b"\\\\"),
            '\n' => line.extend_from_slice(b"\\n"),
            '\r' => line.extend_from_slice(b"\\r"),
            '\t' => line.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                use std::io::Write as _;
                let _ = write!(line, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                line.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    line.push(b'"');
}

/// Appends `n` in decimal, without `fmt`.
pub fn push_u64(line: &mut Vec<u8>, mut n: u64) {
    // Two digits per division.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    line.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_format_as_display_does() {
        for n in [
            0,
            7,
            9,
            10,
            42,
            99,
            100,
            101,
            999,
            1000,
            65_536,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut line = Vec::new();
            push_u64(&mut line, n);
            assert_eq!(line, n.to_string().into_bytes());
        }
        for i in [i64::MIN, -1_000_001, -10, -1, 0, 5, 1 << 40, i64::MAX] {
            let mut line = Vec::new();
            push_value(&mut line, Value::Int(i));
            assert_eq!(line, i.to_string().into_bytes());
        }
    }
}
