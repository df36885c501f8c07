//! Constants: symbols (identifiers and quoted strings), integers and floats.
//!
//! A [`Value`] is 16 bytes and `Copy`. A symbol of up to [`INLINE`] bytes — the names
//! and identifiers of event logs, fresh ones included — is stored in the value itself:
//! no allocation, no table, equality, hashing and order on its bytes, so a stream of
//! fresh names costs what a stream of integers costs and leaves nothing behind. A longer
//! symbol (an IRI) lives in a process-wide table ([`symbols`]); the value holds its slot
//! and its text's hash, so equality and hashing never read the table. A stream's long
//! symbols leave the table once no fact that holds them can be held any more.
//!
//! Hashing depends on the text only — the inline bytes, or the long text's hash — so
//! a value hashes the same in every process (timely's exchange between processes routes
//! by it); a text always takes the same form, so equal texts hash alike. Values travel
//! between processes as their text.
//!
//! A quoted string and an identifier with the same text are the same symbol (`"a"` = `a`);
//! it is printed bare when it reads as an identifier and quoted otherwise. Symbols order
//! by their text. Floats compare by their bit pattern for joins and hashing (so `1.0` and
//! `1` are different constants) but numerically in the comparison built-ins.

pub mod symbols;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A fact's object arguments (or a rule's variable bindings): up to [`ROW_INLINE`] values
/// inline, so that the common narrow rows cost no allocation as they are copied from
/// operator to operator. A vector's methods come through `Deref`.
///
/// **Why not `SmallVec` itself.** Its `clone` goes value by value through `FromIterator`,
/// several times slower than one copy of the values; timely clones every message a stream
/// gives to more than one operator. A `Row` clones in one move ([`Clone`] below).
#[derive(Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Row(smallvec::SmallVec<[Value; ROW_INLINE]>);

impl Row {
    /// An empty row.
    #[inline]
    pub fn new() -> Row {
        Row(smallvec::SmallVec::new())
    }

    /// A row of `values`, copied in one move: a short row as a fixed number of values
    /// (a copy of a length known only when it runs is a call to `memcpy`, and rows are
    /// copied from operator to operator).
    #[inline]
    pub fn from_slice(values: &[Value]) -> Row {
        let mut row = smallvec::SmallVec::new();
        match *values {
            [] => {}
            [a] => row.push(a),
            [a, b] => {
                row.push(a);
                row.push(b);
            }
            _ => return Row(smallvec::SmallVec::from_slice(values)),
        }
        Row(row)
    }

    /// A row of `values`, which it takes over where they are too many to hold inline (no
    /// copy; a short row copies them in).
    #[inline]
    pub fn from_vec(values: Vec<Value>) -> Row {
        match *values {
            [] | [_] | [_, _] => Row::from_slice(&values),
            _ => Row(smallvec::SmallVec::from_vec(values)),
        }
    }

    /// A row of `n` copies of `value`.
    #[inline]
    pub fn filled(value: Value, n: usize) -> Row {
        Row(smallvec::SmallVec::from_elem(value, n))
    }

    /// An empty row with room for `n` values.
    #[inline]
    pub fn with_capacity(n: usize) -> Row {
        Row(smallvec::SmallVec::with_capacity(n))
    }
}

impl Clone for Row {
    #[inline]
    fn clone(&self) -> Row {
        Row::from_slice(&self.0)
    }

    #[inline]
    fn clone_from(&mut self, source: &Row) {
        self.0.clear();
        self.0.extend_from_slice(&source.0);
    }
}

