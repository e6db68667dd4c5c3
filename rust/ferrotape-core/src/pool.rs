//! Reuse of large host buffers from one op to the next.
//!
//! A training step allocates the same shapes every step, and most large results die within it.
//! Handing each of them back to the allocator and asking again costs three ways: the allocator
//! zero-fills reused memory for a zeroed request (one extra pass over every output that a kernel
//! then overwrites), returns idle large blocks to the system so that the next step takes a page
//! fault (and the kernel's page clearing) per 4 KiB, and keeps large-block bookkeeping. So a freed
//! owned buffer of at least [`MIN_BYTES`] goes into this process-wide pool, keyed by element type
//! and length, and the next request for that type and length takes it back.
//!
//! Design choice (hard to undo, since kernels come to rely on it): a pooled buffer is handed out
//! with the stale values of its last use. They are initialised values of the element type, so
//! reading them is safe, but meaningless: an allocation either clears or fills it
//! ([`crate::alloc`], [`crate::alloc_zeros`], [`crate::alloc_full`]) or is made by a kernel that
//! writes every element ([`overwritten`], [`Scratch`]). Debug builds fill handed-out buffers with
//! NaN (the minimum for integers), so a kernel that leaves an element unwritten fails its tests
//! instead of passing on a fresh allocation's zeros.
//!
//! The pool is bounded ([`max_bytes`]: 256 MiB, or an eighth of the memory the process may use
//! when that is less), evicting the oldest buffer first, and `FERROTAPE_BUFFER_POOL=0` turns it
//! off. Buffers smaller than [`MIN_BYTES`] go straight back to the allocator, whose small-object
//! paths are already fast.

use std::any::{Any, TypeId};
use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, OnceLock};

use crate::Element;

/// The smallest buffer the pool keeps (256 KiB): below it the allocator serves requests from
/// memory it keeps anyway.
pub const MIN_BYTES: usize = 256 * 1024;

/// The most bytes the pool holds.
fn max_bytes() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| {
        let enabled = std::env::var("FERROTAPE_BUFFER_POOL").map_or(true, |v| v.trim() != "0");
        if enabled {
            (256usize << 20).min(crate::buffer::memory_limit() / 8)
        } else {
            0
        }
    })
}

struct Entry {
    element: TypeId,
    len: usize,
    bytes: usize,
    vec: Box<dyn Any + Send>,
}

struct Pool {
    entries: VecDeque<Entry>,
    bytes: usize,
    /// The addresses of the buffers this module handed out and that are still in use. Only
    /// these come back: a buffer some other code allocated (a `collect`, a copy) would sit in
    /// the pool unasked for while the allocator, short of that memory, fetched fresh pages.
    handed_out: HashSet<usize, BuildAddress>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    entries: VecDeque::new(),
    bytes: 0,
    handed_out: HashSet::with_hasher(BuildAddress),
});

/// Addresses are already well-spread keys: hashing them again would be wasted work (and the
/// standard hasher cannot be built in a `static`).
#[derive(Default)]
struct BuildAddress;

impl std::hash::BuildHasher for BuildAddress {
    type Hasher = AddressHasher;
    fn build_hasher(&self) -> AddressHasher {
        AddressHasher(0)
    }
}

#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_usize(&mut self, address: usize) {
        // Large blocks are page-aligned: the low 12 bits carry nothing.
        self.0 = (address as u64 >> 12).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Entries kept in `handed_out` at most: buffers taken out of a tensor (`Storage::into_vec`)
/// never come back, so their addresses would otherwise stay forever. Forgetting them all now
/// and then costs at most one missed reuse each.
const MAX_HANDED_OUT: usize = 1 << 14;

/// Records `v` as this module's, so that it returns to the pool when freed.
fn hand_out<T>(pool: &mut Pool, v: &[T]) {
    if pool.handed_out.len() >= MAX_HANDED_OUT {
        pool.handed_out.clear();
    }
    pool.handed_out.insert(v.as_ptr() as usize);
}

fn lock() -> std::sync::MutexGuard<'static, Pool> {
    // The pool's state stays consistent at every step, so a panic elsewhere while it was held
    // leaves nothing to repair.
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn bytes_of<T>(len: usize) -> usize {
    len.saturating_mul(std::mem::size_of::<T>())
}

