//! Reductions along any set of axes, without materialising a transpose: each input element is
//! folded into the output slot its index maps to. Reducing a contiguous suffix of axes (the
//! common `reduce_sum(loss)` and last-axis cases) takes a chunked fast path.

use half::{bf16, f16};
use num_traits::{Bounded, Float, PrimInt, WrappingAdd, WrappingMul};

use rayon::prelude::*;

use super::cast;
use crate::{
    for_each_offset, num_elements, row_major_strides, simd, Array, Buffer, DType, Element, Error,
    Result, Shape, Strides,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    Any,
    All,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "Sum",
            ReduceOp::Prod => "Prod",
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
            ReduceOp::Any => "Any",
            ReduceOp::All => "All",
        }
    }
}

/// Output shape and, per input axis, the stride of the output slot (0 on reduced axes).
fn plan(shape: &[usize], axes: &[bool], keepdims: bool) -> (Shape, Strides) {
    let kept: Shape = shape
        .iter()
        .zip(axes)
        .map(|(&d, &r)| if r { 1 } else { d })
        .collect();
    let mut strides = row_major_strides(&kept);
    for (s, &r) in strides.iter_mut().zip(axes) {
        if r {
            *s = 0;
        }
    }
    let out = if keepdims {
        kept
    } else {
        shape
            .iter()
            .zip(axes)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d)
            .collect()
    };
    (out, strides)
}

/// Folds `f` over the reduced axes, element after element from `init`.
fn fold<T: Element>(
    a: &Array,
    data: &[T],
    axes: &[bool],
    keepdims: bool,
    init: T,
    f: impl Fn(T, T) -> T,
) -> (Vec<T>, Shape) {
    let whole = |c: &[T]| c.iter().fold(init, |acc, &x| f(acc, x));
    let columns = |s: &[T], n_out: usize| {
        let mut out = vec![init; n_out];
        for row in s.chunks(n_out) {
            for (o, &x) in out.iter_mut().zip(row) {
                *o = f(*o, x);
            }
        }
        out
    };
    fold_with(a, data, axes, keepdims, init, &f, whole, columns)
}

/// [`fold`], with `whole` reducing each contiguous run of reduced elements (the common
/// suffix case) and `columns(rows, n)` each column of `n`-element rows (the prefix case) in
/// whatever order they like: a float sum keeps many partial sums.
#[allow(clippy::too_many_arguments)]
fn fold_with<T: Element>(
    a: &Array,
    data: &[T],
    axes: &[bool],
    keepdims: bool,
    init: T,
    f: impl Fn(T, T) -> T,
    whole: impl Fn(&[T]) -> T,
    columns: impl Fn(&[T], usize) -> Vec<T>,
) -> (Vec<T>, Shape) {
    let (out_shape, out_strides) = plan(a.shape(), axes, keepdims);
    let n_out = num_elements(&out_shape);
    let rank = a.rank();
    // Fast path: contiguous input reduced over a suffix of its axes.
    let first_reduced = axes.iter().position(|&r| r).unwrap_or(rank);
    if axes[first_reduced..].iter().all(|&r| r) {
        if let Some(s) = a.contiguous_slice::<T>() {
            let inner = num_elements(&a.shape()[first_reduced..]);
            let out = if inner == 0 {
                vec![init; n_out]
            } else {
                s.chunks(inner).map(&whole).collect()
            };
            return (out, out_shape);
        }
    }
    // Fast path: contiguous input reduced over a prefix of its axes (a bias gradient summed
    // over the batch and image axes): whole rows folded into the output.
    if let Some(last_reduced) = axes.iter().rposition(|&r| r) {
        if last_reduced + 1 < rank && axes[..=last_reduced].iter().all(|&r| r) {
            if let Some(s) = a.contiguous_slice::<T>() {
                let out = if n_out > 0 {
                    columns(s, n_out)
                } else {
                    Vec::new()
                };
                return (out, out_shape);
            }
        }
    }
    let mut out = vec![init; n_out];
    for_each_offset(
        a.shape(),
        [a.strides(), &out_strides],
        [a.offset(), 0],
        |[i, o]| {
            out[o] = f(out[o], data[i]);
        },
    );
    (out, out_shape)
}