impl std::ops::Deref for Row {
    type Target = smallvec::SmallVec<[Value; ROW_INLINE]>;
    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Row {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl FromIterator<Value> for Row {
    #[inline]
    fn from_iter<I: IntoIterator<Item = Value>>(values: I) -> Row {
        Row(values.into_iter().collect())
    }
}

impl Extend<Value> for Row {
    #[inline]
    fn extend<I: IntoIterator<Item = Value>>(&mut self, values: I) {
        self.0.extend(values);
    }
}

impl<'a> Extend<&'a Value> for Row {
    #[inline]
    fn extend<I: IntoIterator<Item = &'a Value>>(&mut self, values: I) {
        self.0.extend(values.into_iter().copied());
    }
}

impl IntoIterator for Row {
    type Item = Value;
    type IntoIter = smallvec::IntoIter<[Value; ROW_INLINE]>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Row {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<smallvec::SmallVec<[Value; ROW_INLINE]>> for Row {
    #[inline]
    fn from(values: smallvec::SmallVec<[Value; ROW_INLINE]>) -> Row {
        Row(values)
    }
}

impl From<Vec<Value>> for Row {
    #[inline]
    fn from(values: Vec<Value>) -> Row {
        Row(smallvec::SmallVec::from_vec(values))
    }
}

impl From<&[Value]> for Row {
    #[inline]
    fn from(values: &[Value]) -> Row {
        Row::from_slice(values)
    }
}

impl<const N: usize> From<[Value; N]> for Row {
    #[inline]
    fn from(values: [Value; N]) -> Row {
        Row::from_slice(&values)
    }
}

impl std::borrow::Borrow<[Value]> for Row {
    #[inline]
    fn borrow(&self) -> &[Value] {
        &self.0
    }
}

impl AsRef<[Value]> for Row {
    #[inline]
    fn as_ref(&self) -> &[Value] {
        &self.0
    }
}

/// How many values a [`Row`] holds without allocating.
pub const ROW_INLINE: usize = 2;

/// The longest symbol, in bytes, stored in the value itself.
pub const INLINE: usize = 14;

/// A symbol: its text inline, or a handle on the table of long symbols.
#[derive(Clone, Copy)]
pub struct Sym(Repr);

/// The high bit of a symbol's `meta`: it prints bare. The other bits of an inline
/// symbol's: its length.
const BARE: u8 = 0x80;

#[derive(Clone, Copy)]
enum Repr {
    /// Up to [`INLINE`] bytes of text, zero-padded; `meta` is the length, and [`BARE`].
    Inline { meta: u8, bytes: [u8; INLINE] },
    /// Longer text, in the table: its slot, the slot's generation and the text's hash;
    /// `meta` is [`BARE`] or 0. The hash keeps the value 8-byte aligned, so that it is
    /// made and moved as two words.
    Long {
        meta: u8,
        generation: u16,
        slot: u32,
        hash: u64,
    },
}

/// The first 8 bytes of `bytes`, big-endian, zero-padded.
fn prefix_of(bytes: &[u8]) -> u64 {
    let mut prefix = [0u8; 8];
    let head = &bytes[..bytes.len().min(8)];
    prefix[..head.len()].copy_from_slice(head);
    u64::from_be_bytes(prefix)
}

impl Sym {
    /// The symbol of `text`: inline when short, else the table's, the same for the same
    /// text while it lives.
    pub fn new(text: &str) -> Sym {
        Sym::with_bareness(text, is_bare_symbol)
    }

    /// The symbol of `text`, a lower-case identifier (a lower-case letter, then letters,
    /// digits and `_`) as the caller has just scanned it: [`Sym::new`] without scanning
    /// its bytes again (a reader's fast path). Inlined, so that the symbol is made where
    /// it is used: returned through memory and copied on in pieces, a 16-byte load of it
    /// would miss store forwarding.
    #[inline(always)]
    pub fn identifier(text: &str) -> Sym {
        debug_assert!(
            is_bare_symbol(text) || text == "not",
            "`{text}` is not a lower-case identifier"
        );
        Sym::with_bareness(text, |text| text != "not")
    }

    /// The symbol of `text`, printed bare where `is_bare` says so (see [`Sym::identifier`]
    /// on why it is inlined).
    #[inline(always)]
    fn with_bareness(text: &str, is_bare: impl FnOnce(&str) -> bool) -> Sym {
        let bare = if is_bare(text) { BARE } else { 0 };
        if text.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            return Sym(Repr::Inline {
                meta: text.len() as u8 | bare,
                bytes,
            });
        }
        Sym::long(text, bare)
    }

    /// A long symbol; out of line, the rare path of the inlined [`Sym::with_bareness`].
    #[inline(never)]
    fn long(text: &str, bare: u8) -> Sym {
        let hash = symbols::text_hash(text);
        let handle = symbols::intern(text, hash);
        Sym(Repr::Long {
            meta: bare,
            generation: handle.generation,
            slot: handle.slot,
            hash,
        })
    }

    /// The symbol's text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // The bytes are a whole `str`, copied in `new`.
            Repr::Inline { meta, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(meta & !BARE)]).unwrap_or_default()
            }
            Repr::Long { .. } => &symbols::entry(self.handle()).text,
        }
    }

    /// The symbol's text as bytes, without checking them again (for writing it out).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { meta, bytes } => &bytes[..usize::from(meta & !BARE)],
            Repr::Long { .. } => symbols::entry(self.handle()).text.as_bytes(),
        }
    }

    /// Whether the symbol prints without quotes (a lower-case identifier).
    pub fn is_bare(self) -> bool {
        match self.0 {
            Repr::Inline { meta, .. } | Repr::Long { meta, .. } => meta & BARE != 0,
        }
    }

    /// Whether the symbol, quoted, needs no escapes (no `"`, `\\`, line feed or tab).
    pub fn is_plain(self) -> bool {
        match self.0 {
            Repr::Inline { meta, bytes } => !bytes[..usize::from(meta & !BARE)]
                .iter()
                .any(|b| matches!(b, b'"' | b'\\' | b'\n' | b'\t')),
            Repr::Long { .. } => symbols::entry(self.handle()).plain,
        }
    }

    /// Whether the symbol is stored in the value itself (not in the table).
    pub fn is_inline(self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }

    /// The first 8 bytes of the text, big-endian, zero-padded.
    fn prefix(self) -> u64 {
        match self.0 {
            Repr::Inline { bytes, .. } => prefix_of(&bytes),
            Repr::Long { .. } => symbols::entry(self.handle()).prefix,
        }
    }

    /// Raises a long symbol's stamp to `until`, a time point of `clock`'s run (see
    /// [`symbols`]); nothing for a short one.
    #[inline]
    pub fn stamp(self, until: u64, clock: &symbols::Clock) {
        if let Repr::Long { .. } = self.0 {
            symbols::stamp(self.handle(), until, clock);
        }
    }

    /// A long symbol's place in the table (a short one's is never asked for).
    #[inline]
    fn handle(&self) -> symbols::Handle {
        match self.0 {
            Repr::Long {
                slot, generation, ..
            } => symbols::Handle { slot, generation },
            Repr::Inline { .. } => unreachable!("a short symbol is not in the table"),
        }
    }
}

