//! The compute pool with the calling thread as its first thread (`threads::
//! join_pool_from_this_thread`, as the Python module does at import on the main thread). In
//! a test binary of its own: the pool is global, built once per process.

use ferrotape_core::{kernels, threads, Array};
use rayon::prelude::*;

fn sum_of(n: u64) -> u64 {
    let n = n as usize;
    (0..n)
        .into_par_iter()
        .with_min_len(1000)
        .map(|i| i as u64)
        .sum()
}

#[test]
fn the_joining_thread_works_in_the_pool_and_other_threads_still_get_it() {
    // Three threads in all, whatever the machine (the only test of this binary: nothing else
    // reads the environment meanwhile); between ops the other two poll until the next op
    // starts, for as long as the test needs.
    std::env::set_var("RAYON_NUM_THREADS", "3");
    std::env::set_var("FERROTAPE_POOL_SPIN_US", "60000000");
    assert!(threads::join_pool_from_this_thread());
    assert_eq!(rayon::current_num_threads(), 3);
    // Built once: a second call changes nothing.
    assert!(!threads::join_pool_from_this_thread());
    assert_eq!(rayon::current_thread_index(), Some(0));
    assert_eq!(sum_of(1_000_000), 999_999 * 1_000_000 / 2);
    // A kernel from the joined thread, and kernels from other threads while it is idle and
    // while it computes too.
    let x = Array::from_vec((0..300_000).map(|i| (i % 7) as f32).collect(), &[300_000]).unwrap();
    let doubled = kernels::binary(kernels::BinaryOp::Add, &x, &x).unwrap();
    assert_eq!(doubled.to_vec::<f32>()[13], 12.0);
    let others: Vec<_> = (0..3)
        .map(|k| {
            std::thread::spawn(move || {
                assert_eq!(rayon::current_thread_index(), None);
                let sums: Vec<u64> = (0..20).map(|_| sum_of(200_000 + k)).collect();
                assert!(sums.iter().all(|&s| s == sums[0]));
                sums[0]
            })
        })
        .collect();
    for _ in 0..20 {
        assert_eq!(sum_of(300_000), 299_999 * 300_000 / 2);
    }
    for (k, t) in others.into_iter().enumerate() {
        let n = 200_000 + k as u64;
        assert_eq!(t.join().unwrap(), (n - 1) * n / 2);
    }
    // A sequence moved to the pool from here runs in place.
    assert_eq!(
        threads::on_compute_thread(rayon::current_thread_index),
        Some(0)
    );

    // Between ops, the two other threads poll for the next op instead of sleeping...
    assert_eq!(threads::threads_polling(), 0);
    threads::op_finished();
    assert_eq!(threads::threads_polling(), 2);
    // ... a second end of op adds no more pollers...
    threads::op_finished();
    assert_eq!(threads::threads_polling(), 2);
    // ... a parallel kernel that did not say it starts is still right (the joined thread
    // does the work; the pollers take none)...
    assert_eq!(sum_of(300_000), 299_999 * 300_000 / 2);
    // ... and as an op starts they go back to the pool and take their share.
    threads::op_starting();
    wait_until("the pollers return", || threads::threads_polling() == 0);
    let x = Array::from_vec((0..300_000).map(|i| (i % 5) as f32).collect(), &[300_000]).unwrap();
    let doubled = kernels::binary(kernels::BinaryOp::Add, &x, &x).unwrap();
    assert_eq!(doubled.to_vec::<f32>()[13], 6.0);
    // An op too small to have split its work leaves them asleep; a larger one does not.
    threads::around_op(false, || ());
    assert_eq!(threads::threads_polling(), 0);
    threads::around_op(true, || ());
    assert_eq!(threads::threads_polling(), 2);
    threads::op_starting();
    wait_until("the pollers return", || threads::threads_polling() == 0);
    // Another thread's ops, while the pool's threads poll: they announce themselves too.
    threads::op_finished();
    let other = std::thread::spawn(|| {
        threads::op_starting();
        sum_of(400_000)
    });
    assert_eq!(other.join().unwrap(), 399_999 * 400_000 / 2);
    wait_until("the pollers return", || threads::threads_polling() == 0);
}

/// Waits up to ten seconds for `done`, failing the test after that.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(
            start.elapsed().as_secs() < 10,
            "timed out waiting until {what}"
        );
        std::thread::yield_now();
    }
}