/// Elements summed per task when one long run is split across threads: fixed, so that the
/// rounding of a sum never depends on the thread count.
const SUM_BLOCK: usize = 32 * 1024;

/// The sum of `c` in [`SUM_BLOCK`]s, in parallel when there are several, added in order.
fn sum_float<T: Float + Element>(c: &[T]) -> T {
    let block_sum = |block: &[T]| {
        simd::dispatch(
            #[inline(always)]
            || {
                block
                    .chunks(SUM_RUN)
                    .fold(T::zero(), |acc, run| acc + sum_lanes(run))
            },
        )
    };
    if c.len() <= SUM_BLOCK {
        return block_sum(c);
    }
    let partial: Vec<T> = c.par_chunks(SUM_BLOCK).map(block_sum).collect();
    partial.into_iter().fold(T::zero(), |acc, x| acc + x)
}

/// The sum of each column of `s`'s `cols`-element rows: blocks of about [`SUM_BLOCK`]
/// elements of whole rows (fixed, so that the rounding never depends on the thread count), in
/// parallel when there are several, their sums added in order. One running sum per column
/// made every row's add wait for the previous row's, on one thread, and added its rounding up
/// over the whole batch: a bias gradient over 64 28×28 images of 16 channels took as long as
/// the pass that made its input.
fn column_sums<T: Float + Element>(s: &[T], cols: usize) -> Vec<T> {
    let block_rows = (SUM_BLOCK / cols).max(1);
    let block_sums = |block: &[T]| {
        simd::dispatch(
            #[inline(always)]
            || column_block_sums(block, cols),
        )
    };
    if s.len() <= block_rows * cols {
        return block_sums(s);
    }
    let partial: Vec<Vec<T>> = s.par_chunks(block_rows * cols).map(block_sums).collect();
    let mut out = vec![T::zero(); cols];
    for p in partial {
        for (o, x) in out.iter_mut().zip(p) {
            *o = *o + x;
        }
    }
    out
}

/// Rows [`column_block_sums`] adds into separate partial sums per column: consecutive rows'
/// adds then do not wait for each other.
const COLUMN_LANES: usize = 4;

/// [`column_sums`] of one block: row `i` goes into partial sum `i % COLUMN_LANES` of its
/// column, and the partial sums are combined pairwise at the end.
#[inline(always)]
fn column_block_sums<T: Float>(block: &[T], cols: usize) -> Vec<T> {
    let rows = block.len() / cols;
    let lanes = COLUMN_LANES.min(rows).max(1);
    let mut partial = vec![T::zero(); lanes * cols];
    let mut groups = block.chunks_exact(lanes * cols);
    for group in &mut groups {
        for (p, &x) in partial.iter_mut().zip(group) {
            *p = *p + x;
        }
    }
    for (p, &x) in partial.iter_mut().zip(groups.remainder()) {
        *p = *p + x;
    }
    let mut width = lanes;
    while width > 1 {
        let half = width.div_ceil(2);
        let (low, high) = partial.split_at_mut(half * cols);
        for (p, &q) in low.iter_mut().zip(&high[..(width - half) * cols]) {
            *p = *p + q;
        }
        width = half;
    }
    partial.truncate(cols);
    partial
}

/// Elements per [`sum_lanes`] call: each lane adds at most 128 of them before the lanes are
/// combined, which bounds the rounding of a long sum.
const SUM_RUN: usize = 4096;

/// The sum of `c` with [`SUM_LANES`] running partial sums, combined pairwise at the end. A
/// single running sum makes every add wait for the one before it (and cannot use vector
/// registers); partial sums also round less than one long chain, as TensorFlow's tree-shaped
/// reductions do. The result depends only on `c`.
#[inline(always)]
fn sum_lanes<T: Float>(c: &[T]) -> T {
    let mut acc = [T::zero(); SUM_LANES];
    let mut runs = c.chunks_exact(SUM_LANES);
    for run in &mut runs {
        for (a, &x) in acc.iter_mut().zip(run) {
            *a = *a + x;
        }
    }
    for (a, &x) in acc.iter_mut().zip(runs.remainder()) {
        *a = *a + x;
    }
    let mut width = SUM_LANES;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            acc[i] = acc[i] + acc[i + width];
        }
    }
    acc[0]
}

/// Partial sums per [`sum_lanes`]: two AVX-512 registers of f32 (four of f64), enough to cover
/// the add's latency.
const SUM_LANES: usize = 32;

