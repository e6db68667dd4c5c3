//! Reductions. Each backward reshapes the output gradient to the kept-dims shape and
//! broadcasts it back over the reduced axes.

use ferrotape_core::kernels::{self, axes_mask, ArgReduce, CompareOp, ReduceOp};
use ferrotape_core::{DType, Result, Shape};

use super::{
    add, broadcast_following, cast, compare, div, exp, log, mul, reshape, reshape_following,
    stop_gradient, sub, where_, with_batch_axes_of, zeros_like,
};
use crate::tape::{record, record_vectorizable};
use crate::tensor::Tensor;
use crate::trace;

/// The indices of the reduced axes of a mask.
fn reduced_axes(mask: &[bool]) -> Vec<i64> {
    mask.iter()
        .enumerate()
        .filter(|(_, &r)| r)
        .map(|(i, _)| i as i64)
        .collect()
}

/// The input shape with reduced axes set to 1.
fn kept_shape(shape: &[usize], mask: &[bool]) -> Shape {
    shape
        .iter()
        .zip(mask)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect()
}

fn reduce_kernel(
    op: ReduceOp,
    x: &Tensor,
    axes: Option<&[i64]>,
    keepdims: bool,
) -> Result<(Tensor, Vec<bool>)> {
    let mask = axes_mask(op.name(), x.rank(), axes)?;
    let y = Tensor::new(kernels::reduce(op, x.value(), &mask, keepdims)?);
    trace::node1(op.name(), &[x], &y, || {
        let mask = mask.clone();
        move |t: &[Tensor]| {
            Ok(Tensor::new(kernels::reduce(
                op,
                t[0].value(),
                &mask,
                keepdims,
            )?))
        }
    });
    Ok((y, mask))
}

/// Σ x over `axes` (all when `None`); d/dx = 1 broadcast over the reduced axes.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> x = ft.constant([[1, 2], [3, 4]])
/// >>> int(ft.reduce_sum(x))
/// 10
/// >>> ft.reduce_sum(x, axis=0).numpy()
/// array([4, 6], dtype=int32)
/// ```
pub fn reduce_sum(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::reduce(false, x, axes, keepdims);
    }
    let (y, mask) = reduce_kernel(ReduceOp::Sum, x, axes, keepdims)?;
    record_vectorizable("Sum", &[x], &[&y], || {
        let (full, like): (Shape, _) = (x.shape().into(), x.id());
        move |gs: &[Tensor], _: &[bool]| {
            let kept = reshape_following(&gs[0], like, &full, kept_shape, &mask)?;
            Ok(vec![Some(broadcast_following(&kept, like, &full)?)])
        }
    });
    Ok(y)
}

/// The mean over `axes` (integer division for integer dtypes, as TensorFlow); d/dx = 1/n.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.reduce_mean([[1.0, 2.0], [3.0, 5.0]], axis=1).numpy()
/// array([1.5, 4. ], dtype=float32)
/// ```
pub fn reduce_mean(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::reduce(true, x, axes, keepdims);
    }
    let mask = axes_mask("Mean", x.rank(), axes)?;
    let count: usize = x
        .shape()
        .iter()
        .zip(&mask)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    if x.dtype().is_narrow() && x.dtype() != DType::U64 {
        // TensorFlow sums the 8- to 32-bit integers without wrapping before it divides:
        // the mean of uint8 [255, 255] is 255 (uint64's sum wraps, as int64's does).
        let wide = reduce_mean(&cast(x, x.dtype().wide())?, axes, keepdims)?;
        return cast(&wide, x.dtype());
    }
    let sum = reduce_sum(x, axes, keepdims)?;
    div(&sum, &count_of(x, &mask, count, sum.dtype()))
}

/// The number of elements of `x` on the axes of `mask` (`count`, a scalar of `dtype`): in a
/// trace, recounted from `x`'s shape at replay, so that a mean follows other sizes.
fn count_of(x: &Tensor, mask: &[bool], count: usize, dtype: DType) -> Tensor {
    let c = Tensor::new(ferrotape_core::Array::scalar_of(dtype, count as f64));
    trace::node1_shaped_like("CountOf", &[], x.id(), &c, || {
        let mask = mask.to_vec();
        move |_: &[Tensor], shape: &[usize]| {
            let n: usize = shape
                .iter()
                .zip(&mask)
                .filter(|(_, &r)| r)
                .map(|(&d, _)| d)
                .product();
            Ok(Tensor::new(ferrotape_core::Array::scalar_of(
                dtype, n as f64,
            )))
        }
    });
    c
}