impl PartialEq for Sym {
    fn eq(&self, other: &Sym) -> bool {
        match (self.0, other.0) {
            (
                Repr::Inline { meta, bytes },
                Repr::Inline {
                    meta: other_meta,
                    bytes: other_bytes,
                },
            ) => meta == other_meta && bytes == other_bytes,
            (
                Repr::Long {
                    slot, generation, ..
                },
                Repr::Long {
                    slot: other_slot,
                    generation: other_generation,
                    ..
                },
            ) => slot == other_slot && generation == other_generation,
            // A text takes one form only.
            _ => false,
        }
    }
}

impl Eq for Sym {}

impl Sym {
    /// The word a symbol hashes as: an inline symbol's sixteen bytes folded into one
    /// (the hasher mixes it), an interned one's text hash.
    #[inline]
    fn word(&self) -> u64 {
        match self.0 {
            Repr::Inline { meta, bytes } => {
                let mut low = [0u8; 8];
                let mut high = [0u8; 8];
                low.copy_from_slice(&bytes[..8]);
                high[..INLINE - 8].copy_from_slice(&bytes[8..]);
                high[7] = meta;
                let (low, high) = (u64::from_le_bytes(low), u64::from_le_bytes(high));
                low.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ high
            }
            Repr::Long { hash, .. } => hash,
        }
    }
}

