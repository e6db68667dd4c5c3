//! Batch normalisation over one feature axis, fused: statistics in one pass over a channels-last
//! input and two over others, the normalisation in one, and the backward pass in two
//! (per-feature sums, then the input gradient), where the op-by-op form makes about ten full
//! passes each way.
//!
//! The input is seen as `[outer, features, inner]` around the feature axis (channels-last images
//! have `inner = 1`). Sums are accumulated in f64 per feature, and the variance is never taken
//! as `E[x²] - E[x]²`, which loses digits when the mean is large: channels-last inputs sum
//! around a shift that lies among the values (see `statistics_typed`), others around the mean
//! (a second pass). Rows are split across threads when the input is large; each thread keeps
//! its own per-feature sums.

use num_traits::{AsPrimitive, Float};
use rayon::prelude::*;

use super::{cast, PARALLEL_THRESHOLD};
use crate::{simd, Array, Buffer, DType, Error, Result};

/// The `[outer, features, inner]` view of a shape around `axis`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureLayout {
    pub outer: usize,
    pub features: usize,
    pub inner: usize,
}

impl FeatureLayout {
    pub fn new(shape: &[usize], axis: usize) -> FeatureLayout {
        FeatureLayout {
            outer: shape[..axis].iter().product(),
            features: shape[axis],
            inner: shape[axis + 1..].iter().product(),
        }
    }

    /// Elements per feature (the count the statistics average over).
    pub fn count(&self) -> usize {
        self.outer * self.inner
    }

    fn row(&self) -> usize {
        self.features * self.inner
    }
}

/// Two per-feature sums of `f(feature, flat index)` over all elements, threads splitting the
/// rows. Channels-last inputs (`inner = 1`) walk each row once with the feature as the index.
fn feature_sums(
    layout: FeatureLayout,
    f: impl Fn(usize, usize) -> (f64, f64) + Sync,
) -> (Vec<f64>, Vec<f64>) {
    let (features, inner) = (layout.features, layout.inner);
    let row = layout.row();
    let sum_rows = |rows: std::ops::Range<usize>| {
        let mut first = vec![0.0f64; features];
        let mut second = vec![0.0f64; features];
        for o in rows {
            let base = o * row;
            if inner == 1 {
                for c in 0..features {
                    let (a, b) = f(c, base + c);
                    first[c] += a;
                    second[c] += b;
                }
            } else {
                for c in 0..features {
                    let start = base + c * inner;
                    let (mut a, mut b) = (0.0, 0.0);
                    for i in start..start + inner {
                        let (p, q) = f(c, i);
                        a += p;
                        b += q;
                    }
                    first[c] += a;
                    second[c] += b;
                }
            }
        }
        (first, second)
    };
    let len = layout.outer * row;
    if len < PARALLEL_THRESHOLD || layout.outer < 2 {
        return sum_rows(0..layout.outer);
    }
    let threads = rayon::current_num_threads().min(layout.outer);
    let per = layout.outer.div_ceil(threads);
    (0..threads)
        .into_par_iter()
        .map(|t| sum_rows(t * per..((t + 1) * per).min(layout.outer)))
        .reduce_with(|(mut a1, mut b1), (a2, b2)| {
            a1.iter_mut().zip(&a2).for_each(|(x, y)| *x += y);
            b1.iter_mut().zip(&b2).for_each(|(x, y)| *x += y);
            (a1, b1)
        })
        .unwrap_or_else(|| (vec![0.0; features], vec![0.0; features]))
}

