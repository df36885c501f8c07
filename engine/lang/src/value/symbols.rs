//! The table of long symbols (longer than [`super::INLINE`] bytes: IRIs, long ids), and
//! when a symbol may leave it.
//!
//! A value names a long symbol by its slot in this table, the slot's generation and its
//! text's hash, all in the value's bytes: equality and hashing never read the table, and
//! a value still copies as bytes. Reading the text (printing, ordering) finds the slot
//! without a lock; a slot that has been freed or given to another symbol since the value
//! was made is found out by its generation, which panics rather than read the wrong text.
//!
//! **When a symbol is freed.** Values count no references (they are `Copy`), so the table
//! frees by time instead. A stream's reader stamps each long symbol of a fact with the
//! last time point any fact derived from it can be held at (the fact's time plus its
//! predicate's reach, [`crate::reach`]), for its run's [`Clock`], which says up to which
//! time point the run's output is written and its state forgotten. A symbol behind its
//! run's clock (behind every clock, where several runs stamped it) is freed when its
//! shard of the table next grows twice over. A symbol made anywhere else (a program's
//! constants, built-ins, values read from another process, a reader without a clock) is
//! pinned: kept for the process's life, as every long symbol was before.
//!
//! A reader parses a line before it knows the facts' times, so symbols made while it
//! parses are held ([`holding`]) until the line is done and stamped.
//!
//! **Unsafe code.** The workspace denies it elsewhere. Values are `Copy` and cannot hold
//! a guard, so the table hands out its entries by pointer: a chunk of slots, once made,
//! is never freed, and an entry is freed only by a sweep, under its shard's write lock,
//! once its stamp is behind every clock and no reader holds it.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use hashbrown::HashTable;

/// Shards of the table, chosen by the text's hash: readers on several workers intern
/// fresh symbols at once.
const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;
/// Slots per shard, at most (the slot number's other bits).
const INDEX_BITS: u32 = 32 - SHARD_BITS;
/// A shard's slots come in chunks that double in size: none ever moves, so a slot is
/// read without a lock while the table grows.
const FIRST_CHUNK_BITS: u32 = 10;
const CHUNKS: usize = (INDEX_BITS - FIRST_CHUNK_BITS + 1) as usize;
/// The fewest live symbols in a shard before it is swept.
const FIRST_SWEEP: usize = 1 << 8;

/// A stamp that never falls behind a clock.
const PINNED: u64 = u64::MAX;

/// A long symbol's data.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) text: Box<str>,
    pub(super) hash: u64,
    /// The first 8 bytes of the text, big-endian (zero-padded): comparing these orders
    /// most pairs of symbols without reading their text.
    pub(super) prefix: u64,
    /// Whether the quoted text needs no escapes.
    pub(super) plain: bool,
}

/// A slot of the table: the entry in it now, and what says when that entry may go. These
/// live side by side in the slots' chunks, so that stamping a symbol and sweeping a shard
/// read no entry.
struct Slot {
    entry: AtomicPtr<Entry>,
    /// The slot's generation (16 bits): a handle of an earlier one is stale.
    generation: AtomicU32,
    /// The last time point a fact holding the symbol may be held at; [`PINNED`]: always.
    stamp: AtomicU64,
    /// The clock whose run alone has stamped the symbol: [`NO_CLOCK`] before the first
    /// stamp, [`SHARED`] once two have.
    owner: AtomicU32,
    /// Readers parsing a line that holds the symbol, not yet stamped.
    held: AtomicU32,
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            entry: AtomicPtr::new(std::ptr::null_mut()),
            generation: AtomicU32::new(0),
            stamp: AtomicU64::new(0),
            owner: AtomicU32::new(NO_CLOCK),
            held: AtomicU32::new(0),
        }
    }
}

const NO_CLOCK: u32 = 0;
const SHARED: u32 = u32::MAX;

/// Where a long symbol lives: its slot (shard and index) and the slot's generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Handle {
    pub(super) slot: u32,
    pub(super) generation: u16,
}

struct Shard {
    table: RwLock<Table>,
    chunks: [AtomicPtr<Slot>; CHUNKS],
}

struct Table {
    /// Slot numbers (within the shard), by their text's hash.
    map: HashTable<u32>,
    /// Slots made so far.
    slots: u32,
    /// Freed slots, to be given out again.
    free: Vec<u32>,
    /// The number of live symbols at which the shard is swept next.
    next_sweep: usize,
    /// Symbols made and freed in the shard, over the process's life.
    made: u64,
    freed: u64,
}