impl Hash for Sym {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.word());
    }
}

impl PartialOrd for Sym {
    fn partial_cmp(&self, other: &Sym) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Text order.
/// An inline symbol's bytes as two big-endian words, bytes 0..8 and 6..14 (they overlap):
/// compared as a pair they order as the bytes do, in two integer comparisons rather than a
/// call to `memcmp` (output is sorted by its arguments, and fresh names share long
/// prefixes).
fn inline_words(bytes: &[u8; INLINE]) -> (u64, u64) {
    let mut high = [0u8; 8];
    let mut low = [0u8; 8];
    high.copy_from_slice(&bytes[..8]);
    low.copy_from_slice(&bytes[INLINE - 8..]);
    (u64::from_be_bytes(high), u64::from_be_bytes(low))
}

impl Ord for Sym {
    fn cmp(&self, other: &Sym) -> Ordering {
        match (self.0, other.0) {
            // Zero padding sorts a shorter text first where one is the other's prefix,
            // and the length settles texts that differ only in trailing NULs.
            (
                Repr::Inline { meta, bytes },
                Repr::Inline {
                    meta: other_meta,
                    bytes: other_bytes,
                },
            ) => inline_words(&bytes)
                .cmp(&inline_words(&other_bytes))
                .then((meta & !BARE).cmp(&(other_meta & !BARE))),
            _ if self == other => Ordering::Equal,
            // The prefixes decide whenever they differ, as the text order does.
            _ => self
                .prefix()
                .cmp(&other.prefix())
                .then_with(|| self.as_str().cmp(other.as_str())),
        }
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sym({:?})", self.as_str())
    }
}

/// Symbols travel between processes as their text and are interned on arrival.
impl serde::Serialize for Sym {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Sym {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Sym, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(Sym::new(&text))
    }
}

/// A constant.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
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
            (Value::Sym(a), Value::Sym(b)) => Some(a.cmp(&b)),
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

/// One word per value, its kind folded in (a word for the kind and one for the value
/// cost the hasher two rounds; values are hashed on every exchange, count and join).
impl Hash for Value {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Value::Int(i) => state.write_u64(*i as u64),
            Value::Float(f) => state.write_u64(f.to_bits() ^ 0x5bd1_e995_1f12_3bb5),
            Value::Sym(s) => state.write_u64(s.word() ^ 0xc2b2_ae3d_27d4_eb4f),
        }
    }
}

