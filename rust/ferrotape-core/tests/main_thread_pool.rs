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
    // reads the environment meanwhile).
    std::env::set_var("RAYON_NUM_THREADS", "3");
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
}