fn reduce_float<T: Float + Element>(
    op: ReduceOp,
    a: &Array,
    d: &[T],
    axes: &[bool],
    keep: bool,
) -> Result<(Vec<T>, Shape)> {
    Ok(match op {
        ReduceOp::Sum => fold_with(
            a,
            d,
            axes,
            keep,
            T::zero(),
            |x, y| x + y,
            sum_float,
            column_sums,
        ),
        ReduceOp::Prod => fold(a, d, axes, keep, T::one(), |x, y| x * y),
        ReduceOp::Max => fold(a, d, axes, keep, T::neg_infinity(), |x, y| {
            if y > x || y.is_nan() {
                y
            } else {
                x
            }
        }),
        ReduceOp::Min => fold(a, d, axes, keep, T::infinity(), |x, y| {
            if y < x || y.is_nan() {
                y
            } else {
                x
            }
        }),
        ReduceOp::Any | ReduceOp::All => {
            return Err(Error::unsupported(op.name(), a.dtype(), "bool"))
        }
    })
}

fn reduce_int<T: PrimInt + Bounded + WrappingAdd + WrappingMul + Element>(
    op: ReduceOp,
    a: &Array,
    d: &[T],
    axes: &[bool],
    keep: bool,
) -> Result<(Vec<T>, Shape)> {
    Ok(match op {
        ReduceOp::Sum => fold(a, d, axes, keep, T::zero(), |x, y| x.wrapping_add(&y)),
        ReduceOp::Prod => fold(a, d, axes, keep, T::one(), |x, y| x.wrapping_mul(&y)),
        ReduceOp::Max => fold(a, d, axes, keep, T::min_value(), |x, y| x.max(y)),
        ReduceOp::Min => fold(a, d, axes, keep, T::max_value(), |x, y| x.min(y)),
        ReduceOp::Any | ReduceOp::All => {
            return Err(Error::unsupported(op.name(), a.dtype(), "bool"))
        }
    })
}

/// Checks `axes` against the rank and returns a mask of the reduced axes (all when `None`).
pub fn axes_mask(op: &'static str, rank: usize, axes: Option<&[i64]>) -> Result<Vec<bool>> {
    let mut mask = vec![axes.is_none(); rank];
    for &ax in axes.unwrap_or(&[]) {
        let r = rank as i64;
        if ax < -r || ax >= r.max(1) || (rank == 0 && ax != 0 && ax != -1) {
            return Err(Error::invalid(
                op,
                format!("axis {ax} is out of range for a tensor of rank {rank}"),
            ));
        }
        if rank > 0 {
            mask[ax.rem_euclid(r) as usize] = true;
        }
    }
    Ok(mask)
}

/// Reduces `a` over the axes marked in `mask` (see [`axes_mask`]).
pub fn reduce(op: ReduceOp, a: &Array, mask: &[bool], keepdims: bool) -> Result<Array> {
    if let Some(r) = crate::device::dispatch([a], |d, [a]| d.reduce(op, a, mask, keepdims)) {
        return r;
    }
    // Reducing an empty axis leaves the others, which may be huge ([0, 2**20, 2**20] over
    // axis 0): the output is checked like any allocation.
    if a.is_empty() && mask.len() == a.rank() {
        crate::check_alloc(op.name(), a.dtype(), &plan(a.shape(), mask, keepdims).0)?;
    }
    if a.dtype().is_narrow() {
        return reduce_narrow(op, a, mask, keepdims);
    }
    if a.dtype().is_complex() {
        // Sums are linear, so they reduce each part; the order-based reductions are not
        // defined for complex numbers (products are composed above the kernels).
        return match op {
            ReduceOp::Sum => super::complex::via_parts(a, |p| reduce(op, p, mask, keepdims)),
            _ => Err(Error::unsupported(op.name(), a.dtype(), "a real dtype")),
        };
    }
    let (buf, shape) = match a.buffer() {
        Buffer::F32(d) => {
            let (v, s) = reduce_float(op, a, d, mask, keepdims)?;
            (Buffer::F32(v.into()), s)
        }
        Buffer::F64(d) => {
            let (v, s) = reduce_float(op, a, d, mask, keepdims)?;
            (Buffer::F64(v.into()), s)
        }
        Buffer::I32(d) => {
            let (v, s) = reduce_int(op, a, d, mask, keepdims)?;
            (Buffer::I32(v.into()), s)
        }
        Buffer::I64(d) => {
            let (v, s) = reduce_int(op, a, d, mask, keepdims)?;
            (Buffer::I64(v.into()), s)
        }
        Buffer::Bool(d) => {
            let (v, s) = match op {
                ReduceOp::Any => fold(a, d, mask, keepdims, false, |x, y| x || y),
                ReduceOp::All => fold(a, d, mask, keepdims, true, |x, y| x && y),
                _ => {
                    return Err(Error::unsupported(
                        op.name(),
                        DType::Bool,
                        "a numeric dtype",
                    ))
                }
            };
            (Buffer::Bool(v.into()), s)
        }
        Buffer::F16(_) | Buffer::BF16(_) => {
            let r = reduce(op, &cast(a, DType::F32)?, mask, keepdims)?;
            return cast(&r, a.dtype());
        }
        _ => return reduce_narrow(op, a, mask, keepdims),
    };
    Array::from_buffer(buf, &shape)
}

