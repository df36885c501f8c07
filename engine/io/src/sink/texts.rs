//! The texts of the facts that hold, kept in byte order from one time point to the next,
//! for a [`super::Snapshot`] line (Laser's output: at ♢10 over 100 new atoms per time
//! point, a line of 1,100 atoms of which 200 change).
//!
//! Each distinct text has an id: its bytes (a buffer reused once the text stops holding)
//! and how many facts hold with it, found by the text's hash. The ids in byte order are a
//! vector. A time point's changes only count and collect: a text that starts is put into
//! the order when the line is written — the time point's new texts sorted, each placed by
//! a binary search of the old order after the one before it, and the texts that stopped
//! left out as the order is copied. A search tree of the texts instead (`BTreeMap`)
//! compared texts twenty-odd times per change and walked its nodes for every line.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

#[derive(Debug, Default)]
pub(super) struct SortedTexts {
    /// What goes before each text in a line.
    separator: &'static [u8],
    /// Each id's text as a line has it, after the separator, with zeros after it up to a
    /// multiple of [`CHUNK`] bytes: a line copies it in chunks of that constant size, not
    /// with a `memcpy` call per text of a dozen bytes. `lens` has how much of it counts.
    texts: Vec<Vec<u8>>,
    lens: Vec<usize>,
    /// Each id's count of facts holding with its text; 0 for a free id or one whose text
    /// stopped holding in this time point.
    counts: Vec<usize>,
    /// Ids of held texts by the hash of their text.
    by_text: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// The held ids in their texts' byte order, as of the last line.
    order: Vec<u32>,
    /// Ids of this time point's new texts, and of texts that stopped holding.
    added: Vec<u32>,
    stopped: Vec<u32>,
    /// Ids free for new texts (their buffers kept), and scratch for the next order.
    free: Vec<u32>,
    next: Vec<u32>,
}

/// The bytes a line copies of a text at a time.
const CHUNK: usize = 16;

impl SortedTexts {
    /// No texts; a line puts `separator` before each.
    pub(super) fn new(separator: &'static [u8]) -> SortedTexts {
        SortedTexts {
            separator,
            ..SortedTexts::default()
        }
    }

    /// The text of `id`, without its separator and padding.
    fn text(&self, id: u32) -> &[u8] {
        text_of(&self.texts, &self.lens, self.separator.len(), id)
    }

