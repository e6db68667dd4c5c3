//! CPU kernels. Each takes `Array`s (any layout) and returns a new contiguous `Array`.
//! Contiguous inputs take a slice fast path; other layouts go through `for_each_offset`.
//! Large element-wise work is split across rayon's pool above [`PARALLEL_THRESHOLD`].
//! `unary`, `binary`, `matmul`, `reduce`, `relu_grad`, `compare`, `select`, `cast`, the
//! `batch_norm_*` kernels and `apply_optimizer_step` first offer the op to a registered device
//! backend (see [`crate::device`]); every other kernel reads device inputs through their host
//! copy.

use std::sync::atomic::{AtomicBool, Ordering};

mod cast;
mod complex;
mod conv;
mod elementwise;
mod float;
mod linalg;
mod matmul;
mod norm;
mod optim;
mod reduce;
mod shape;
pub mod special;
mod winograd;

pub use cast::cast;
pub use complex::{complex, complex_part, ComplexPart};
pub use conv::{
    avg_pool, avg_pool_grad, conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_by,
    conv_algorithm, max_pool, max_pool_grad, max_pool_grad_grad, Conv2dParams, ConvAlgorithm,
    Padding, Window2d,
};
pub use elementwise::{
    betainc, binary, compare, logical, logical_not, relu_grad, select, unary, update_in_place,
    BinaryOp, CompareOp, LogicalOp, UnaryOp,
};
pub use float::FloatElem;
pub use linalg::{det, inv, solve};
pub use matmul::matmul;
pub use norm::{
    batch_norm_apply, batch_norm_backward, batch_norm_statistics, BatchNormGrads, FeatureLayout,
};
pub use optim::{apply_optimizer_step, OptimizerStep, Stored};
pub use reduce::{arg_reduce, axes_mask, reduce, ArgReduce, ReduceOp};
pub use shape::{
    concat, count, eye, gather_nd, index_values, linspace, one_hot, pad_index, range, scatter_nd,
    slice_scatter, take, take_add, tile, PadMode,
};
pub use winograd::WinogradTile;

/// `f` applied to `a` in its wide dtype (see [`crate::DType::wide`]), the result narrowed back to
/// `a`'s dtype with wrapping: how arithmetic reaches the narrow integer dtypes.
pub(crate) fn via_wide(
    a: &crate::Array,
    f: impl FnOnce(&crate::Array) -> crate::Result<crate::Array>,
) -> crate::Result<crate::Array> {
    cast(&f(&cast(a, a.dtype().wide())?)?, a.dtype())
}

/// uint64's values as int64 in the same order: its bits with the top bit flipped (adding 2**63
/// with wrapping flips it). int64's comparisons, extremes and argmax then order uint64 without
/// kernels of their own; [`from_ordered_u64`] undoes it.
pub(crate) fn ordered_u64(a: &crate::Array) -> crate::Result<crate::Array> {
    let bits = cast(a, crate::DType::I64)?;
    binary(BinaryOp::Add, &bits, &crate::Array::scalar(i64::MIN))
}

/// The inverse of [`ordered_u64`].
pub(crate) fn from_ordered_u64(a: &crate::Array) -> crate::Result<crate::Array> {
    cast(
        &binary(BinaryOp::Add, a, &crate::Array::scalar(i64::MIN))?,
        crate::DType::U64,
    )
}

/// Runs `f` on a thread of the compute pool (rayon's), carrying this thread's placement scope
/// there, and waits for it; in place when already on the pool. A sequence of kernels run this
/// way splits each parallel kernel between the thread running `f` and the pool's other
/// threads, which are kept awake until `f` returns: each waits for work by polling the pool
/// rather than sleeping, as OpenMP's active wait does. Called from outside the pool, every
/// parallel kernel would instead hand all its work to sleeping threads and put the caller to
/// sleep until they are done; on a 2-core machine those wake-ups (tens of microseconds each)
/// cost more than most kernels of a training step. (`ferrotape_autodiff`'s `compute_thread`
/// says who calls it.)
pub fn on_compute_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    let placement = crate::device::placement();
    let stop = AtomicBool::new(false);
    rayon::scope(|scope| {
        let home = rayon::current_thread_index();
        for _ in 1..rayon::current_num_threads() {
            let stop = &stop;
            scope.spawn(move |_| keep_awake(stop, home));
        }
        // Set even if `f` unwinds: the scope waits for the polling threads to return.
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let _stop = Stop(&stop);
        let outer = crate::device::set_placement(placement);
        let out = f();
        crate::device::set_placement(outer);
        out
    })
}

/// Runs the pool's pending work until `stop`, polling instead of sleeping. On the thread that
/// runs the kernel sequence itself (it can pick this job up while it waits inside a kernel),
/// returns at once: polling there would wait for a `stop` only that thread can give.
fn keep_awake(stop: &AtomicBool, home: Option<usize>) {
    if rayon::current_thread_index() == home {
        return;
    }
    while !stop.load(Ordering::Acquire) {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::hint::spin_loop();
        }
    }
}

/// Below this many elements a kernel stays on the calling thread: splitting costs more than it
/// saves on a 2-core machine (see DESIGN.md's pitfalls).
pub const PARALLEL_THRESHOLD: usize = 32 * 1024;

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
        // Parallel work inside is shared with the polling threads, and they let go at the end.
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