/// Whether a buffer of `len` elements of `T` is large enough for the pool.
#[inline]
pub fn keeps<T>(len: usize) -> bool {
    bytes_of::<T>(len) >= MIN_BYTES
}

/// Hands `v` to the pool when this module handed it out (or to the allocator: when it is
/// small, only partly initialised, another's, or the pool is full of newer buffers).
pub fn give<T: Element>(v: Vec<T>) {
    let bytes = bytes_of::<T>(v.capacity());
    let max = max_bytes();
    if bytes < MIN_BYTES || bytes > max || v.len() != v.capacity() {
        return;
    }
    let address = v.as_ptr() as usize;
    let mut evicted = Vec::new();
    let mut refused = None;
    {
        let mut pool = lock();
        if pool.handed_out.remove(&address) {
            pool.bytes += bytes;
            pool.entries.push_back(Entry {
                element: TypeId::of::<T>(),
                len: v.len(),
                bytes,
                vec: Box::new(v),
            });
            while pool.bytes > max {
                let Some(oldest) = pool.entries.pop_front() else {
                    break;
                };
                pool.bytes -= oldest.bytes;
                evicted.push(oldest);
            }
        } else {
            refused = Some(v);
        }
    }
    // Freed outside the lock: returning large blocks to the system can take a while.
    drop((evicted, refused));
}

/// A pooled buffer of exactly `len` elements of `T`, the most recently given first, with stale
/// contents (NaN in debug builds); `None` when the pool has none.
pub fn take<T: Element>(len: usize) -> Option<Vec<T>> {
    if !keeps::<T>(len) {
        return None;
    }
    let mut v = {
        let mut pool = lock();
        let at = pool
            .entries
            .iter()
            .rposition(|e| e.element == TypeId::of::<T>() && e.len == len)?;
        let entry = pool.entries.remove(at)?;
        pool.bytes -= entry.bytes;
        let v = *entry.vec.downcast::<Vec<T>>().ok()?;
        hand_out(&mut pool, &v);
        v
    };
    if cfg!(debug_assertions) {
        v.fill(T::from_f64(f64::NAN));
    }
    Some(v)
}

/// `v`, a fresh allocation of exactly its length, recorded so that it comes back to the pool
/// when freed.
pub fn adopt<T: Element>(v: Vec<T>) -> Vec<T> {
    if keeps::<T>(v.capacity()) {
        hand_out(&mut lock(), &v);
    }
    v
}

/// `len` elements for a kernel that writes every one of them: a pooled buffer, else a zeroed
/// one (fresh zeroed memory costs the allocator nothing to clear).
pub fn overwritten<T: Element>(len: usize) -> Vec<T> {
    take(len).unwrap_or_else(|| adopt(vec![T::from_f64(0.0); len]))
}

/// Bytes the pool holds now (for tests and diagnostics).
pub fn pooled_bytes() -> usize {
    lock().bytes
}

/// Spare working buffers each thread keeps for [`Scratch`] at most, and the largest it keeps.
/// Kernels take at most two at a time, sized to stay in L2 (a megabyte or two), so this holds
/// a few megabytes per thread.
const SPARE_PER_THREAD: usize = 4;
const SPARE_MAX_BYTES: usize = 4 << 20;

thread_local! {
    /// This thread's spare working buffers, of any element type.
    static SPARE: std::cell::RefCell<Vec<Box<dyn Any>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A kernel's working buffer (a patch matrix, transformed tiles): taken from the spares of the
/// thread it runs on and handed back to them when dropped. Working buffers are mostly smaller
/// than [`MIN_BYTES`], and one is made per task a parallel loop splits off, so without the
/// spares each would be a fresh allocation that the allocator clears first.
pub struct Scratch<T: Element> {
    vec: Vec<T>,
    len: usize,
}

impl<T: Element> Scratch<T> {
    pub fn new() -> Scratch<T> {
        Scratch {
            vec: Vec::new(),
            len: 0,
        }
    }

    /// Makes the buffer `len` elements long, with stale contents: the caller writes before it
    /// reads.
    pub fn resize(&mut self, len: usize) -> &mut [T] {
        if self.vec.len() < len {
            let mut larger = take_spare::<T>().unwrap_or_default();
            if larger.len() < len {
                larger.resize(len, T::from_f64(0.0));
            }
            give_spare(std::mem::replace(&mut self.vec, larger));
        }
        self.len = len;
        if cfg!(debug_assertions) {
            self.vec[..len].fill(T::from_f64(f64::NAN));
        }
        &mut self.vec[..len]
    }

    pub fn as_slice(&self) -> &[T] {
        &self.vec[..self.len]
    }
}

/// This thread's largest spare buffer of `T`.
fn take_spare<T: Element>() -> Option<Vec<T>> {
    SPARE
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            let at = (0..spare.len())
                .filter(|&i| spare[i].is::<Vec<T>>())
                .max_by_key(|&i| spare[i].downcast_ref::<Vec<T>>().map_or(0, Vec::len))?;
            spare.swap_remove(at).downcast::<Vec<T>>().ok().map(|v| *v)
        })
        .ok()
        .flatten()
}

