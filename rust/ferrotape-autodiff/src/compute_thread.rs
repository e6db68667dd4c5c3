//! Where a long sequence of kernels runs: a traced function's replay, a backward sweep.
//!
//! Called from a host thread outside the pool (any Python thread but the main one, which joins
//! the pool at import: `ferrotape_core::threads::join_pool_from_this_thread`), every parallel
//! kernel hands its whole work to the compute pool and puts the caller to sleep until the pool
//! is done; on a 2-core machine that handover costs more than many kernels of a training step
//! take. Running the sequence on a
//! pool thread instead pays the handover once, and each parallel kernel then splits its work
//! between that thread and the others, without putting the thread that runs the sequence to
//! sleep.
//!
//! The thread-local scopes a kernel sequence reads (the device placement, the autocast dtype)
//! go with it. What it records does not: the tape stack and a trace being recorded are the
//! caller's, so callers move only sequences that record nothing (see each caller), and nothing
//! that calls back into the host, whose lock (Python's GIL) a host thread waiting on the pool
//! may hold.

/// Whether a kernel sequence whose largest tensor has `largest` elements is worth moving. The
/// move costs about as much as a few small kernels, and only kernels large enough to run in
/// parallel gain from it; kernels of millions of elements run long enough that the per-kernel
/// handover is noise. Measured (2-core Zen 4): a traced MLP step (largest tensor 100K
/// elements) went from 0.70 to 0.60 ms on the pool; a traced CNN training step (1.6M) did not
/// change, and traced CNN inference at batch 256 (6.4M) went from 29 to 33 ms, for reasons not
/// found yet, so sequences with a tensor of a million elements or more stay where they are.
pub(crate) fn worth_moving(largest: usize) -> bool {
    (ferrotape_core::kernels::PARALLEL_THRESHOLD..LARGE_TENSOR).contains(&largest)
}

/// Elements from which a tensor's kernels are long enough that moving gains nothing.
const LARGE_TENSOR: usize = 1 << 20;

/// Runs `f` on a thread of the compute pool with this thread's placement and autocast scopes,
/// and returns its result.
pub(crate) fn on_compute_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let autocast = crate::variable::autocast_dtype();
    ferrotape_core::threads::on_compute_thread(|| {
        let outer = crate::variable::set_autocast_dtype(autocast);
        let out = f();
        crate::variable::set_autocast_dtype(outer);
        out
    })
}
