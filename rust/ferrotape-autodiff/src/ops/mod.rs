//! Every differentiable op: one function each, its forward kernel call and its derivative side
//! by side. Derivatives are written with these same ops, so an outer tape records them.
//!
//! The pattern (the doc comment becomes the Python docstring of the op's binding row, so its
//! example is Python, fenced as `python` and run by `tests/test_native_docstrings.py`):
//! ```ignore
//! /// exp(x); d/dx = exp(x), saved as the output.
//! ///
//! /// For example:
//! ///
//! /// ```python
//! /// >>> import ferrotape as ft
//! /// >>> ft.exp([0.0, 1.0]).numpy().round(4)
//! /// array([1.    , 2.7183], dtype=float32)
//! /// ```
//! pub fn exp(x: &Tensor) -> Result<Tensor> {
//!     let y = unary(UnaryOp::Exp, x)?;
//!     record("Exp", &[x], &[&y], grad!(|g; y| mul(g, y)?));
//!     Ok(y)
//! }
//! ```
//! Ops without a derivative (comparisons, argmax, integer casts) simply do not record, and
//! their outputs are not differentiable; see each op's doc line.

/// Builds the backward closure of a one-input op: `grad!(|g; saved...| expr)` clones the
/// named tensors into the closure and returns `expr` as the input's gradient.
macro_rules! grad {
    (|$g:ident $(; $($saved:ident),*)?| $body:expr) => {
        || {
            $($(let $saved = $saved.clone();)*)?
            move |gs: &[Tensor], _needs: &[bool]| -> ferrotape_core::Result<Vec<Option<Tensor>>> {
                let $g = &gs[0];
                $($(let $saved = &$saved;)*)?
                Ok(vec![Some($body)])
            }
        }
    };
}

mod arith;
mod complex;
mod conv;
mod gather;
mod linalg;
mod math;
mod nn;
mod norm;
mod reduce;
mod shape;
mod special;

pub use arith::*;
pub use complex::{adjoint, angle, complex, conj, imag, real};
pub use conv::*;
pub use gather::*;
pub use linalg::*;
pub use math::*;
pub use nn::*;
pub use norm::*;
pub use reduce::*;
pub use shape::*;
pub use special::*;

use ferrotape_core::{Array, DType, Result, Shape};

use crate::tensor::Tensor;

/// A new (untracked) tensor of zeros.
pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let y = Tensor::new(Array::zeros("Zeros", dtype, shape)?);
    crate::trace::constant(&y);
    Ok(y)
}

/// Zeros of `t`'s shape and dtype; a trace records them as made from `t`'s shape at replay
/// (so that they follow other sizes, see `trace::sizes`).
pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    let (y, dtype) = (
        Tensor::new(Array::zeros("ZerosLike", t.dtype(), t.shape())?),
        t.dtype(),
    );
    crate::trace::node1_shaped_like("ZerosLike", &[], t.id(), &y, || {
        move |_: &[Tensor], shape: &[usize]| {
            Ok(Tensor::new(Array::zeros("ZerosLike", dtype, shape)?))
        }
    });
    Ok(y)
}

/// A new (untracked) tensor of ones.
pub fn ones(dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let y = Tensor::new(Array::full("Ones", dtype, shape, 1.0)?);
    crate::trace::constant(&y);
    Ok(y)
}

/// Ones of `t`'s shape and dtype, recorded in a trace as [`zeros_like`] is.
pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    let (y, dtype) = (
        Tensor::new(Array::full("OnesLike", t.dtype(), t.shape(), 1.0)?),
        t.dtype(),
    );
    crate::trace::node1_shaped_like("OnesLike", &[], t.id(), &y, || {
        move |_: &[Tensor], shape: &[usize]| {
            Ok(Tensor::new(Array::full("OnesLike", dtype, shape, 1.0)?))
        }
    });
    Ok(y)
}

/// A tensor shaped like `t` with ones at the given flat positions: a Jacobian row's seed.
pub(crate) fn one_hot_seed(t: &Tensor, hot: &[usize]) -> Result<Tensor> {
    let mut v = vec![0.0f64; t.len()];
    for &i in hot {
        v[i] = 1.0;
    }
    let a = ferrotape_core::kernels::cast(&Array::from_vec(v, t.shape())?, t.dtype())?;
    let y = Tensor::new(a);
    crate::trace::constant(&y);
    Ok(y)
}

/// Seeds for several Jacobian rows at once: shape `[rows.len()] + t.shape`, row `r` holding
/// ones at the flat positions `rows[r]` (a vectorized Jacobian's seed).
pub(crate) fn one_hot_seeds(t: &Tensor, rows: &[Vec<usize>]) -> Result<Tensor> {
    let n = t.len();
    let mut v = vec![0.0f64; rows.len() * n];
    for (r, hot) in rows.iter().enumerate() {
        for &i in hot {
            v[r * n + i] = 1.0;
        }
    }
    let shape: Shape = std::iter::once(rows.len())
        .chain(t.shape().iter().copied())
        .collect();
    let a = ferrotape_core::kernels::cast(&Array::from_vec(v, &shape)?, t.dtype())?;
    let y = Tensor::new(a);
    crate::trace::constant(&y);
    Ok(y)
}

/// Undoes numpy broadcasting: sums `g` down to `shape`. Every binary op's backward ends here.
/// Inside a vectorized Jacobian's sweep, `g`'s leading batch axes ([`batch_axes`](crate::tape::batch_axes)) stay in
/// front of `shape`.
pub fn unbroadcast(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let kept = crate::tape::batch_axes().min(g.rank().saturating_sub(shape.len()));
    let target = with_batch_axes_of(g, shape);
    if g.shape() == &target[..] {
        return Ok(g.clone());
    }
    // The axes numpy broadcasting added (between the batch axes and `shape`), then those
    // where `shape` has 1 and `g` does not.
    let lead = g.rank() - shape.len();
    let axes: Vec<i64> = (kept..g.rank())
        .filter(|&i| i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1))
        .map(|i| i as i64)
        .collect();
    // Summing only the added axes already leaves `target`; otherwise keep dims and reshape.
    let only_added = axes.len() == lead - kept;
    let summed = reduce_sum(g, Some(&axes), !only_added)?;
    reshape(&summed, &target)
}

/// `shape` behind `g`'s leading batch axes ([`batch_axes`](crate::tape::batch_axes)): the shape a gradient of a
/// `shape`-shaped tensor has in the sweep that produced `g` (just `shape` outside a vectorized
/// Jacobian).
pub fn with_batch_axes_of(g: &Tensor, shape: &[usize]) -> Shape {
    let kept = crate::tape::batch_axes().min(g.rank());
    g.shape()[..kept].iter().chain(shape).copied().collect()
}