/// A total order for sorting output deterministically: ints, then floats, then symbols.
impl Ord for Value {
    fn cmp(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => a.total_cmp(b),
            (Value::Sym(a), Value::Sym(b)) => a.cmp(b),
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
    /// 32 bits that order values as [`Ord`] does wherever they differ: `a < b` implies
    /// `a.order_prefix() <= b.order_prefix()`, and every value's prefix is above 0 (an
    /// empty row's). Sorting by the prefix first settles most comparisons with one
    /// integer comparison.
    #[inline]
    pub fn order_prefix(self) -> u32 {
        const HALF: i64 = 1 << 29;
        let (kind, bits) = match self {
            Value::Int(i) => (1, (i.clamp(-HALF, HALF - 1) + HALF) as u32),
            Value::Float(f) => {
                // `f64::total_cmp`'s order as unsigned integers, top 30 bits.
                let b = f.to_bits() as i64;
                let ordered = (b ^ ((((b >> 63) as u64) >> 1) as i64)) as u64 ^ (1 << 63);
                (2, (ordered >> 34) as u32)
            }
            Value::Sym(s) => (3, (s.prefix() >> 34) as u32),
        };
        (kind << 30) | bits
    }

    /// 64 bits that order values as [`Ord`] does wherever they differ, like
    /// [`Value::order_prefix`] but finer: the kind and 62 bits of the value (of a symbol,
    /// its first 7¾ bytes), so names that differ in their first bytes (`id17`, `id18`)
    /// are told apart without reading them.
    #[inline]
    pub fn order_prefix64(self) -> u64 {
        let (kind, bits) = match self {
            Value::Int(i) => (1u64, (i as u64) ^ (1 << 63)),
            Value::Float(f) => {
                let b = f.to_bits() as i64;
                (
                    2,
                    (b ^ ((((b >> 63) as u64) >> 1) as i64)) as u64 ^ (1 << 63),
                )
            }
            Value::Sym(s) => (3, s.prefix()),
        };
        (kind << 62) | (bits >> 2)
    }

    /// Appends bytes that order values as [`Ord`] does, byte for byte (`memcmp`), and
    /// never a prefix of another value's: so the keys of rows, one value's after
    /// another's, order the rows as their lexicographic order does. An integer is its tag
    /// and 8 bytes, a float its tag and `total_cmp`'s 8 bytes, a symbol its tag and its
    /// text, every 0 byte escaped as 0 255, ended by 0 0.
    pub fn push_order_key(self, out: &mut Vec<u8>) {
        out.push(self.kind_rank() + 1);
        match self {
            Value::Int(i) => out.extend_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes()),
            Value::Float(f) => {
                let b = f.to_bits() as i64;
                let ordered = (b ^ ((((b >> 63) as u64) >> 1) as i64)) as u64 ^ (1 << 63);
                out.extend_from_slice(&ordered.to_be_bytes());
            }
            Value::Sym(s) => {
                let text = s.as_bytes();
                if text.contains(&0) {
                    for &byte in text {
                        out.push(byte);
                        if byte == 0 {
                            out.push(255);
                        }
                    }
                } else {
                    out.extend_from_slice(text);
                }
                out.extend_from_slice(&[0, 0]);
            }
        }
    }

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
    // Bytes, not chars: any byte of a character past ASCII fails the test as the
    // character would.
    let bytes = text.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_lowercase())
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
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
                if s.is_bare() {
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
    // Runs of characters that need no escape go out whole.
    let mut rest = text;
    while let Some(at) = rest.find(['"', '\\', '\n', '\t']) {
        f.write_str(&rest[..at])?;
        f.write_str(escape(rest.as_bytes()[at]))?;
        rest = &rest[at + 1..];
    }
    f.write_str(rest)?;
    f.write_str("\"")
}

/// The escape of a byte that a quoted symbol cannot hold as it is.
fn escape(byte: u8) -> &'static str {
    match byte {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b'\n' => "\\n",
        _ => "\\t",
    }
}

