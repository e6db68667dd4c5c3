//! The compute pool's threads (rayon's global pool): running a sequence of kernels on one of
//! them.

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
    threads >= 2
        && rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .use_current_thread()
            .build_global()
            .is_ok()
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
