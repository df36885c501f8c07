//! A hash-indexed slab: entries in a vector in the order they arrived (emptied slots
//! reused), found by hash through a table of 4-byte slot indices.
//!
//! The count tables of windows and hash joins grow past the caches (♢100 over 1,000 new
//! records per time point holds 10⁵ records). A window's retractions come in the order its
//! records arrived (the runtime's input diff keeps that order), so in the slab they meet
//! their entries among their neighbours, where a hash table of whole entries scattered them
//! (a DRAM miss per change); the index table itself is small enough to stay in the caches.
//!
//! Pitfall: an entry must carry its own hash (`hash_of`), which the table needs to grow.

use hashbrown::HashTable;

pub(super) struct Slab<T> {
    slots: Vec<Option<T>>,
    index: HashTable<u32>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Slab<T> {
        Slab {
            slots: Vec::new(),
            index: HashTable::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Applies `change` to the entry under `hash` that `eq(entry, &key)` accepts, and
    /// empties its slot when `change` returns true; puts `make(key)` in a free slot when
    /// there is no such entry. One probe either way. Returns the entry's slot and whether
    /// it was made.
    pub(super) fn change_or_insert<K>(
        &mut self,
        hash: u64,
        key: K,
        eq: impl Fn(&T, &K) -> bool,
        hash_of: impl Fn(&T) -> u64,
        make: impl FnOnce(K) -> T,
        change: impl FnOnce(&mut T) -> bool,
    ) -> (u32, bool) {
        let Slab { slots, index, free } = self;
        let entry_of = |i: &u32| slots[*i as usize].as_ref();
        match index.entry(
            hash,
            |i| entry_of(i).is_some_and(|e| eq(e, &key)),
            |i| entry_of(i).map_or(0, &hash_of),
        ) {
            hashbrown::hash_table::Entry::Occupied(entry) => {
                let i = *entry.get();
                if slots[i as usize].as_mut().is_some_and(change) {
                    slots[i as usize] = None;
                    entry.remove();
                    free.push(i);
                }
                (i, false)
            }
            hashbrown::hash_table::Entry::Vacant(entry) => {
                let i = put(slots, free, make(key));
                entry.insert(i);
                (i, true)
            }
        }
    }

    /// The entry under `hash` that `eq` accepts.
    pub(super) fn find(&self, hash: u64, eq: impl Fn(&T) -> bool) -> Option<&T> {
        let entry_of = |i: &u32| self.slots[*i as usize].as_ref();
        self.index
            .find(hash, |i| entry_of(i).is_some_and(&eq))
            .and_then(entry_of)
    }

    pub(super) fn get_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.slots.get_mut(slot as usize)?.as_mut()
    }

    /// Empties `slot`, whose entry has `hash`; returns the entry.
    pub(super) fn remove(&mut self, slot: u32, hash: u64) -> Option<T> {
        let entry = self.slots.get_mut(slot as usize)?.take()?;
        if let Ok(found) = self.index.find_entry(hash, |&i| i == slot) {
            found.remove();
        }
        self.free.push(slot);
        Some(entry)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The entries in slot order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }

    /// How many slots the slab has, emptied ones included.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }
}

/// Puts `entry` in a free slot, or a new one; returns the slot.
fn put<T>(slots: &mut Vec<Option<T>>, free: &mut Vec<u32>, entry: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slots[i as usize] = Some(entry);
            i
        }
        None => {
            slots.push(Some(entry));
            slot_index(slots.len() - 1)
        }
    }
}

/// A slot position as the index table stores it. A slab of more than 2³² live entries
/// (256 GiB of 64-byte entries) cannot be allocated, so the conversion cannot fail in
/// practice.
fn slot_index(index: usize) -> u32 {
    u32::try_from(index).unwrap_or_else(|_| unreachable!("more than 2^32 live entries"))
}