/// `out[i] = f(feature of i, i)` for every element, threads splitting the rows.
fn map_features<T: Float + crate::Element>(
    layout: FeatureLayout,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Vec<T> {
    let row = layout.row();
    let len = layout.outer * row;
    // Every element is written below.
    let mut out: Vec<T> = crate::pool::overwritten(len);
    if row == 0 {
        return out;
    }
    let inner = layout.inner;
    let fill = |o: usize, chunk: &mut [T]| {
        let base = o * row;
        if inner == 1 {
            for (c, slot) in chunk.iter_mut().enumerate() {
                *slot = f(c, base + c);
            }
        } else {
            for (k, slot) in chunk.iter_mut().enumerate() {
                *slot = f(k / inner, base + k);
            }
        }
    };
    if len < PARALLEL_THRESHOLD {
        simd::dispatch(
            #[inline(always)]
            || {
                out.chunks_mut(row)
                    .enumerate()
                    .for_each(|(o, ch)| fill(o, ch))
            },
        );
    } else {
        out.par_chunks_mut(row).enumerate().for_each(|(o, ch)| {
            simd::dispatch(
                #[inline(always)]
                || fill(o, ch),
            )
        });
    }
    out
}

/// Rows per task when channels-last rows are split across threads.
const ROWS_PER_TASK: usize = 2048;

/// Features [`paired_sums`] keeps in registers at once: one AVX-512 vector of f32.
const FEATURE_BLOCK: usize = 16;

/// Rows per block of [`paired_sums`] (whose partial sums are then added into the totals).
const ROW_BLOCK: usize = 256;

/// Channels-last (`inner = 1`, `c` features per row): per-feature `Σ (a - ka)` and
/// `Σ (a - ka)·(b - kb)` over every row, threads splitting the rows.
///
/// Each block of [`ROW_BLOCK`] rows is summed feature block by feature block with four
/// independent float64 partial sums per feature (rows taken four at a time) held in
/// registers, so no add waits on the one before it and no sum goes through memory per row;
/// the blocks' sums are then added in row order, whatever the thread count.
fn paired_sums<T: Float + AsPrimitive<f64> + Send + Sync>(
    c: usize,
    rows: usize,
    (a, ka): (&[T], &[f64]),
    (b, kb): (&[T], &[f64]),
) -> (Vec<f64>, Vec<f64>) {
    let sum_rows = |range: std::ops::Range<usize>| {
        let (mut s1, mut s2) = (vec![0.0f64; c], vec![0.0f64; c]);
        simd::dispatch(
            #[inline(always)]
            || {
                let mut start = range.start;
                while start < range.end {
                    let end = (start + ROW_BLOCK).min(range.end);
                    let mut f0 = 0;
                    while f0 + FEATURE_BLOCK <= c {
                        feature_block::<T, FEATURE_BLOCK>(
                            c,
                            f0,
                            start..end,
                            (a, ka),
                            (b, kb),
                            (&mut s1, &mut s2),
                        );
                        f0 += FEATURE_BLOCK;
                    }
                    for r in start..end {
                        for j in f0..c {
                            let u = a[r * c + j].as_() - ka[j];
                            s1[j] += u;
                            s2[j] += u * (b[r * c + j].as_() - kb[j]);
                        }
                    }
                    start = end;
                }
            },
        );
        (s1, s2)
    };
    if rows * c < PARALLEL_THRESHOLD {
        return sum_rows(0..rows);
    }
    let partial: Vec<(Vec<f64>, Vec<f64>)> = (0..rows.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .map(|t| sum_rows(t * ROWS_PER_TASK..((t + 1) * ROWS_PER_TASK).min(rows)))
        .collect();
    let (mut s1, mut s2) = (vec![0.0f64; c], vec![0.0f64; c]);
    for (p1, p2) in partial {
        s1.iter_mut().zip(&p1).for_each(|(x, y)| *x += y);
        s2.iter_mut().zip(&p2).for_each(|(x, y)| *x += y);
    }
    (s1, s2)
}

/// [`paired_sums`] over features `f0..f0 + W` of rows `rows`, added onto `s1` and `s2`.
#[inline(always)]
fn feature_block<T: Float + AsPrimitive<f64>, const W: usize>(
    c: usize,
    f0: usize,
    rows: std::ops::Range<usize>,
    (a, ka): (&[T], &[f64]),
    (b, kb): (&[T], &[f64]),
    (s1, s2): (&mut [f64], &mut [f64]),
) {
    let ka: &[f64; W] = ka[f0..f0 + W].try_into().expect("a block of features");
    let kb: &[f64; W] = kb[f0..f0 + W].try_into().expect("a block of features");
    let mut p = [[0.0f64; W]; 4];
    let mut q = [[0.0f64; W]; 4];
    // Rows r, r+1, ... go to partial sums 0, 1, 2, 3, 0, ... (the loop body is written out
    // rather than a closure, which would keep the partial sums in memory).
    let mut r = rows.start;
    while r < rows.end {
        let lanes = (rows.end - r).min(4);
        for (k, (pk, qk)) in p.iter_mut().zip(q.iter_mut()).enumerate().take(lanes) {
            let at = (r + k) * c + f0;
            let av: &[T; W] = a[at..at + W].try_into().expect("a block of features");
            let bv: &[T; W] = b[at..at + W].try_into().expect("a block of features");
            for j in 0..W {
                let u = av[j].as_() - ka[j];
                pk[j] += u;
                qk[j] += u * (bv[j].as_() - kb[j]);
            }
        }
        r += lanes;
    }
    for j in 0..W {
        s1[f0 + j] += (p[0][j] + p[1][j]) + (p[2][j] + p[3][j]);
        s2[f0 + j] += (q[0][j] + q[1][j]) + (q[2][j] + q[3][j]);
    }
}

/// Channels-last: `out = x·a + dy·b + c` per feature (`dy` optional), rows split across
/// threads. Both the normalisation and the input gradient have this form.
fn row_affine<T: Float + crate::Element>(
    features: usize,
    x: &[T],
    dy: Option<&[T]>,
    a: &[T],
    b: &[T],
    c: &[T],
) -> Vec<T> {
    if features == 0 {
        return vec![T::zero(); x.len()];
    }
    // Every element is written below.
    let mut out: Vec<T> = crate::pool::overwritten(x.len());
    let task = |(k, chunk): (usize, &mut [T])| {
        let start = k * ROWS_PER_TASK * features;
        for (r, row) in chunk.chunks_mut(features).enumerate() {
            let at = start + r * features;
            let xs = &x[at..at + features];
            // Whole blocks of 16 features as fixed-size arrays: a loop over a row of only 16
            // or 32 runtime-many features would not fill a vector register.
            let blocks = features / FEATURE_BLOCK * FEATURE_BLOCK;
            for f0 in (0..blocks).step_by(FEATURE_BLOCK) {
                let block = f0..f0 + FEATURE_BLOCK;
                affine_block::<T, FEATURE_BLOCK>(
                    (&mut row[block.clone()]).try_into().expect("a block"),
                    xs[block.clone()].try_into().expect("a block"),
                    dy.map(|dy| {
                        dy[at + f0..at + f0 + FEATURE_BLOCK]
                            .try_into()
                            .expect("a block")
                    }),
                    (
                        a[block.clone()].try_into().expect("a block"),
                        b[block.clone()].try_into().expect("a block"),
                        c[block].try_into().expect("a block"),
                    ),
                );
            }
            for j in blocks..features {
                row[j] = match dy {
                    Some(dy) => xs[j] * a[j] + dy[at + j] * b[j] + c[j],
                    None => xs[j] * a[j] + c[j],
                };
            }
        }
    };
    let chunk = ROWS_PER_TASK * features;
    if x.len() < PARALLEL_THRESHOLD {
        simd::dispatch(
            #[inline(always)]
            || out.chunks_mut(chunk).enumerate().for_each(task),
        );
    } else {
        out.par_chunks_mut(chunk).enumerate().for_each(|item| {
            simd::dispatch(
                #[inline(always)]
                || task(item),
            )
        });
    }
    out
}

/// One block of [`row_affine`]: `out = x·a + dy·b + c`.
#[inline(always)]
#[allow(clippy::type_complexity)]
fn affine_block<T: Float, const W: usize>(
    out: &mut [T; W],
    x: &[T; W],
    dy: Option<&[T; W]>,
    (a, b, c): (&[T; W], &[T; W], &[T; W]),
) {
    match dy {
        Some(dy) => {
            for j in 0..W {
                out[j] = x[j] * a[j] + dy[j] * b[j] + c[j];
            }
        }
        None => {
            for j in 0..W {
                out[j] = x[j] * a[j] + c[j];
            }
        }
    }
}

fn to_t<T: Float>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from(x).expect("a float")).collect()
}