/// The shards, made at compile time: finding one is an index, not a lazy initialisation.
static SHARDS_TABLE: [Shard; SHARDS] = [const {
    Shard {
        table: RwLock::new(Table {
            map: HashTable::new(),
            slots: 0,
            free: Vec::new(),
            next_sweep: FIRST_SWEEP,
            made: 0,
            freed: 0,
        }),
        chunks: [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS],
    }
}; SHARDS];

#[inline]
fn shards() -> &'static [Shard; SHARDS] {
    &SHARDS_TABLE
}

/// The chunk of slot `index` and its place in the chunk.
#[inline]
fn chunk_of(index: u32) -> (usize, usize) {
    let shifted = u64::from(index) + (1 << FIRST_CHUNK_BITS);
    let chunk = 63 - shifted.leading_zeros() - FIRST_CHUNK_BITS;
    (
        chunk as usize,
        (shifted - (1 << (chunk + FIRST_CHUNK_BITS))) as usize,
    )
}

impl Shard {
    /// Slot `index`, `None` where its chunk was never made.
    #[inline]
    fn cell(&self, index: u32) -> Option<&Slot> {
        let (chunk, at) = chunk_of(index);
        let base = self.chunks[chunk].load(Ordering::Acquire);
        // SAFETY: a chunk, once made, holds `1 << (chunk + FIRST_CHUNK_BITS)` slots, more
        // than `at`, and is never freed.
        (!base.is_null()).then(|| unsafe { &*base.add(at) })
    }

    /// Slot `index`, its chunk made first where needed (under the write lock).
    fn cell_made(&self, index: u32) -> &Slot {
        let (chunk, _) = chunk_of(index);
        if self.chunks[chunk].load(Ordering::Acquire).is_null() {
            let cells: Box<[Slot]> = (0..(1usize << (chunk as u32 + FIRST_CHUNK_BITS)))
                .map(|_| Slot::empty())
                .collect();
            let base = Box::leak(cells).as_mut_ptr();
            self.chunks[chunk].store(base, Ordering::Release);
        }
        self.cell(index)
            .unwrap_or_else(|| unreachable!("the chunk was just made"))
    }

    /// The live entry in slot `index`, if any.
    #[inline]
    fn entry(&self, index: u32) -> Option<&Entry> {
        let pointer = self.cell(index)?.entry.load(Ordering::Acquire);
        // SAFETY: the pointer came from `Box::into_raw`, and a sweep frees an entry only
        // once no value that can still be read holds it (see the module's comment).
        (!pointer.is_null()).then(|| unsafe { &*pointer })
    }
}

/// The shard and index of a slot number.
#[inline]
fn split(slot: u32) -> (&'static Shard, u32) {
    (
        &shards()[(slot >> INDEX_BITS) as usize],
        slot & ((1 << INDEX_BITS) - 1),
    )
}

/// The slot of `handle` and its entry: the symbol must still be live.
#[inline]
fn live(handle: Handle) -> (&'static Slot, &'static Entry) {
    let (shard, index) = split(handle.slot);
    let slot = shard
        .cell(index)
        .filter(|slot| slot.generation.load(Ordering::Acquire) == u32::from(handle.generation));
    let pointer = slot.map_or(std::ptr::null_mut(), |slot| {
        slot.entry.load(Ordering::Acquire)
    });
    match slot {
        // SAFETY: the pointer came from `Box::into_raw`, and a sweep frees an entry only
        // once no value that can still be read holds it (see the module's comment).
        Some(slot) if !pointer.is_null() => (slot, unsafe { &*pointer }),
        _ => panic!(
            "a long symbol was read after it was freed (slot {}, generation {}): its stamp \
             fell behind a fact still held",
            handle.slot, handle.generation
        ),
    }
}

/// The entry of `handle`: it must still be live. Out of line: the paths of short
/// symbols that branch here stay small enough to inline.
#[inline(never)]
pub(super) fn entry(handle: Handle) -> &'static Entry {
    live(handle).1
}

thread_local! {
    /// Whether this thread's reader is parsing a line ([`holding`]), and the long symbols
    /// it has made meanwhile.
    static HOLDING: Cell<bool> = const { Cell::new(false) };
    static HELD: RefCell<Vec<Handle>> = const { RefCell::new(Vec::new()) };
}

