//! The compute pool's threads (rayon's global pool): running a sequence of kernels on one of
//! them.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Runs `f` on a thread of the compute pool (rayon's), carrying this thread's placement scope
/// there, and waits for it; in place when already on the pool. A sequence of kernels run this
/// way splits each parallel kernel between the thread running `f` and the pool's other
/// threads. Called from outside the pool, every parallel kernel would instead hand all its
/// work to the pool and put the caller to sleep until it is done; on a 2-core machine that
/// handover costs more than most kernels of a training step. (`ferrotape_autodiff`'s
/// `compute_thread` says who calls it.)
///
/// Tried and left out: keeping the other threads polling for work while `f` runs (OpenMP's
/// active wait) took a traced MLP step from 0.60 to 0.56 ms, but polling needs
/// `rayon::yield_now`, and its mere presence in the library made rayon's own idle loop stop
/// inlining its search for work, which slowed eager CNN inference from 29 to 33 ms.
pub fn on_compute_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    let placement = crate::device::placement();
    rayon::scope(|_| {
        let outer = crate::device::set_placement(placement);
        let out = f();
        crate::device::set_placement(outer);
        out
    })
}

/// Makes the calling thread the first thread of the compute pool, which is built now with
/// one thread fewer of its own (`RAYON_NUM_THREADS`, else one per core, in all). Returns
/// false, changing nothing, when the pool already exists, or when it would have no thread of
/// its own (one thread in all): other threads' kernels would then wait for this one to come
/// back to the pool, which it may never do.
///
/// Called at import on Python's main thread, which runs most programs' ops: a parallel kernel
/// called there then shares its work with the other threads and takes its own part, instead
/// of handing all of it to the pool and sleeping until the pool wakes it again. Those two
/// hand-overs cost about 15 µs per kernel on a 2-core machine (a 100K-element product took
/// 24 µs from Python against 6 µs inside a traced step), which added up to a millisecond of
/// the tutorial CNN's eager training step. Ops of other threads still go to the pool, which
/// then has one thread fewer of its own for them.
pub fn join_pool_from_this_thread() -> bool {
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let joined = threads >= 2
        && rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .use_current_thread()
            .build_global()
            .is_ok();
    if joined {
        if let Some(index) = rayon::current_thread_index() {
            HOST_INDEX.store(index, Ordering::Relaxed);
        }
    }
    joined
}