fn statistics_typed<T: Float + AsPrimitive<f64> + Send + Sync>(
    layout: FeatureLayout,
    x: &[T],
) -> (Vec<f64>, Vec<f64>) {
    let n = layout.count().max(1) as f64;
    if layout.inner == 1 {
        // One pass for both sums, around a shift: the first row's values, which lie among
        // each feature's values, so `Σ(x-k)² - (Σ(x-k))²/n` cancels little. In float64, the
        // digits it loses (about (mean-k)²/variance times float64's precision) stay far below
        // float32's, where the plain `E[x²] - E[x]²` would lose them all to a large mean.
        let c = layout.features;
        let shift: Vec<f64> = x[..c.min(x.len())].iter().map(|v| v.as_()).collect();
        if shift.len() < c {
            return (vec![0.0; c], vec![0.0; c]);
        }
        let (sums, squares) = paired_sums(c, layout.outer, (x, &shift), (x, &shift));
        let mean: Vec<f64> = (0..c).map(|j| shift[j] + sums[j] / n).collect();
        let variance = (0..c)
            .map(|j| ((squares[j] - sums[j] * sums[j] / n) / n).max(0.0))
            .collect();
        return (mean, variance);
    }
    let (sums, _) = feature_sums(layout, |_, i| (x[i].as_(), 0.0));
    let mean: Vec<f64> = sums.into_iter().map(|s| s / n).collect();
    let (squares, _) = feature_sums(layout, |c, i| {
        let d = x[i].as_() - mean[c];
        (d * d, 0.0)
    });
    (mean, squares.into_iter().map(|s| s / n).collect())
}

