//! A global allocator wrapper that starts every large block on a cache line.
//!
//! glibc's `malloc` and mimalloc hand out large blocks 16 bytes past a page boundary (the
//! block's header sits in front), and the kernels walk their buffers in whole vectors from the
//! start, so every 64-byte AVX-512 load or store of a large array straddled two cache lines:
//! two cache accesses for one, and for stores a split that the CPU handles slowly. Asking the
//! inner allocator for 64-byte alignment on blocks of [`LARGE`] bytes and more costs nothing
//! measurable (at most a line of padding per block) and made Winograd's F(4×4) convolution
//! 10–30% faster at the seed CNN's layers (`conv_layers` example, Zen 4).
//!
//! The binaries choose their allocator (`ferrotape-py`: mimalloc inside this wrapper); the
//! library only provides it.

use std::alloc::{GlobalAlloc, Layout};

/// Blocks of at least this many bytes start on a cache line.
pub const LARGE: usize = 4096;

/// The alignment of large blocks: one cache line, one AVX-512 vector.
pub const LINE: usize = 64;

/// `A` with large blocks aligned to [`LINE`] bytes.
pub struct CacheLineAligned<A>(pub A);

/// The layout actually asked of the inner allocator for a block of layout `layout`.
fn effective(layout: Layout) -> Layout {
    if layout.size() >= LARGE && layout.align() < LINE {
        // A power of two at least the old alignment, and a size that was valid stays valid.
        layout.align_to(LINE).unwrap_or(layout)
    } else {
        layout
    }
}

// SAFETY: every block is allocated and freed by `A` with the same `effective` layout, which
// keeps the caller's size and at least its alignment, so `A`'s contract carries over.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CacheLineAligned<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.0.alloc(effective(layout))
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.0.alloc_zeroed(effective(layout))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, effective(layout))
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = effective(layout);
        let new = effective(Layout::from_size_align_unchecked(new_size, layout.align()));
        if old.align() == new.align() {
            return self.0.realloc(ptr, old, new_size);
        }
        // Crossing `LARGE` changes the alignment, which `realloc` cannot: move the block.
        let moved = self.0.alloc(new);
        if !moved.is_null() {
            std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
            self.0.dealloc(ptr, old);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    #[test]
    fn large_blocks_start_on_a_cache_line_and_keep_their_contents_when_resized() {
        let alloc = CacheLineAligned(System);
        // SAFETY: every layout has a non-zero size and a valid alignment; each pointer comes
        // from `alloc`/`realloc` for at least the bytes read or written through it (these
        // requests of at most 200 KiB are taken not to fail), and goes back to
        // `realloc`/`dealloc` once, with the layout it was last allocated with.
        unsafe {
            // Small blocks keep the inner allocator's placement; large ones are aligned.
            let small = Layout::from_size_align(100, 4).unwrap();
            let p = alloc.alloc(small);
            assert!(!p.is_null());
            for i in 0..100 {
                *p.add(i) = i as u8;
            }
            // Grow across the threshold (the block moves to an aligned one), then further.
            let p = alloc.realloc(p, small, LARGE * 3);
            assert_eq!(p as usize % LINE, 0);
            assert!((0..100).all(|i| *p.add(i) == i as u8));
            let large = Layout::from_size_align(LARGE * 3, 4).unwrap();
            let p = alloc.realloc(p, large, LARGE * 50);
            assert_eq!(p as usize % LINE, 0);
            assert!((0..100).all(|i| *p.add(i) == i as u8));
            // And shrink back below it.
            let p = alloc.realloc(p, Layout::from_size_align(LARGE * 50, 4).unwrap(), 50);
            assert!((0..50).all(|i| *p.add(i) == i as u8));
            alloc.dealloc(p, Layout::from_size_align(50, 4).unwrap());
            for size in [LARGE, 1 << 20, 5 << 20] {
                let layout = Layout::from_size_align(size, 4).unwrap();
                let p = alloc.alloc_zeroed(layout);
                assert_eq!(p as usize % LINE, 0, "{size} bytes");
                assert!((0..size).step_by(4093).all(|i| *p.add(i) == 0));
                alloc.dealloc(p, layout);
            }
        }
    }
}