/// Between ops: the pool's other threads poll for the next op for a while before they sleep.
///
/// An idle rayon thread looks for work for a few dozen rounds and then sleeps on a futex;
/// waking it takes a system call and, on a virtual machine, an interrupt to a halted virtual
/// CPU. An eager program runs Python between its ops, often longer than those rounds, so each
/// parallel kernel began by waking the others and ran alone until they came: a 400K-element
/// relu took 18 µs right after another op and 35 µs after 100 µs of Python (2-core Zen 4 VM).
/// So as an op from the host language ends ([`op_finished`]; the binding wraps each op in
/// [`around_op`]) the pool's other threads are each given a job that polls ([`poll_until_next_op`]) until the next op starts ([`op_starting`]),
/// then returns, leaving the thread awake in rayon's own loop to take its share; after
/// `FERROTAPE_POOL_SPIN_US` microseconds (300 by default, 0 to turn it off) without an op it
/// returns too and the thread may sleep. OpenMP runtimes do the same (their "active wait").
/// Measured in alternating runs: the seed MLP's eager step 0.342–0.349 → 0.326–0.334 ms, CNN
/// inference at batch 256 9.45 → 9.1–9.4 ms.
///
/// The polling job reads one counter and never takes work from the pool (rayon's
/// `yield_now` would, but its mere presence once slowed rayon's idle loop: see
/// [`on_compute_thread`]). A parallel kernel that starts without [`op_starting`] is still
/// correct, only run by its own thread while the others poll.
fn spin_after_op() -> std::time::Duration {
    static MICROS: OnceLock<u64> = OnceLock::new();
    let micros = *MICROS.get_or_init(|| {
        std::env::var("FERROTAPE_POOL_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_SPIN_US)
    });
    std::time::Duration::from_micros(micros)
}

/// Longer than the Python between most eager ops of a training step (10–100 µs), short enough
/// that a program doing other work between ops loses little of the other cores.
const DEFAULT_SPIN_US: u64 = 300;

/// Ops started by the host threads: a polling thread returns when it changes.
static OPS_STARTED: AtomicU64 = AtomicU64::new(0);
/// Polling jobs handed to the pool and not finished yet.
static POLLING: AtomicUsize = AtomicUsize::new(0);
/// The pool index of the thread that joined it with [`join_pool_from_this_thread`], which
/// runs the ops and must never poll.
static HOST_INDEX: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Runs `f`, an op called from the host language, between [`op_starting`] and, when the op
/// may have run parallel kernels (`parallel`), [`op_finished`]. After a small op the pool's
/// threads are left as they are: handing out polling jobs costs a microsecond or two, which
/// made the tiny traced functions of the Jacobian workloads (W6, 20–30 µs a call) 3–6% slower.
pub fn around_op<T>(parallel: bool, f: impl FnOnce() -> T) -> T {
    op_starting();
    let out = f();
    if parallel {
        op_finished();
    }
    out
}

/// Called as an op from the host language starts: polling threads go back to the pool.
pub fn op_starting() {
    if POLLING.load(Ordering::SeqCst) > 0 {
        OPS_STARTED.fetch_add(1, Ordering::SeqCst);
    }
}

/// Called as an op from the host language ends: each of the pool's other threads polls until
/// the next op starts (see [`spin_after_op`]).
pub fn op_finished() {
    let spin = spin_after_op();
    let threads = rayon::current_num_threads();
    if spin.is_zero() || threads < 2 {
        return;
    }
    let host = HOST_INDEX.load(Ordering::Relaxed);
    let others = threads - usize::from(host != usize::MAX);
    let epoch = OPS_STARTED.load(Ordering::SeqCst);
    while POLLING.load(Ordering::SeqCst) < others {
        POLLING.fetch_add(1, Ordering::SeqCst);
        rayon::spawn(move || {
            // Spawned from the host, the job waits in the host's queue, where the host itself
            // may take it while it waits on a kernel's other half: it must not poll there.
            if rayon::current_thread_index() != Some(host) {
                poll_until_next_op(epoch, spin);
            }
            POLLING.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

/// Polling jobs in the pool now (for tests and diagnostics).
pub fn threads_polling() -> usize {
    POLLING.load(Ordering::SeqCst)
}

/// Returns when an op has started since `epoch` was read, or after `spin`.
fn poll_until_next_op(epoch: u64, spin: std::time::Duration) {
    let start = std::time::Instant::now();
    loop {
        // The clock is read once per batch of checks: a check is a load from cache.
        for _ in 0..64 {
            if OPS_STARTED.load(Ordering::Relaxed) != epoch {
                return;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= spin {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_compute_thread_runs_on_the_pool_with_the_callers_placement() {
        let device = crate::device::Device::Gpu(3);
        let outer = crate::device::set_placement(Some(device));
        let (index, placement) =
            on_compute_thread(|| (rayon::current_thread_index(), crate::device::placement()));
        assert!(index.is_some(), "ran on a pool thread");
        assert_eq!(placement, Some(device));
        // Parallel work inside is shared with the pool's other threads.
        let total: u64 = on_compute_thread(|| {
            use rayon::prelude::*;
            (0..1_000_000usize)
                .into_par_iter()
                .with_min_len(1000)
                .map(|i| i as u64)
                .sum()
        });
        assert_eq!(total, 999_999 * 1_000_000 / 2);
        // Already on the pool: runs in place.
        let nested = rayon::scope(|_| on_compute_thread(rayon::current_thread_index));
        assert!(nested.is_some());
        crate::device::set_placement(outer);
    }
}
