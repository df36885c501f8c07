//! The timestamps rules are rendered at: time points (`u64`) outside `iterate`, and
//! `Product<u64, u64>` inside it.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use timely::order::Product;
use timely::progress::Timestamp;

use crate::operators::{Coll, Keyed, hash_join, zero_one};
use stgflow_lang::value::Row;

/// Timestamps the rules are rendered at, with the cheapest way to make a collection 0/1:
/// [`zero_one::zero_one`] for the totally ordered time points, `distinct` inside
/// `iterate`.
pub trait Time: Timestamp + Lattice {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, Self, D, isize>,
    ) -> VecCollection<'s, Self, D, isize>;

    /// `logic(key, left value, right value)` for each pair of records with equal keys.
    fn join_keyed<'s, L>(left: Keyed<'s, Self>, right: Keyed<'s, Self>, logic: L) -> Coll<'s, Self>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static;

    /// The records of `left` whose key is not in `keys` (any counts: present means
    /// positive).
    fn antijoin<'s>(left: Keyed<'s, Self>, keys: Coll<'s, Self>) -> Keyed<'s, Self>;
}

impl Time for u64 {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, u64, D, isize>,
    ) -> VecCollection<'s, u64, D, isize> {
        zero_one::zero_one(collection)
    }

    fn join_keyed<'s, L>(left: Keyed<'s, u64>, right: Keyed<'s, u64>, logic: L) -> Coll<'s, u64>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static,
    {
        hash_join::join(left, right, logic)
    }

    fn antijoin<'s>(left: Keyed<'s, u64>, keys: Coll<'s, u64>) -> Keyed<'s, u64> {
        hash_join::antijoin(left, keys)
    }
}

impl Time for Product<u64, u64> {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, Product<u64, u64>, D, isize>,
    ) -> VecCollection<'s, Product<u64, u64>, D, isize> {
        collection.distinct()
    }

    fn join_keyed<'s, L>(
        left: Keyed<'s, Product<u64, u64>>,
        right: Keyed<'s, Product<u64, u64>>,
        logic: L,
    ) -> Coll<'s, Product<u64, u64>>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static,
    {
        left.arrange_by_key()
            .join_core(right.arrange_by_key(), logic)
    }

    fn antijoin<'s>(
        left: Keyed<'s, Product<u64, u64>>,
        keys: Coll<'s, Product<u64, u64>>,
    ) -> Keyed<'s, Product<u64, u64>> {
        // Differential's antijoin multiplies by the keys' counts: make them 0/1.
        left.antijoin(keys.distinct())
    }
}