/// `reduce` on a narrow integer: in its wide dtype, narrowed back with wrapping (a sum or
/// product modulo 2**32 or 2**64 is the right one modulo the narrow width); uint64's max and
/// min through [`super::ordered_u64`], since its wide dtype holds its bits, not its order.
fn reduce_narrow(op: ReduceOp, a: &Array, mask: &[bool], keepdims: bool) -> Result<Array> {
    if matches!(op, ReduceOp::Any | ReduceOp::All) {
        return Err(Error::unsupported(op.name(), a.dtype(), "bool"));
    }
    if a.dtype() == DType::U64 && matches!(op, ReduceOp::Max | ReduceOp::Min) {
        // int64's extremes of the empty set are the ordered images of 0 and u64::MAX.
        let r = reduce(op, &super::ordered_u64(a)?, mask, keepdims)?;
        return super::from_ordered_u64(&r);
    }
    // Max of the empty set is the dtype's lowest value (min its highest), which the wide
    // dtype's does not narrow to.
    if a.is_empty() && matches!(op, ReduceOp::Max | ReduceOp::Min) {
        let bits = 8 * a.dtype().size_in_bytes() as u32;
        let (lowest, highest) = if a.dtype().is_unsigned() {
            (0, (1i64 << bits) - 1)
        } else {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        };
        let v = if op == ReduceOp::Max { lowest } else { highest };
        let shape = plan(a.shape(), mask, keepdims).0;
        let one = cast(&Array::scalar(v), a.dtype())?;
        return one.broadcast_to(&shape)?.try_contiguous(op.name());
    }
    super::via_wide(a, |w| reduce(op, w, mask, keepdims))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgReduce {
    ArgMax,
    ArgMin,
}

fn arg_typed<T: Element + PartialOrd>(
    which: ArgReduce,
    a: &Array,
    d: &[T],
    axis: usize,
) -> (Vec<i64>, Shape) {
    let moved: Vec<usize> = (0..a.rank()).filter(|&i| i != axis).chain([axis]).collect();
    let t = a
        .transpose(&moved)
        .expect("a valid permutation")
        .contiguous();
    let n = a.shape()[axis];
    let out_shape: Shape = moved[..moved.len() - 1]
        .iter()
        .map(|&i| a.shape()[i])
        .collect();
    let data = t.contiguous_slice::<T>().unwrap_or(d);
    let better = |x: T, best: T| match which {
        ArgReduce::ArgMax => x > best,
        ArgReduce::ArgMin => x < best,
    };
    let out = if n == 0 {
        vec![0; num_elements(&out_shape)]
    } else {
        data.chunks(n)
            .map(|c| {
                let mut best = 0;
                for (i, &x) in c.iter().enumerate().skip(1) {
                    if better(x, c[best]) {
                        best = i;
                    }
                }
                best as i64
            })
            .collect()
    };
    (out, out_shape)
}

/// Index (int64) of the largest or smallest element along `axis`; the first one on ties.
pub fn arg_reduce(which: ArgReduce, a: &Array, axis: usize) -> Result<Array> {
    let op = if which == ArgReduce::ArgMax {
        "ArgMax"
    } else {
        "ArgMin"
    };
    if axis >= a.rank() {
        return Err(Error::invalid(
            op,
            format!("axis {axis} is out of range for rank {}", a.rank()),
        ));
    }
    if a.shape()[axis] == 0 {
        return Err(Error::invalid(op, "reduction axis must not be empty"));
    }
    let (v, s) = match a.buffer() {
        Buffer::F16(d) => arg_typed::<f16>(which, a, d, axis),
        Buffer::BF16(d) => arg_typed::<bf16>(which, a, d, axis),
        Buffer::F32(d) => arg_typed(which, a, d, axis),
        Buffer::F64(d) => arg_typed(which, a, d, axis),
        Buffer::I32(d) => arg_typed(which, a, d, axis),
        Buffer::I64(d) => arg_typed(which, a, d, axis),
        Buffer::U64(_) => return arg_reduce(which, &super::ordered_u64(a)?, axis),
        Buffer::Bool(_) => return Err(Error::unsupported(op, DType::Bool, "a numeric dtype")),
        Buffer::C64(_) | Buffer::C128(_) => {
            return Err(Error::unsupported(op, a.dtype(), "a real dtype"))
        }
        // Widening keeps the order of every other narrow dtype.
        _ => return arg_reduce(which, &cast(a, a.dtype().wide())?, axis),
    };
    Array::from_vec(v, &s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Long float sums keep partial sums: within a few float32 roundings of the exact sum at
    /// lengths around the lane count and the parallel block, where one running sum drifts by
    /// about a thousand times more (checked on the last case).
    #[test]
    fn long_float_sums_stay_close_to_the_exact_sum() {
        for n in [
            1,
            31,
            32,
            33,
            1000,
            SUM_BLOCK - 1,
            SUM_BLOCK + 1,
            3 * SUM_BLOCK + 17,
            1 << 20,
        ] {
            let v: Vec<f32> = (0..n).map(|i| 0.1 + (i % 7) as f32 * 0.01).collect();
            let exact: f64 = v.iter().map(|&x| x as f64).sum();
            let a = Array::from_vec(v.clone(), &[n]).unwrap();
            let got = reduce(ReduceOp::Sum, &a, &[true], false)
                .unwrap()
                .to_vec::<f32>()[0];
            let err = (got as f64 - exact).abs() / exact;
            assert!(err < 1e-6, "n={n}: {got} vs {exact} ({err:e})");
            if n == 1 << 20 {
                let chained = v.iter().fold(0.0f32, |acc, &x| acc + x);
                assert!((chained as f64 - exact).abs() / exact > 1e-5, "{chained}");
            }
        }
        let rows = Array::from_vec(
            (0..3 * 40_000).map(|i| (i % 5) as f64).collect(),
            &[3, 40_000],
        )
        .unwrap();
        let per_row = reduce(ReduceOp::Sum, &rows, &[false, true], false).unwrap();
        assert_eq!(per_row.to_vec::<f64>(), vec![80_000.0, 80_000.0, 80_000.0]);
    }

    #[test]
    fn sums_over_inner_and_outer_axes() {
        let a = Array::from_vec((0..6).map(|x| x as f32).collect(), &[2, 3]).unwrap();
        let rows = reduce(ReduceOp::Sum, &a, &[false, true], false).unwrap();
        assert_eq!(rows.to_vec::<f32>(), vec![3.0, 12.0]);
        let cols = reduce(ReduceOp::Sum, &a, &[true, false], true).unwrap();
        assert_eq!(cols.shape(), &[1, 3]);
        assert_eq!(cols.to_vec::<f32>(), vec![3.0, 5.0, 7.0]);
    }

    #[test]
    fn leading_axis_reductions_of_many_rows_match_the_column_by_column_ones() {
        // A bias gradient's shape (batch, image, channels) summed over all but the channels,
        // against each column folded on its own (the sum in float64), NaN included.
        let (rows, c) = (70_001usize, 16usize);
        let mut v: Vec<f32> = (0..rows * c)
            .map(|i| ((i * 7919) % 1009) as f32 * 0.001 - 0.5)
            .collect();
        v[5 * c + 3] = f32::NAN; // column 3's max and min are NaN
        v[rows * c - 1] = 9.0; // the last row holds column 15's max
        let a = Array::from_vec(v.clone(), &[rows, 1, c]).unwrap();
        let mask = [true, true, false];
        let column = |j: usize| v.iter().skip(j).step_by(c).copied();
        let sum = reduce(ReduceOp::Sum, &a, &mask, false)
            .unwrap()
            .to_vec::<f32>();
        let max = reduce(ReduceOp::Max, &a, &mask, false)
            .unwrap()
            .to_vec::<f32>();
        let min = reduce(ReduceOp::Min, &a, &mask, false)
            .unwrap()
            .to_vec::<f32>();
        for j in 0..c {
            if j == 3 {
                assert!(sum[j].is_nan() && max[j].is_nan() && min[j].is_nan());
                continue;
            }
            let exact: f64 = column(j).map(f64::from).sum();
            let scale: f64 = column(j).map(|x| f64::from(x).abs()).sum();
            assert!(
                (f64::from(sum[j]) - exact).abs() <= 1e-6 * scale,
                "{j}: {} vs {exact}",
                sum[j]
            );
            assert_eq!(max[j], column(j).fold(f32::NEG_INFINITY, f32::max), "{j}");
            assert_eq!(min[j], column(j).fold(f32::INFINITY, f32::min), "{j}");
        }
        assert_eq!(max[15], 9.0);
    }

    #[test]
    fn column_sums_are_the_same_bits_at_every_level_and_thread_count() {
        // Blocks of whole rows are fixed by the shape alone, so the rounding of a bias
        // gradient never depends on the machine; one row, fewer rows than lanes, a ragged last
        // block, and a row wider than a block all go through the same path.
        for (rows, c) in [(1usize, 5usize), (3, 7), (70_001, 16), (9, 40_000), (0, 3)] {
            let v: Vec<f32> = (0..rows * c)
                .map(|i| ((i * 7919 + 13) % 1009) as f32 / 1009.0 - 0.3)
                .collect();
            let a = Array::from_vec(v.clone(), &[rows, c]).unwrap();
            let run = || {
                reduce(ReduceOp::Sum, &a, &[true, false], false)
                    .unwrap()
                    .to_vec::<f32>()
                    .into_iter()
                    .map(f32::to_bits)
                    .collect::<Vec<_>>()
            };
            let seen = simd::at_every_level_and_thread_count(run);
            assert!(seen.iter().all(|r| *r == seen[0]), "{rows} rows of {c}");
            for (j, &bits) in seen[0].iter().enumerate() {
                let column = v.iter().skip(j).step_by(c).map(|&x| f64::from(x));
                let (exact, scale) = column.fold((0.0, 0.0), |(e, s), x| (e + x, s + x.abs()));
                let got = f64::from(f32::from_bits(bits));
                assert!(
                    (got - exact).abs() <= 1e-6 * scale.max(1.0),
                    "{j}: {got} {exact}"
                );
            }
        }
    }

    #[test]
    fn narrow_reductions_wrap_and_empty_extremes_are_the_dtypes() {
        let a = Array::from_vec(vec![200u8, 100, 7], &[3]).unwrap();
        let sum = reduce(ReduceOp::Sum, &a, &[true], false).unwrap();
        assert_eq!((sum.dtype(), sum.to_vec::<u8>()), (DType::U8, vec![51]));
        let empty = Array::from_vec(Vec::<i8>::new(), &[0]).unwrap();
        let max = reduce(ReduceOp::Max, &empty, &[true], false).unwrap();
        assert_eq!(max.to_vec::<i8>(), vec![-128]);
        let top = Array::from_vec(vec![1u64, u64::MAX], &[2]).unwrap();
        let max = reduce(ReduceOp::Max, &top, &[true], false).unwrap();
        assert_eq!(max.to_vec::<u64>(), vec![u64::MAX]);
        let arg = arg_reduce(ArgReduce::ArgMax, &top, 0).unwrap();
        assert_eq!(arg.to_vec::<i64>(), vec![1]);
    }

    #[test]
    fn argmax_takes_first_of_ties() {
        let a = Array::from_vec(vec![1i32, 5, 5, 0], &[2, 2]).unwrap();
        let r = arg_reduce(ArgReduce::ArgMax, &a, 1).unwrap();
        assert_eq!(r.to_vec::<i64>(), vec![1, 0]);
    }
}