fn normalize_typed<T: Float + crate::Element>(
    layout: FeatureLayout,
    x: &[T],
    scale: &[f64],
    shift: &[f64],
) -> Vec<T> {
    let scale: Vec<T> = to_t(scale);
    let shift: Vec<T> = to_t(shift);
    if layout.inner == 1 {
        let zero = vec![T::zero(); layout.features];
        return row_affine(layout.features, x, None, &scale, &zero, &shift);
    }
    map_features(layout, |c, i| x[i] * scale[c] + shift[c])
}

/// What the backward pass of a batch normalisation returns.
pub struct BatchNormGrads {
    pub dx: Array,
    /// Σ dy·x̂ per feature (the gradient of the scale γ).
    pub dgamma: Array,
    /// Σ dy per feature (the gradient of the offset β).
    pub dbeta: Array,
}

fn backward_typed<T: Float + AsPrimitive<f64> + crate::Element>(
    layout: FeatureLayout,
    x: &[T],
    dy: &[T],
    mean: &[f64],
    inv_std: &[f64],
    gamma: &[f64],
) -> (Vec<T>, Vec<f64>, Vec<f64>) {
    if layout.inner == 1 {
        let c = layout.features;
        // Σ dy and Σ dy·x̂ = inv_std·Σ dy·(x - mean).
        let (dbeta, centred) = paired_sums(c, layout.outer, (dy, &vec![0.0; c]), (x, mean));
        let dgamma: Vec<f64> = (0..c).map(|j| centred[j] * inv_std[j]).collect();
        // dx = k·(g - mean(g) - x̂·mean(g·x̂)) = g·k + x·b + c per feature, with
        // k = γ·inv_std, b = -k·inv_std·mean(g·x̂), c = -k·mean(g) - b·mean.
        let n = layout.count().max(1) as f64;
        let k: Vec<f64> = (0..c).map(|j| gamma[j] * inv_std[j]).collect();
        let b: Vec<f64> = (0..c).map(|j| -k[j] * inv_std[j] * dgamma[j] / n).collect();
        let shift: Vec<f64> = (0..c)
            .map(|j| -k[j] * dbeta[j] / n - b[j] * mean[j])
            .collect();
        let dx = row_affine(c, x, Some(dy), &to_t(&b), &to_t(&k), &to_t(&shift));
        return (dx, dgamma, dbeta);
    }
    let x_hat = |c: usize, i: usize| (x[i].as_() - mean[c]) * inv_std[c];
    // One pass for both per-feature sums: Σ dy and Σ dy·x̂.
    let (dbeta, dgamma) = feature_sums(layout, |c, i| {
        let g: f64 = dy[i].as_();
        (g, g * x_hat(c, i))
    });
    let n = layout.count().max(1) as f64;
    let mean_dy: Vec<f64> = dbeta.iter().map(|s| s / n).collect();
    let mean_dy_xhat: Vec<f64> = dgamma.iter().map(|s| s / n).collect();
    let factor: Vec<f64> = (0..layout.features)
        .map(|c| gamma[c] * inv_std[c])
        .collect();
    let dx = map_features(layout, |c, i| {
        let g: f64 = dy[i].as_();
        T::from(factor[c] * (g - mean_dy[c] - x_hat(c, i) * mean_dy_xhat[c])).expect("float")
    });
    (dx, dgamma, dbeta)
}

