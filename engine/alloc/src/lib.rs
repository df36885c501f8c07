//! The global allocator of stgflow's binaries: mimalloc, without transparent huge pages
//! (its `no_thp` feature): each fresh huge page is zeroed whole at its first touch, and a
//! run touches too few of them for that to pay.
//!
//! The `mimalloc` crate's allocator asks for every block through `mi_malloc_aligned`,
//! whatever its alignment. For blocks above mimalloc's small sizes (1 KiB) that takes its
//! generic aligned path, which over-allocates and adjusts, for the message and row
//! buffers of the dataflow. Every mimalloc block is aligned to at least a pointer's size
//! (its size classes are multiples of 8 bytes in pages that are aligned), so a layout
//! that asks for no more goes to the plain `mi_malloc` family here, and only a wider one
//! to the aligned.

// The one crate with unsafe code (the workspace denies it elsewhere): `GlobalAlloc` is an
// unsafe trait, implemented over mimalloc's C functions. Every unsafe block says why it
// holds.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every mimalloc block has.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

/// mimalloc, plain where it can be (see the crate docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Allocator;

// SAFETY: each method hands mimalloc's block for the layout's size, aligned as the layout
// asks (the plain calls only where every block already is), and frees and reallocates
// only blocks it handed out; `mi_free` takes blocks of either family.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation functions take any size and alignment.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`'s alignment, which the
        // new block keeps.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap_or(Layout::new::<u8>())
    }

    /// Blocks of small, medium and large sizes at every alignment up to a page are
    /// aligned as asked, zeroed blocks are zero, and a block keeps its bytes as it grows
    /// and shrinks.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let allocator = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 100, 1000, 1025, 5000, 70_000, 3 << 20] {
                let byte = |i: usize| (i % 251) as u8;
                // SAFETY: non-zero sizes; each block used within its size and freed
                // once, with the layout it has then.
                unsafe {
                    let zeroed = allocator.alloc_zeroed(layout(size, align));
                    assert_eq!(zeroed as usize % align, 0, "zeroed {size} at {align}");
                    assert!(
                        std::slice::from_raw_parts(zeroed, size)
                            .iter()
                            .all(|&b| b == 0)
                    );
                    allocator.dealloc(zeroed, layout(size, align));

                    let block = allocator.alloc(layout(size, align));
                    assert_eq!(block as usize % align, 0, "{size} at {align}");
                    (0..size).for_each(|i| *block.add(i) = byte(i));
                    let grown = allocator.realloc(block, layout(size, align), 3 * size);
                    assert_eq!(grown as usize % align, 0, "{size} grown at {align}");
                    assert!((0..size).all(|i| *grown.add(i) == byte(i)));
                    let half = size.div_ceil(2);
                    let shrunk = allocator.realloc(grown, layout(3 * size, align), half);
                    assert_eq!(shrunk as usize % align, 0, "{size} shrunk at {align}");
                    assert!((0..half).all(|i| *shrunk.add(i) == byte(i)));
                    allocator.dealloc(shrunk, layout(half, align));
                }
            }
        }
    }
}
