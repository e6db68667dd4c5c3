//! CPU kernels. Each takes `Array`s (any layout) and returns a new contiguous `Array`.
//! Contiguous inputs take a slice fast path; other layouts go through `for_each_offset`.
//! Large element-wise work is split across rayon's pool above [`PARALLEL_THRESHOLD`].
//! `unary`, `binary`, `matmul`, `reduce`, `relu_grad`, `compare`, `select`, `cast`, the
//! `batch_norm_*` kernels and `apply_optimizer_step` first offer the op to a registered device
//! backend (see [`crate::device`]); every other kernel reads device inputs through their host
//! copy.

mod cast;
mod complex;
mod conv;
#[cfg(target_arch = "x86_64")]
mod direct;
mod elementwise;
mod float;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod linalg;
mod matmul;
mod norm;
mod optim;
mod pool;
mod reduce;
mod shape;
pub mod special;
mod winograd;

pub use cast::cast;
pub use complex::{complex, complex_part, ComplexPart};
pub use conv::{
    conv2d, conv2d_backprop_filter, conv2d_backprop_filter_by, conv2d_backprop_input,
    conv2d_backprop_input_by, conv2d_by, conv_algorithm, Conv2dParams, ConvAlgorithm, Padding,
    Window2d,
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
pub use optim::{
    apply_optimizer_step, decay_weights, update_moving_average, OptimizerStep, Stored,
};
pub use pool::{avg_pool, avg_pool_grad, max_pool, max_pool_grad, max_pool_grad_grad};
pub use reduce::{arg_reduce, axes_mask, reduce, ArgReduce, ReduceOp};
pub use shape::{
    concat, count, eye, gather_nd, index_values, linspace, one_hot, pad_index, range, range_int,
    scatter_nd, slice_scatter, take, take_add, tile, PadMode,
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

/// Below this many elements a kernel stays on the calling thread: splitting costs more than it
/// saves on a 2-core machine (see DESIGN.md's pitfalls).
pub const PARALLEL_THRESHOLD: usize = 32 * 1024;