fn check_float(op: &'static str, x: &Array) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::unsupported(op, x.dtype(), "a floating-point dtype"))
    }
}

/// The per-feature mean and (biased) variance of `x` along every axis but `axis`, as f64.
pub fn batch_norm_statistics(x: &Array, axis: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    const OP: &str = "FusedBatchNorm";
    check_float(OP, x)?;
    if let Some(r) = crate::device::dispatch([x], |d, [x]| d.batch_norm_statistics(x, axis)) {
        return r.map(|[mean, variance]| (mean, variance));
    }
    let layout = FeatureLayout::new(x.shape(), axis);
    let x = x.contiguous();
    Ok(match x.buffer() {
        Buffer::F32(_) => {
            statistics_typed(layout, x.contiguous_slice::<f32>().expect("contiguous"))
        }
        Buffer::F64(_) => {
            statistics_typed(layout, x.contiguous_slice::<f64>().expect("contiguous"))
        }
        _ => {
            let x32 = cast(&x, DType::F32)?;
            statistics_typed(layout, x32.contiguous_slice::<f32>().expect("contiguous"))
        }
    })
}

/// `x·scale + shift` with per-feature `scale` and `shift` along `axis`.
pub fn batch_norm_apply(x: &Array, axis: usize, scale: &[f64], shift: &[f64]) -> Result<Array> {
    const OP: &str = "FusedBatchNorm";
    check_float(OP, x)?;
    if let Some(r) =
        crate::device::dispatch([x], |d, [x]| d.batch_norm_apply(x, axis, scale, shift))
    {
        return r;
    }
    let layout = FeatureLayout::new(x.shape(), axis);
    let x = x.contiguous();
    let buffer = match x.buffer() {
        Buffer::F32(_) => Buffer::F32(
            normalize_typed(
                layout,
                x.contiguous_slice().expect("contiguous"),
                scale,
                shift,
            )
            .into(),
        ),
        Buffer::F64(_) => Buffer::F64(
            normalize_typed(
                layout,
                x.contiguous_slice().expect("contiguous"),
                scale,
                shift,
            )
            .into(),
        ),
        _ => {
            let y = batch_norm_apply(&cast(&x, DType::F32)?, axis, scale, shift)?;
            return cast(&y, x.dtype());
        }
    };
    Array::from_buffer(buffer, x.shape())
}

