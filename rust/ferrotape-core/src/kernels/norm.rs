//! Batch normalisation over one feature axis, fused: statistics in one pass over a channels-last
//! input and two over others, the normalisation in one, and the backward pass in two
//! (per-feature sums, then the input gradient), where the op-by-op form makes about ten full
//! passes each way.
//!
//! The input is seen as `[outer, features, inner]` around the feature axis (channels-last images
//! have `inner = 1`). Sums are accumulated in f64 per feature, and the variance is never taken
//! as `E[x²] - E[x]²`, which loses digits when the mean is large: channels-last inputs sum
//! around a shift that lies among the values (see `statistics_typed`), others around the mean
//! (a second pass). Rows are split across threads when the input is large. Channels-last sums
//! are kept per fixed block of rows and added in block order, so they come out the same bit for
//! bit whatever the number of threads or the SIMD level (see `channel_sums`); the general
//! path's threads each keep their own per-feature sums.

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

/// The loops of the channels-last passes run over a tile of whole rows, at least this many
/// elements, with each per-feature value repeated across the tile: a plain loop over
/// run-time-many elements, which the compiler's loop vectoriser widens. (Loops over a
/// fixed-size block of features rely on the straight-line vectoriser instead, which came out
/// scalar when the extension was linked at opt-level 2; it is linked at 3 now, see Cargo.toml.)
const TILE_ELEMENTS: usize = 256;

/// Elements per block of the channels-last passes (whole tiles; at least one): the unit
/// whose partial sums are kept apart, and the unit threads share out.
const BLOCK_ELEMENTS: usize = 8192;

/// How a channels-last pass over `len` elements (`features` per row) is cut: tiles of
/// `tile` elements, blocks of `block` (whole tiles), and one contiguous run of `per_thread`
/// blocks for each thread (the last run shorter). A pass over `x` and the pass after it split
/// alike, so each thread reads again the rows it has just read (from its own cache rather
/// than the other core's).
#[derive(Clone, Copy, Debug)]
struct Split {
    tile: usize,
    block: usize,
    blocks: usize,
    per_thread: usize,
}

impl Split {
    fn new(features: usize, len: usize) -> Split {
        let features = features.max(1);
        let tile = features * TILE_ELEMENTS.div_ceil(features);
        let block = tile * (BLOCK_ELEMENTS / tile).max(1);
        let blocks = len.div_ceil(block);
        // One run per thread and no more: rayon's threads are the cores, and a task more than
        // that only adds a hand-over. Below the threshold the calling thread does it all.
        let threads = if len < PARALLEL_THRESHOLD {
            1
        } else {
            rayon::current_num_threads().clamp(1, blocks.max(1))
        };
        Split {
            tile,
            block,
            blocks,
            per_thread: blocks.div_ceil(threads).max(1),
        }
    }

    /// The elements of block `b` (of `len` in all).
    fn elements(&self, b: usize, len: usize) -> std::ops::Range<usize> {
        b * self.block..((b + 1) * self.block).min(len)
    }

    fn parallel(&self) -> bool {
        self.per_thread < self.blocks
    }
}

/// `v` (one value per feature) repeated to fill a tile.
fn tiled<T: Copy>(v: &[T], tile: usize) -> Vec<T> {
    v.iter().copied().cycle().take(tile).collect()
}