/// Runs `parse` with every long symbol it makes held (not freed, not pinned) until it
/// returns; [`stamp`] the symbols of the facts it keeps meanwhile. Symbols of facts it
/// drops are left to be freed. A line without long symbols costs a flag set and cleared.
pub fn holding<R>(parse: impl FnOnce() -> R) -> R {
    if HOLDING.replace(true) {
        return parse();
    }
    // Released on the way out, also where `parse` panics.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            HOLDING.set(false);
            HELD.with(|held| {
                for handle in held.borrow_mut().drain(..) {
                    live(handle).0.held.fetch_sub(1, Ordering::AcqRel);
                }
            });
        }
    }
    let _release = Release;
    parse()
}

/// Whether this thread's reader has made or found a long symbol in the line it parses:
/// a fact without one has nothing to stamp.
#[inline]
pub fn holds_any() -> bool {
    HELD.with(|held| !held.borrow().is_empty())
}

/// Raises the stamp of the long symbol `handle` to `until` (a time point of `clock`'s
/// run, or [`u64::MAX`] to pin it).
pub(super) fn stamp(handle: Handle, until: u64, clock: &Clock) {
    let (slot, _) = live(handle);
    let id = clock.0.id;
    let owner = slot.owner.load(Ordering::Acquire);
    if owner != id && owner != SHARED {
        if let Err(other) =
            slot.owner
                .compare_exchange(NO_CLOCK, id, Ordering::AcqRel, Ordering::Acquire)
        {
            if other != id {
                slot.owner.store(SHARED, Ordering::Release);
            }
        }
    }
    slot.stamp.fetch_max(until, Ordering::AcqRel);
}

/// FNV-1a over the text: stable across processes, platforms and releases.
pub(super) fn text_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The handle of `text` (longer than [`super::INLINE`]), whose hash is `hash`: the live
/// symbol of that text, or a new one. Held where this thread is [`holding`], else pinned.
#[inline(never)]
pub(super) fn intern(text: &str, hash: u64) -> Handle {
    let shard_number = (hash >> (64 - SHARD_BITS)) as u32;
    let shard = &shards()[shard_number as usize];
    let holder = HOLDING.get();
    let handle_of = |index: u32| {
        let slot = shard
            .cell(index)
            .unwrap_or_else(|| unreachable!("a mapped slot is made"));
        if holder {
            slot.held.fetch_add(1, Ordering::AcqRel);
        } else {
            slot.stamp.store(PINNED, Ordering::Release);
        }
        Handle {
            slot: shard_number << INDEX_BITS | index,
            generation: slot.generation.load(Ordering::Acquire) as u16,
        }
    };
    let found = |table: &Table| {
        table
            .map
            .find(hash, |&index| {
                shard.entry(index).is_some_and(|e| *e.text == *text)
            })
            .copied()
    };
    let handle = {
        let table = shard.table.read().unwrap_or_else(|p| p.into_inner());
        found(&table).map(handle_of)
    };
    let handle = handle.unwrap_or_else(|| {
        let mut table = shard.table.write().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = found(&table) {
            return handle_of(index);
        }
        if table.map.len() >= table.next_sweep {
            sweep(shard, &mut table);
        }
        let index = table.free.pop().unwrap_or_else(|| {
            table.slots += 1;
            table.slots - 1
        });
        assert!(
            index < 1 << INDEX_BITS,
            "more than 2^28 long symbols in one shard"
        );
        // No other thread reads the slot before its entry is in: plain stores, not the
        // read-modify-writes of `handle_of`, which wait for the text's copy to drain.
        let slot = shard.cell_made(index);
        slot.stamp
            .store(if holder { 0 } else { PINNED }, Ordering::Relaxed);
        slot.owner.store(NO_CLOCK, Ordering::Relaxed);
        slot.held.store(u32::from(holder), Ordering::Relaxed);
        let entry = Box::new(Entry {
            text: text.into(),
            hash,
            prefix: super::prefix_of(text.as_bytes()),
            // A fold without an early exit: it compiles to vector compares.
            plain: !text.bytes().fold(false, |escaped, b| {
                escaped | matches!(b, b'"' | b'\\' | b'\n' | b'\t')
            }),
        });
        table.made += 1;
        slot.entry.store(Box::into_raw(entry), Ordering::Release);
        table.map.insert_unique(hash, index, |&index| {
            shard.entry(index).map_or(0, |e| e.hash)
        });
        Handle {
            slot: shard_number << INDEX_BITS | index,
            generation: slot.generation.load(Ordering::Relaxed) as u16,
        }
    });
    if holder {
        HELD.with(|held| held.borrow_mut().push(handle));
    }
    handle
}