fn extremum(op: ReduceOp, x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    let (y, mask) = reduce_kernel(op, x, axes, keepdims)?;
    record_vectorizable(op.name(), &[x], &[&y], || {
        let (x, y, kept) = (x.clone(), y.clone(), kept_shape(x.shape(), &mask));
        let axes = reduced_axes(&mask);
        move |gs: &[Tensor], _: &[bool]| {
            // Ties share the gradient equally, as in TensorFlow.
            let hit = cast(
                &compare(CompareOp::Equal, &x, &reshape(&y, &kept)?)?,
                x.dtype(),
            )?;
            let count = super::reduce_sum(&hit, Some(&axes), true)?;
            let g = reshape(&gs[0], &with_batch_axes_of(&gs[0], &kept))?;
            Ok(vec![Some(div(&mul(&hit, &g)?, &count)?)])
        }
    });
    Ok(y)
}

/// The maximum over `axes`; the gradient is split equally among tied maxima.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.reduce_max([[1, 7], [3, 4]], axis=0, keepdims=True).numpy()
/// array([[3, 7]], dtype=int32)
/// ```
pub fn reduce_max(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    extremum(ReduceOp::Max, x, axes, keepdims)
}

/// The minimum over `axes`; the gradient is split equally among tied minima.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.reduce_min([[1, 7], [3, 4]], axis=-1).numpy()
/// array([1, 3], dtype=int32)
/// ```
pub fn reduce_min(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    extremum(ReduceOp::Min, x, axes, keepdims)
}

/// Π x over `axes`; d/dx_i = Π_{j≠i} x_j. That is y/x_i when no factor is zero; with one
/// zero, only the zero factor gets the product of the others; with two or more, all get 0.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.reduce_prod([[1.0, 2.0], [3.0, 4.0]], axis=1).numpy()
/// array([ 2., 12.], dtype=float32)
/// ```
pub fn reduce_prod(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::reduce_prod(x, axes, keepdims);
    }
    let (y, mask) = reduce_kernel(ReduceOp::Prod, x, axes, keepdims)?;
    record("Prod", &[x], &[&y], || {
        let (x, kept) = (x.clone(), kept_shape(x.shape(), &mask));
        let axes = reduced_axes(&mask);
        move |gs: &[Tensor], _: &[bool]| {
            let zero = x.scalar_like(0.0);
            let is_zero = compare(CompareOp::Equal, &x, &zero)?;
            let nonzero = where_(&is_zero, &super::ones_like(&x)?, &x)?;
            let prod_nonzero = reduce_prod(&nonzero, Some(&axes), true)?;
            let zeros = super::reduce_sum(&cast(&is_zero, x.dtype())?, Some(&axes), true)?;
            let none_zero = compare(CompareOp::Equal, &zeros, &zero)?;
            let one_zero = compare(CompareOp::Equal, &zeros, &x.scalar_like(1.0))?;
            let lone_zero = super::logical(kernels::LogicalOp::And, &one_zero, &is_zero)?;
            let others = where_(
                &none_zero,
                &div(&prod_nonzero, &nonzero)?,
                &where_(&lone_zero, &prod_nonzero, &zeros_like(&x)?)?,
            )?;
            Ok(vec![Some(mul(&reshape(&gs[0], &kept)?, &others)?)])
        }
    });
    Ok(y)
}

/// log Σ exp(x), computed as m + log Σ exp(x - m) with m the (finite) maximum held constant.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> round(float(ft.reduce_logsumexp([0.0, 0.0])), 4)
/// 0.6931
/// ```
pub fn reduce_logsumexp(x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    let raw_max = reduce_max(x, axes, true)?;
    let finite = compare(
        CompareOp::Equal,
        &sub(&raw_max, &raw_max)?,
        &raw_max.scalar_like(0.0),
    )?;
    let m = stop_gradient(&where_(&finite, &raw_max, &zeros_like(&raw_max)?)?);
    let sum = super::reduce_sum(&exp(&sub(x, &m)?)?, axes, keepdims)?;
    let m = if keepdims {
        m
    } else {
        reshape(&m, sum.shape())?
    };
    add(&log(&sum)?, &m)
}

/// Logical or / and over `axes` of a bool tensor; no gradient.
pub fn reduce_bool(any: bool, x: &Tensor, axes: Option<&[i64]>, keepdims: bool) -> Result<Tensor> {
    let op = if any { ReduceOp::Any } else { ReduceOp::All };
    Ok(reduce_kernel(op, x, axes, keepdims)?.0)
}

/// Index of the max (or min) along `axis`, as `dtype` (int64 by default); no gradient.
pub fn arg_reduce(max: bool, x: &Tensor, axis: i64, dtype: DType) -> Result<Tensor> {
    let op = if max { "ArgMax" } else { "ArgMin" };
    let mask = axes_mask(op, x.rank(), Some(&[axis]))?;
    let axis = mask.iter().position(|&r| r).unwrap_or(0);
    let which = if max {
        ArgReduce::ArgMax
    } else {
        ArgReduce::ArgMin
    };
    let idx = kernels::arg_reduce(which, x.value(), axis)?;
    let y = Tensor::new(kernels::cast(&idx, dtype)?);
    trace::node1(op, &[x], &y, || {
        move |t: &[Tensor]| arg_reduce(max, &t[0], axis as i64, dtype)
    });
    Ok(y)
}