/// Channels-last (`c` features per row): per-feature `(Σ u, Σ u·v)` over every row, with
/// `u = a - k, v = u` when `STATISTICS` (`b` unused) and `u = a, v = b - k` otherwise — the
/// statistics of `x` around a shift, or the backward pass's `Σ dy` and `Σ dy·(x - mean)`.
///
/// Every sum is float64, each element widened as it is read (float32 sums lose the variance
/// of a large-mean feature, see `statistics_typed`). Each block is summed tile by tile into
/// one float64 sum per tile element (a few rows per sum, no add waiting on the one before),
/// folded per feature at the block's end; the blocks' sums are kept apart and added in block
/// order. Every sum is thus taken in the same order whatever the number of threads and at
/// every SIMD level (vectors only work on several elements' sums at once).
fn channel_sums<T: Float + AsPrimitive<f64> + Send + Sync, const STATISTICS: bool>(
    c: usize,
    rows: usize,
    (a, b): (&[T], &[T]),
    k: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let len = rows * c;
    let split = Split::new(c, len);
    let k = tiled(k, split.tile);
    // Each block's sums: `Σ u` in `first`, `Σ u·v` in `second`.
    let (mut first, mut second) = (
        vec![0.0f64; split.blocks * c],
        vec![0.0f64; split.blocks * c],
    );
    let sum_blocks = |block0: usize, (first, second): (&mut [f64], &mut [f64])| {
        let (mut su, mut suv) = (vec![0.0f64; split.tile], vec![0.0f64; split.tile]);
        let sums = first.chunks_exact_mut(c).zip(second.chunks_exact_mut(c));
        for (i, (s, q)) in sums.enumerate() {
            let range = split.elements(block0 + i, len);
            su.fill(0.0);
            suv.fill(0.0);
            let tiles = a[range.clone()]
                .chunks(split.tile)
                .zip(b[range].chunks(split.tile));
            let (su, suv) = (&mut su, &mut suv);
            simd::dispatch(
                #[inline(always)]
                || {
                    for (a, b) in tiles {
                        let n = a.len();
                        tile_sums::<T, STATISTICS>((&mut su[..n], &mut suv[..n]), (a, b), &k[..n]);
                    }
                },
            );
            for (su, suv) in su.chunks_exact(c).zip(suv.chunks_exact(c)) {
                s.iter_mut().zip(su).for_each(|(s, v)| *s += v);
                q.iter_mut().zip(suv).for_each(|(q, v)| *q += v);
            }
        }
    };
    if split.parallel() {
        let per = split.per_thread * c;
        first
            .par_chunks_mut(per)
            .zip(second.par_chunks_mut(per))
            .enumerate()
            .for_each(|(t, out)| sum_blocks(t * split.per_thread, out));
    } else {
        sum_blocks(0, (&mut first, &mut second));
    }
    let (mut s, mut q) = (vec![0.0f64; c], vec![0.0f64; c]);
    for (p, r) in first.chunks_exact(c).zip(second.chunks_exact(c)) {
        s.iter_mut().zip(p).for_each(|(x, y)| *x += y);
        q.iter_mut().zip(r).for_each(|(x, y)| *x += y);
    }
    (s, q)
}

/// One tile's terms of [`channel_sums`], added element by element onto `su` and `suv` (all
/// slices as long as `a`).
#[inline(always)] // into `simd::dispatch`'s wide-vector function
fn tile_sums<T: Float + AsPrimitive<f64>, const STATISTICS: bool>(
    (su, suv): (&mut [f64], &mut [f64]),
    (a, b): (&[T], &[T]),
    k: &[f64],
) {
    let sums = su.iter_mut().zip(suv.iter_mut());
    if STATISTICS {
        for ((s, q), (&a, &k)) in sums.zip(a.iter().zip(k)) {
            let d = a.as_() - k;
            *s += d;
            *q += d * d;
        }
    } else {
        for ((s, q), ((&a, &b), &k)) in sums.zip(a.iter().zip(b).zip(k)) {
            let g = a.as_();
            *s += g;
            *q += g * (b.as_() - k);
        }
    }
}

/// Channels-last: `out = x·a + dy·b + c` per feature (`dy` optional), split across threads as
/// [`channel_sums`] splits them. Both the normalisation and the input gradient have this form.
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
    let split = Split::new(features, x.len());
    let (a, b, c) = (
        tiled(a, split.tile),
        tiled(b, split.tile),
        tiled(c, split.tile),
    );
    let run = |start: usize, out: &mut [T]| {
        let at = start..start + out.len();
        let (x, dy) = (&x[at.clone()], dy.map(|dy| &dy[at]));
        let tiles = out.chunks_mut(split.tile).zip(x.chunks(split.tile));
        simd::dispatch(
            #[inline(always)]
            || match dy {
                Some(dy) => {
                    for ((out, x), dy) in tiles.zip(dy.chunks(split.tile)) {
                        let n = out.len();
                        affine_tile::<T, true>(out, (x, dy), (&a[..n], &b[..n], &c[..n]));
                    }
                }
                None => {
                    for (out, x) in tiles {
                        let n = out.len();
                        affine_tile::<T, false>(out, (x, x), (&a[..n], &b[..n], &c[..n]));
                    }
                }
            },
        )
    };
    if split.parallel() {
        let per = split.per_thread * split.block;
        out.par_chunks_mut(per)
            .enumerate()
            .for_each(|(t, out)| run(t * per, out));
    } else {
        run(0, &mut out);
    }
    out
}