/// The gradients of `y = γ·(x - mean)·inv_std + β` with batch statistics (the mean and the
/// variance depend on `x`): `dx = γ·inv_std·(dy - mean(dy) - x̂·mean(dy·x̂))`.
pub fn batch_norm_backward(
    x: &Array,
    dy: &Array,
    axis: usize,
    mean: &[f64],
    inv_std: &[f64],
    gamma: &[f64],
) -> Result<BatchNormGrads> {
    const OP: &str = "FusedBatchNormGrad";
    check_float(OP, x)?;
    if x.shape() != dy.shape() || x.dtype() != dy.dtype() {
        return Err(Error::invalid(
            OP,
            format!(
                "the gradient ({} {:?}) must match the input ({} {:?})",
                dy.dtype(),
                dy.shape(),
                x.dtype(),
                x.shape()
            ),
        ));
    }
    let stats = [mean, inv_std, gamma];
    if let Some(r) = crate::device::dispatch([x, dy], |d, [x, dy]| {
        d.batch_norm_backward(x, dy, axis, stats)
    }) {
        return r;
    }
    let layout = FeatureLayout::new(x.shape(), axis);
    let (x, dy) = (x.contiguous(), dy.contiguous());
    let (dx, dgamma, dbeta) = match (x.buffer(), dy.buffer()) {
        (Buffer::F32(_), Buffer::F32(_)) => {
            let (dx, dg, db) = backward_typed::<f32>(
                layout,
                x.contiguous_slice().expect("contiguous"),
                dy.contiguous_slice().expect("contiguous"),
                mean,
                inv_std,
                gamma,
            );
            (Array::from_vec(dx, x.shape())?, dg, db)
        }
        (Buffer::F64(_), Buffer::F64(_)) => {
            let (dx, dg, db) = backward_typed::<f64>(
                layout,
                x.contiguous_slice().expect("contiguous"),
                dy.contiguous_slice().expect("contiguous"),
                mean,
                inv_std,
                gamma,
            );
            (Array::from_vec(dx, x.shape())?, dg, db)
        }
        _ => {
            let grads = batch_norm_backward(
                &cast(&x, DType::F32)?,
                &cast(&dy, DType::F32)?,
                axis,
                mean,
                inv_std,
                gamma,
            )?;
            return Ok(BatchNormGrads {
                dx: cast(&grads.dx, x.dtype())?,
                dgamma: cast(&grads.dgamma, x.dtype())?,
                dbeta: cast(&grads.dbeta, x.dtype())?,
            });
        }
    };
    let per_feature = |v: Vec<f64>| cast(&Array::from_vec(v, &[layout.features])?, x.dtype());
    Ok(BatchNormGrads {
        dx,
        dgamma: per_feature(dgamma)?,
        dbeta: per_feature(dbeta)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_backward_match_the_definitions_on_a_middle_axis() {
        // shape [2, 3, 2], features on axis 1.
        let xs: Vec<f64> = (0..12).map(|i| ((i * 5) % 7) as f64 - 2.5).collect();
        let x = Array::from_vec(xs.clone(), &[2, 3, 2]).unwrap();
        let (mean, var) = batch_norm_statistics(&x, 1).unwrap();
        let feature = |c: usize| [0, 1, 6, 7].map(|k| xs[k + 2 * c]);
        for c in 0..3 {
            let f = feature(c);
            let m = f.iter().sum::<f64>() / 4.0;
            let v = f.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / 4.0;
            assert!((mean[c] - m).abs() < 1e-12 && (var[c] - v).abs() < 1e-12);
        }
        // With dy = x̂ the input gradient of Σ x̂²/2 is 0 (x̂ has unit variance per feature).
        let inv: Vec<f64> = var.iter().map(|v| 1.0 / (v + 1e-9).sqrt()).collect();
        let x_hat: Vec<f64> = (0..12)
            .map(|i| (xs[i] - mean[(i / 2) % 3]) * inv[(i / 2) % 3])
            .collect();
        let dy = Array::from_vec(x_hat, &[2, 3, 2]).unwrap();
        let g = batch_norm_backward(&x, &dy, 1, &mean, &inv, &[1.0; 3]).unwrap();
        assert!(g.dx.to_vec::<f64>().iter().all(|v| v.abs() < 1e-6));
        assert!(g
            .dgamma
            .to_vec::<f64>()
            .iter()
            .all(|v| (v - 4.0).abs() < 1e-6));
        assert!(g.dbeta.to_vec::<f64>().iter().all(|v| v.abs() < 1e-9));
    }

    #[test]
    fn channels_last_statistics_keep_their_digits_under_a_large_mean() {
        // Features whose mean is 10^4 to 10^6 times their spread, and whose first row (the
        // shift of the one-pass sums) is an outlier on one of them: the variance still agrees
        // with the exact two-pass sums over the same float32 values.
        let (rows, c) = (50_000usize, 3usize);
        let mut v: Vec<f32> = (0..rows * c)
            .map(|i| {
                let base = [1.0e4f32, -3.0e5, 2.5e6][i % c];
                base + ((i * 7919) % 97) as f32 * 0.01 * base.abs().sqrt() / 100.0
            })
            .collect();
        v[1] += 5.0e3; // the first row's value of feature 1, far from the others
        let (mean, variance) =
            batch_norm_statistics(&Array::from_vec(v.clone(), &[rows, c]).unwrap(), 1).unwrap();
        for j in 0..c {
            let xs: Vec<f64> = v.iter().skip(j).step_by(c).map(|&a| f64::from(a)).collect();
            let m = xs.iter().sum::<f64>() / rows as f64;
            let var = xs.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / rows as f64;
            assert!(
                (mean[j] - m).abs() <= 1e-12 * m.abs(),
                "{j}: {} vs {m}",
                mean[j]
            );
            assert!(
                (variance[j] - var).abs() <= 1e-9 * var,
                "{j}: {} vs {var}",
                variance[j]
            );
        }
    }

    #[test]
    fn the_channels_last_path_agrees_with_the_general_one() {
        // Rows × features large enough for the threaded paths (and a few rows, which are not),
        // against the same data laid out features-first ([c, rows], features on axis 0: the
        // general path). 3 features take the per-element loop, 16 one register block, 37 two
        // blocks and the loop; the row counts are not multiples of the four partial sums.
        for (rows, c) in [(40_000usize, 3usize), (9_999, 16), (3_001, 37), (7, 16)] {
            channels_last_agrees_with_general(rows, c);
        }
    }

    fn channels_last_agrees_with_general(rows: usize, c: usize) {
        let v: Vec<f32> = (0..rows * c)
            .map(|i| ((i * 37) % 101) as f32 * 0.01 - 0.4)
            .collect();
        let last = Array::from_vec(v.clone(), &[rows, c]).unwrap();
        let first = last.transpose(&[1, 0]).unwrap().contiguous();
        let (m1, v1) = batch_norm_statistics(&last, 1).unwrap();
        let (m2, v2) = batch_norm_statistics(&first, 0).unwrap();
        for j in 0..c {
            assert!((m1[j] - m2[j]).abs() < 1e-9 && (v1[j] - v2[j]).abs() < 1e-9);
        }
        let inv: Vec<f64> = v1.iter().map(|x| 1.0 / (x + 1e-3).sqrt()).collect();
        let gamma: Vec<f64> = (0..c)
            .map(|j| [0.5, -1.0, 2.0][j % 3] + 0.01 * j as f64)
            .collect();
        let y1 = batch_norm_apply(&last, 1, &inv, &gamma).unwrap();
        let y2 = batch_norm_apply(&first, 0, &inv, &gamma).unwrap();
        let y2 = y2.transpose(&[1, 0]).unwrap().contiguous();
        assert_eq!(y1.to_vec::<f32>(), y2.to_vec::<f32>());
        let g1 = batch_norm_backward(&last, &y1, 1, &m1, &inv, &gamma).unwrap();
        let dy_first = y1.transpose(&[1, 0]).unwrap().contiguous();
        let g2 = batch_norm_backward(&first, &dy_first, 0, &m1, &inv, &gamma).unwrap();
        let dx2 = g2
            .dx
            .transpose(&[1, 0])
            .unwrap()
            .contiguous()
            .to_vec::<f32>();
        for (a, b) in g1.dx.to_vec::<f32>().iter().zip(&dx2) {
            assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} vs {b}");
        }
        for (a, b) in g1
            .dgamma
            .to_vec::<f32>()
            .iter()
            .zip(g2.dgamma.to_vec::<f32>())
        {
            assert!((a - b).abs() <= 1e-3 * (1.0 + b.abs()));
        }
    }
}