/// Frees the shard's symbols that no reader holds and that no run can hold any more: a
/// symbol one run alone stamped, once its clock has passed the stamp (or the run has
/// ended); one several runs stamped, once every clock has. The next sweep comes when the
/// live symbols have doubled again.
fn sweep(shard: &Shard, table: &mut Table) {
    let clocks = clock_readings();
    let every = clocks.iter().map(|&(_, at)| at).min().unwrap_or(0);
    for index in 0..table.slots {
        let Some(slot) = shard.cell(index) else {
            continue;
        };
        let pointer = slot.entry.load(Ordering::Acquire);
        let stamp = slot.stamp.load(Ordering::Acquire);
        if pointer.is_null() || slot.held.load(Ordering::Acquire) > 0 || stamp == PINNED {
            continue;
        }
        let behind = match slot.owner.load(Ordering::Acquire) {
            NO_CLOCK | SHARED => every,
            owner => match clocks.binary_search_by_key(&owner, |&(id, _)| id) {
                Ok(at) => clocks[at].1,
                // Its run has ended: it holds nothing.
                Err(_) => u64::MAX,
            },
        };
        if stamp >= behind {
            continue;
        }
        // SAFETY: the pointer came from `Box::into_raw`; only a sweep, under the write
        // lock held here, frees it.
        let hash = unsafe { &*pointer }.hash;
        if let Ok(mapped) = table.map.find_entry(hash, |&i| i == index) {
            mapped.remove();
        }
        slot.entry.store(std::ptr::null_mut(), Ordering::Release);
        let generation = slot.generation.load(Ordering::Acquire) as u16;
        slot.generation
            .store(u32::from(generation.wrapping_add(1)), Ordering::Release);
        // SAFETY: the pointer is out of its slot and its map; no value that can still be
        // read holds it, as its stamp is behind its run's clock.
        drop(unsafe { Box::from_raw(pointer) });
        table.freed += 1;
        table.free.push(index);
    }
    table.next_sweep = (table.map.len() * 2).max(FIRST_SWEEP);
}

#[derive(Debug)]
struct ClockState {
    id: u32,
    at: AtomicU64,
}

/// The clocks of the runs in the process.
fn clocks() -> &'static Mutex<Vec<Weak<ClockState>>> {
    static CLOCKS: Mutex<Vec<Weak<ClockState>>> = Mutex::new(Vec::new());
    &CLOCKS
}

/// Each live clock's id and time point, by id.
fn clock_readings() -> Vec<(u32, u64)> {
    let mut clocks = clocks().lock().unwrap_or_else(|p| p.into_inner());
    clocks.retain(|clock| clock.strong_count() > 0);
    let mut readings: Vec<(u32, u64)> = clocks
        .iter()
        .filter_map(Weak::upgrade)
        .map(|clock| (clock.id, clock.at.load(Ordering::Acquire)))
        .collect();
    readings.sort_unstable();
    readings
}

/// A run's progress as the table of long symbols sees it: the time point before which
/// the run holds no fact any more and has written all its output. The symbols only this
/// run stamped are freed once its clock has passed them, or once it is dropped (every
/// clone: the run is over); the symbols several runs stamped, once every clock has. A
/// clock that never advances frees nothing of its own, nor anything shared.
#[derive(Clone, Debug)]
pub struct Clock(Arc<ClockState>);

impl Clock {
    /// A clock at time point 0.
    pub fn new() -> Clock {
        static IDS: AtomicU32 = AtomicU32::new(1);
        let id = IDS.fetch_add(1, Ordering::Relaxed);
        assert!(id != SHARED, "more than 2^32 clocks");
        let clock = Arc::new(ClockState {
            id,
            at: AtomicU64::new(0),
        });
        clocks()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(&clock));
        Clock(clock)
    }

    /// Every time point before `t` is written and forgotten.
    pub fn advance(&self, t: u64) {
        self.0.at.fetch_max(t, Ordering::AcqRel);
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}

/// How many long symbols the process has made, and how many of them it has freed
/// (`--stats`).
pub fn counts() -> (u64, u64) {
    shards().iter().fold((0, 0), |(made, freed), shard| {
        let table = shard.table.read().unwrap_or_else(|p| p.into_inner());
        (made + table.made, freed + table.freed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_slots_in_order() {
        assert_eq!(chunk_of(0), (0, 0));
        assert_eq!(chunk_of(1023), (0, 1023));
        assert_eq!(chunk_of(1024), (1, 0));
        assert_eq!(chunk_of(3071), (1, 2047));
        assert_eq!(chunk_of(3072), (2, 0));
        let last = (1u32 << INDEX_BITS) - 1;
        assert!(chunk_of(last).0 < CHUNKS);
    }
}