/// Keeps `v` among this thread's spares, when there is room and it is worth keeping.
fn give_spare<T: Element>(v: Vec<T>) {
    if v.is_empty() || bytes_of::<T>(v.len()) > SPARE_MAX_BYTES {
        return;
    }
    // `try_with`: a buffer dropped while the thread exits is simply freed.
    let _ = SPARE.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.len() < SPARE_PER_THREAD {
            spare.push(Box::new(v));
        }
    });
}

impl<T: Element> Default for Scratch<T> {
    fn default() -> Self {
        Scratch::new()
    }
}

impl<T: Element> Drop for Scratch<T> {
    fn drop(&mut self) {
        give_spare(std::mem::take(&mut self.vec));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The pool is process-wide and the tests run in parallel: each test uses a length no
    // other test uses, so that what it takes is what it gave.

    #[test]
    fn a_given_buffer_comes_back_for_the_same_type_and_length() {
        let len = MIN_BYTES / 4 + 11;
        let v = adopt(vec![1.5f32; len]);
        let at = v.as_ptr();
        give(v);
        assert!(take::<f64>(len).is_none(), "another element type");
        assert!(take::<f32>(len + 1).is_none(), "another length");
        let back = take::<f32>(len).expect("pooled");
        assert_eq!(back.as_ptr(), at, "the same memory");
        assert_eq!(back.len(), len);
        if cfg!(debug_assertions) {
            assert!(back.iter().all(|x| x.is_nan()), "debug builds poison reuse");
        }
        assert!(take::<f32>(len).is_none(), "taken once");
    }

    #[test]
    fn small_and_partly_filled_buffers_are_not_kept() {
        let small = MIN_BYTES / 8 - 3;
        give(adopt(vec![0.0f64; small]));
        assert!(take::<f64>(small).is_none());
        let len = MIN_BYTES / 8 + 13;
        let mut partial = adopt(Vec::<f64>::with_capacity(len + 1));
        partial.resize(len, 0.0);
        give(partial);
        assert!(take::<f64>(len).is_none());
    }

    #[test]
    fn only_buffers_the_pool_handed_out_come_back() {
        let len = MIN_BYTES / 8 + 19;
        let elsewhere = vec![3.0f64; len];
        // The allocator may reuse the address of a buffer another test handed out and then
        // dropped as a plain `Vec`; such a stale record would accept this one once.
        lock().handed_out.remove(&(elsewhere.as_ptr() as usize));
        give(elsewhere);
        assert!(take::<f64>(len).is_none(), "allocated elsewhere: freed");
        give(overwritten::<f64>(len));
        assert!(take::<f64>(len).is_some(), "handed out by the pool: kept");
    }

    #[test]
    fn scratch_buffers_are_reused_on_their_thread() {
        let at = {
            let mut s = Scratch::<f32>::new();
            let buf = s.resize(1000);
            buf.fill(2.0);
            buf.as_ptr()
        };
        let mut again = Scratch::<f32>::new();
        assert_eq!(again.resize(600).as_ptr(), at, "the spare, shorter");
        assert_eq!(again.as_slice().len(), 600);
        let stale = again.resize(1000)[999];
        if cfg!(debug_assertions) {
            assert!(stale.is_nan(), "debug builds poison reuse");
        } else {
            assert_eq!(stale, 2.0, "stale contents");
        }
        let mut other = Scratch::<f64>::new();
        assert_ne!(
            other.resize(10).as_ptr() as usize,
            at as usize,
            "another type"
        );
        assert_eq!(overwritten::<i64>(5), vec![0; 5], "small: fresh zeros");
    }
}