/// One tile of [`row_affine`]: `out = x·a + dy·b + c` (`x·a + c` unless `WITH_DY`), every
/// slice as long as `out`.
#[inline(always)] // into `simd::dispatch`'s wide-vector function
#[allow(clippy::type_complexity)]
fn affine_tile<T: Float, const WITH_DY: bool>(
    out: &mut [T],
    (x, dy): (&[T], &[T]),
    (a, b, c): (&[T], &[T], &[T]),
) {
    let terms = out.iter_mut().zip(x.iter().zip(a).zip(c));
    if WITH_DY {
        for ((o, ((&x, &a), &c)), (&g, &b)) in terms.zip(dy.iter().zip(b)) {
            *o = x * a + g * b + c;
        }
    } else {
        for (o, ((&x, &a), &c)) in terms {
            *o = x * a + c;
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
        let (sums, squares) = channel_sums::<T, true>(c, layout.outer, (x, x), &shift);
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
        let (dbeta, centred) = channel_sums::<T, false>(c, layout.outer, (dy, x), mean);
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

    /// Sizes for the channels-last paths: 3 features (tiles of 86 rows), 16, 37 (tiles of 7
    /// rows) and 64, with row counts that end in a part of a tile and, but for the last,
    /// span several blocks shared between threads.
    const CHANNELS_LAST_CASES: [(usize, usize); 5] =
        [(40_000, 3), (9_999, 16), (3_001, 37), (1_601, 64), (7, 16)];

    #[test]
    fn the_channels_last_path_agrees_with_the_general_one() {
        // Against the same data laid out features-first ([c, rows], features on axis 0: the
        // general path), at every SIMD level.
        let _serial = simd::TEST_LEVEL_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for level in simd::SimdLevel::ALL {
            if level > simd::detected() {
                continue;
            }
            simd::set_max_level(Some(level));
            for (rows, c) in CHANNELS_LAST_CASES {
                channels_last_agrees_with_general(rows, c);
            }
        }
        simd::set_max_level(None);
    }

    #[test]
    fn channels_last_results_do_not_depend_on_the_simd_level_or_the_threads() {
        // Every sum is taken in one order whatever the vector width and however many threads
        // share the blocks: the results agree bit for bit (so a traced step, which may run on
        // another thread, equals the eager one).
        for (rows, c) in CHANNELS_LAST_CASES {
            let x = Array::from_vec(noise(rows * c, 0.3), &[rows, c]).unwrap();
            let dy = Array::from_vec(noise(rows * c, -0.7), &[rows, c]).unwrap();
            let run = || {
                let (mean, variance) = batch_norm_statistics(&x, 1).unwrap();
                let inv: Vec<f64> = variance.iter().map(|v| 1.0 / (v + 1e-3).sqrt()).collect();
                let y = batch_norm_apply(&x, 1, &inv, &mean).unwrap();
                let g = batch_norm_backward(&x, &dy, 1, &mean, &inv, &variance).unwrap();
                let bits = |v: Vec<f32>| v.into_iter().map(f32::to_bits).collect::<Vec<_>>();
                let wide = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
                (
                    (wide(mean), wide(variance)),
                    (bits(y.to_vec()), bits(g.dx.to_vec())),
                    (bits(g.dgamma.to_vec()), bits(g.dbeta.to_vec())),
                )
            };
            let seen = simd::at_every_level_and_thread_count(run);
            assert!(seen.len() >= 2);
            assert!(
                seen.iter().all(|r| *r == seen[0]),
                "{rows} rows of {c} features"
            );
        }
    }

    /// Float32 values in about `[offset - 0.5, offset + 0.5)`, irregular enough that sums in
    /// another order would round differently.
    fn noise(len: usize, offset: f32) -> Vec<f32> {
        (0..len)
            .map(|i| ((i * 7919 + 13) % 1009) as f32 / 1009.0 - 0.5 + offset)
            .collect()
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
