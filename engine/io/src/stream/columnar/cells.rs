//! A column's cells read through its type found once per record batch, not looked up
//! again at every cell.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, LargeStringArray, StringArray, StringViewArray};

use super::{float, integer, text};

/// A column of a batch, by the type its cells are read as.
pub(super) enum Cells {
    Text(StringArray),
    LargeText(LargeStringArray),
    View(StringViewArray),
    Int64(Int64Array),
    /// Dictionaries, narrower integers, floats, and what cannot be read: cell by cell.
    Other(ArrayRef),
}

/// An argument's cell.
pub(super) enum Cell<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Float(f64),
    /// Neither a number nor text.
    Unreadable,
}

impl Cells {
    pub(super) fn of(column: &ArrayRef) -> Cells {
        if let Some(strings) = column.as_string_opt::<i32>() {
            Cells::Text(strings.clone())
        } else if let Some(strings) = column.as_string_opt::<i64>() {
            Cells::LargeText(strings.clone())
        } else if let Some(strings) = column.as_string_view_opt() {
            Cells::View(strings.clone())
        } else if let Some(integers) = column.as_primitive_opt::<Int64Type>() {
            Cells::Int64(integers.clone())
        } else {
            Cells::Other(column.clone())
        }
    }

    /// Cell `at` as text: `None` if the column is not text, `Some(None)` for a null.
    #[inline]
    pub(super) fn text(&self, at: usize) -> Option<Option<&str>> {
        match self {
            Cells::Text(a) => Some(a.is_valid(at).then(|| a.value(at))),
            Cells::LargeText(a) => Some(a.is_valid(at).then(|| a.value(at))),
            Cells::View(a) => Some(a.is_valid(at).then(|| a.value(at))),
            Cells::Int64(_) => None,
            Cells::Other(a) => text(a, at),
        }
    }

    /// Cell `at` as an integer: `None` if the column does not hold integers, `Some(None)`
    /// for a null.
    #[inline]
    pub(super) fn integer(&self, at: usize) -> Option<Option<i64>> {
        match self {
            Cells::Int64(a) => Some(a.is_valid(at).then(|| a.value(at))),
            Cells::Other(a) => integer(a, at),
            _ => None,
        }
    }

    /// Cell `at` as an argument.
    #[inline]
    pub(super) fn get(&self, at: usize) -> Cell<'_> {
        match self {
            Cells::Int64(a) if a.is_valid(at) => Cell::Int(a.value(at)),
            Cells::Other(a) if a.is_valid(at) => match (integer(a, at), text(a, at)) {
                (Some(Some(i)), _) => Cell::Int(i),
                (_, Some(Some(s))) => Cell::Text(s),
                _ => float(a, at).map_or(Cell::Unreadable, Cell::Float),
            },
            _ => match self.text(at) {
                Some(Some(s)) => Cell::Text(s),
                _ => Cell::Null,
            },
        }
    }

    /// Whether cell `at` is null.
    #[inline]
    pub(super) fn is_null(&self, at: usize) -> bool {
        match self {
            Cells::Text(a) => a.is_null(at),
            Cells::LargeText(a) => a.is_null(at),
            Cells::View(a) => a.is_null(at),
            Cells::Int64(a) => a.is_null(at),
            Cells::Other(a) => a.is_null(at),
        }
    }

    /// The column itself.
    pub(super) fn array(&self) -> &dyn Array {
        match self {
            Cells::Text(a) => a,
            Cells::LargeText(a) => a,
            Cells::View(a) => a,
            Cells::Int64(a) => a,
            Cells::Other(a) => a.as_ref(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.array().len()
    }
}