    /// One more fact holds with `text`; returns the text's id, for [`SortedTexts::remove`].
    pub(super) fn add(&mut self, text: &[u8]) -> u32 {
        let hash = self.hasher.hash_one(text);
        let (texts, lens, skip) = (&self.texts, &self.lens, self.separator.len());
        let same = |&id: &u32| text_of(texts, lens, skip, id) == text;
        if let Some(&id) = self.by_text.find(hash, same) {
            self.counts[id as usize] += 1;
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.texts.push(Vec::new());
                self.lens.push(0);
                self.counts.push(0);
                u32::try_from(self.texts.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let buffer = &mut self.texts[id as usize];
        buffer.clear();
        buffer.extend_from_slice(self.separator);
        buffer.extend_from_slice(text);
        self.lens[id as usize] = buffer.len();
        buffer.resize(buffer.len().next_multiple_of(CHUNK), 0);
        self.counts[id as usize] = 1;
        let (texts, lens, hasher) = (&self.texts, &self.lens, &self.hasher);
        self.by_text.insert_unique(hash, id, |&id| {
            hasher.hash_one(text_of(texts, lens, skip, id))
        });
        self.added.push(id);
        id
    }

    /// One fact less holds with the text `id` (which [`SortedTexts::add`] gave it): the
    /// text is neither formatted nor compared again.
    pub(super) fn remove(&mut self, id: u32) {
        let Some(count) = self.counts.get_mut(id as usize).filter(|c| **c > 0) else {
            return;
        };
        *count -= 1;
        if *count > 0 {
            return;
        }
        let hash = self.hasher.hash_one(self.text(id));
        if let Ok(entry) = self.by_text.find_entry(hash, |&other| other == id) {
            entry.remove();
        }
        self.stopped.push(id);
    }

    /// Appends, for every fact that holds, the separator and its text, in byte order.
    pub(super) fn write(&mut self, line: &mut Vec<u8>) {
        if !self.added.is_empty() || !self.stopped.is_empty() {
            self.reorder();
        }
        for &id in &self.order {
            let (padded, len) = (&self.texts[id as usize], self.lens[id as usize]);
            for _ in 0..self.counts[id as usize] {
                let end = line.len() + len;
                for chunk in padded.chunks_exact(CHUNK) {
                    if let Ok(chunk) = <&[u8; CHUNK]>::try_from(chunk) {
                        line.extend_from_slice(chunk);
                    }
                }
                line.truncate(end);
            }
        }
    }

    /// Takes this time point's changes into the order.
    fn reorder(&mut self) {
        let (texts, lens, skip) = (&self.texts, &self.lens, self.separator.len());
        let text = |id: &u32| text_of(texts, lens, skip, *id);
        // A text that started and stopped within the time point is in neither.
        let counts = &self.counts;
        self.added.retain(|&id| counts[id as usize] > 0);
        self.added.sort_unstable_by(|a, b| text(a).cmp(text(b)));
        self.next.clear();
        self.next.reserve(self.order.len() + self.added.len());
        let mut from = 0;
        for &id in &self.added {
            let at = from + self.order[from..].partition_point(|old| text(old) < text(&id));
            let kept = self.order[from..at]
                .iter()
                .filter(|&&old| counts[old as usize] > 0);
            self.next.extend(kept);
            self.next.push(id);
            from = at;
        }
        let kept = self.order[from..]
            .iter()
            .filter(|&&old| counts[old as usize] > 0);
        self.next.extend(kept);
        std::mem::swap(&mut self.order, &mut self.next);
        self.added.clear();
        // A text that stops leaves the table, so starting again it takes a new id.
        self.free.append(&mut self.stopped);
    }
}

/// The text of `id` in `texts` (see [`SortedTexts::texts`]): `lens[id]` bytes, the first
/// `skip` (the separator) left out.
fn text_of<'t>(texts: &'t [Vec<u8>], lens: &[usize], skip: usize, id: u32) -> &'t [u8] {
    let id = id as usize;
    texts[id].get(skip..lens[id]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Time points of changes to texts from a small set (so texts repeat, stop and
        /// start again within a time point): each line is what a sorted map of the texts'
        /// counts gives.
        #[test]
        fn lines_are_the_held_texts_in_byte_order(
            points in prop::collection::vec(
                prop::collection::vec((0u8..12, any::<bool>()), 0..20),
                1..30,
            ),
        ) {
            let mut texts = SortedTexts::new(b" ");
            let mut reference: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
            // The ids given to the facts holding with each text.
            let mut ids: BTreeMap<Vec<u8>, Vec<u32>> = BTreeMap::new();
            for changes in points {
                for (n, add) in changes {
                    // Up to three chunks long, some a multiple of one.
                    let text = format!("p(a{n},{})", "b".repeat(3 * n as usize)).into_bytes();
                    let held = reference.get(&text).copied().unwrap_or(0);
                    if add {
                        ids.entry(text.clone()).or_default().push(texts.add(&text));
                        *reference.entry(text).or_default() += 1;
                    } else if held > 0 {
                        let id = ids.get_mut(&text).and_then(Vec::pop).unwrap_or(u32::MAX);
                        texts.remove(id);
                        reference.insert(text.clone(), held - 1);
                        if held == 1 {
                            reference.remove(&text);
                        }
                    }
                }
                let mut line = Vec::new();
                texts.write(&mut line);
                let mut want = Vec::new();
                for (text, count) in &reference {
                    for _ in 0..*count {
                        want.push(b' ');
                        want.extend_from_slice(text);
                    }
                }
                prop_assert_eq!(String::from_utf8_lossy(&line), String::from_utf8_lossy(&want));
            }
        }
    }
}