/// Appends a symbol as `Display` writes it, quoted where it is not bare.
pub fn push_symbol(line: &mut Vec<u8>, sym: Sym) {
    // A long symbol's entry is found once for its text and whether it needs escapes.
    let (text, plain) = match sym.0 {
        Repr::Long { .. } => {
            let entry = symbols::entry(sym.handle());
            (entry.text.as_bytes(), Some(entry.plain))
        }
        Repr::Inline { .. } => (sym.as_bytes(), None),
    };
    if sym.is_bare() {
        return line.extend_from_slice(text);
    }
    line.push(b'"');
    if plain.unwrap_or_else(|| sym.is_plain()) {
        line.extend_from_slice(text);
    } else {
        for &byte in text {
            match byte {
                b'"' | b'\\' | b'\n' | b'\t' => line.extend_from_slice(escape(byte).as_bytes()),
                _ => line.push(byte),
            }
        }
    }
    line.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row taken over from a vector is the row of its values, short or long (inline
    /// up to two values, on the heap past them).
    #[test]
    fn a_row_from_a_vector_is_the_row_of_its_values() {
        for n in 0..6 {
            let values: Vec<Value> = (0..n).map(|i| Value::Int(i * 7)).collect();
            let row = Row::from_vec(values.clone());
            assert_eq!(&row[..], &values[..]);
            assert_eq!(row, Row::from_slice(&values));
            assert_eq!(row.spilled(), n > ROW_INLINE as i64, "{n} values");
        }
    }

    #[test]
    fn symbols_intern_to_the_same_id_and_print_bare_or_quoted() {
        assert_eq!(Sym::new("abc"), Sym::new("abc"));
        assert_eq!(Value::sym("abc").to_string(), "abc");
        assert_eq!(Value::sym("Abc d").to_string(), "\"Abc d\"");
        assert_eq!(Value::sym("a\"b").to_string(), "\"a\\\"b\"");
    }

    #[test]
    fn symbol_hashes_depend_on_the_text_only() {
        use std::hash::BuildHasher;
        let state =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        assert_eq!(
            state.hash_one(Value::sym("fluent")),
            state.hash_one(Value::sym("fluent"))
        );
        assert_eq!(symbols::text_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert!(Value::sym("b") > Value::sym("a"));
    }

    #[test]
    fn symbols_sort_in_text_order_past_their_eight_byte_prefix() {
        let texts = [
            "",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgha",
            "abcdefgz",
            "b",
            "é",
            "zzzzzzzzzzzz",
        ];
        let mut symbols: Vec<Sym> = texts.iter().rev().map(|t| Sym::new(t)).collect();
        symbols.sort();
        let mut sorted = texts.to_vec();
        sorted.sort();
        let got: Vec<&str> = symbols.iter().map(|s| s.as_str()).collect();
        assert_eq!(got, sorted);
        assert!(Sym::new("abc").is_bare() && !Sym::new("Abc").is_bare());
    }

    #[test]
    fn order_prefixes_never_contradict_the_order() {
        let values = [
            Value::Int(i64::MIN),
            Value::Int(-(1 << 29) - 5),
            Value::Int(-(1 << 29)),
            Value::Int(-1),
            Value::Int(0),
            Value::Int(7),
            Value::Int((1 << 29) - 1),
            Value::Int(1 << 40),
            Value::Int(i64::MAX),
            Value::Float(f64::NEG_INFINITY),
            Value::Float(-2.5),
            Value::Float(-0.0),
            Value::Float(0.0),
            Value::Float(1e-300),
            Value::Float(2.5),
            Value::Float(2.5000001),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NAN),
            Value::sym(""),
            Value::sym("a"),
            Value::sym("abcd"),
            Value::sym("abcdz"),
            Value::sym("b"),
            Value::sym("zzzzzzzzzzzz"),
        ];
        for a in values {
            assert!(a.order_prefix() > 0 && a.order_prefix64() > 0);
            for b in values {
                if a < b {
                    assert!(a.order_prefix() <= b.order_prefix(), "{a:?} < {b:?}");
                    assert!(a.order_prefix64() <= b.order_prefix64(), "{a:?} < {b:?}");
                }
            }
        }
        assert!(Value::sym("id17").order_prefix64() < Value::sym("id18").order_prefix64());
        assert!(Value::Int(1).order_prefix() < Value::Int(2).order_prefix());
        assert!(Value::sym("a").order_prefix() < Value::sym("b").order_prefix());
    }

    proptest::proptest! {
        /// Rows' order keys compare as the rows do, over values of every kind, symbols
        /// that share prefixes or hold 0 bytes, inline and interned.
        #[test]
        fn order_keys_compare_as_rows_do(
            a in proptest::collection::vec(value(), 0..4),
            b in proptest::collection::vec(value(), 0..4),
        ) {
            let key = |row: &[Value]| {
                let mut out = Vec::new();
                for v in row {
                    v.push_order_key(&mut out);
                }
                out
            };
            proptest::prop_assert_eq!(key(&a).cmp(&key(&b)), a.cmp(&b), "{:?} {:?}", a, b);
        }
    }

    fn value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            prop_oneof![
                Just(i64::MIN),
                Just(i64::MAX),
                Just(0),
                -3i64..3,
                any::<i64>()
            ]
            .prop_map(Value::Int),
            prop_oneof![
                Just(f64::NEG_INFINITY),
                Just(-0.0),
                Just(0.0),
                Just(f64::NAN),
                any::<f64>()
            ]
            .prop_map(Value::Float),
            proptest::string::string_regex("[ab\\x00]{0,3}|abcdefghijklmn[a\\x00]{0,4}")
                .expect("a regex")
                .prop_map(|t| Value::sym(&t)),
        ]
    }

    /// A value is 16 bytes whatever it holds; texts up to 14 bytes live in it, longer
    /// ones are interned, and equality, hashing and order depend on the text only.
    #[test]
    fn short_symbols_are_inline_and_long_ones_interned_alike() {
        use std::hash::BuildHasher;
        assert_eq!(std::mem::size_of::<Value>(), 16);
        let short = "fourteen_bytes";
        let long = "http://example.org/stream/predicate#p";
        assert_eq!(short.len(), INLINE);
        assert!(Sym::new(short).is_inline() && !Sym::new(long).is_inline());
        assert!(!Sym::new(&format!("{short}x")).is_inline());
        let state =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        for text in [short, long, "", "é", "a\0b", "Ab c"] {
            assert_eq!(Sym::new(text), Sym::new(text));
            assert_eq!(Sym::new(text).as_str(), text);
            assert_eq!(
                state.hash_one(Value::sym(text)),
                state.hash_one(Value::sym(text))
            );
        }
        assert!(Sym::new("id17").is_bare() && !Sym::new("Ab c").is_bare());
        assert_ne!(Sym::new(long), Sym::new(&format!("{long}2")));
        assert_ne!(Sym::new("a"), Sym::new("a\0"));
        let mut texts = vec![
            long,
            short,
            "fourteen_byte",
            "fourteen_bytes_and_more",
            "a",
            "a\0",
            "",
        ];
        let mut symbols: Vec<Sym> = texts.iter().map(|t| Sym::new(t)).collect();
        symbols.sort();
        texts.sort_unstable();
        let sorted: Vec<&str> = symbols.iter().map(Sym::as_str).collect();
        assert_eq!(sorted, texts);
    }

    proptest::proptest! {
        /// Whatever the texts' lengths (either side of [`INLINE`]), symbols are equal,
        /// ordered, printed and round-tripped as their texts are.
        #[test]
        fn symbols_compare_as_their_texts(a in "[a-c\\x00é]{0,20}", b in "[a-c\\x00é]{0,20}") {
            let (x, y) = (Sym::new(&a), Sym::new(&b));
            proptest::prop_assert_eq!(x == y, a == b);
            proptest::prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            proptest::prop_assert_eq!(x.as_str(), a.as_str());
            proptest::prop_assert_eq!(Value::Sym(x).order_prefix() <= Value::Sym(y).order_prefix(), a <= b || Value::Sym(x).order_prefix() == Value::Sym(y).order_prefix());
        }

        /// A text is bare as its characters say (the test reads bytes), and an identifier's
        /// symbol made without the test is the one [`Sym::new`] makes, `not` quoted.
        #[test]
        fn bareness_is_read_from_the_characters(text in "[a-cA_0-9é ]{0,20}|not", identifier in "[a-z][a-z0-9_]{0,20}|not") {
            let mut chars = text.chars();
            let by_chars = matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && text != "not";
            proptest::prop_assert_eq!(is_bare_symbol(&text), by_chars);
            let (made, scanned) = (Sym::identifier(&identifier), Sym::new(&identifier));
            proptest::prop_assert_eq!(made, scanned);
            proptest::prop_assert_eq!(made.is_bare(), identifier != "not");
            proptest::prop_assert_eq!(Value::Sym(made).to_string(), Value::Sym(scanned).to_string());
        }
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
