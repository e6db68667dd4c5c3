//! Batch normalisation over one feature axis, fused: statistics in two passes over the input,
//! the normalisation in one, and the backward pass in two (per-feature sums, then the input
//! gradient), where the op-by-op form makes about ten full passes each way.
//!
//! The input is seen as `[outer, features, inner]` around the feature axis (channels-last images
//! have `inner = 1`). Sums are accumulated in f64 per feature, and the variance is computed
//! around the mean (two passes), not as `E[x²] - E[x]²`, which loses digits when the mean is
//! large. Rows are split across threads when the input is large; each thread keeps its own
//! per-feature sums.

use num_traits::Float;
use rayon::prelude::*;

use super::{cast, PARALLEL_THRESHOLD};
use crate::{Array, Buffer, DType, Error, Result};

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

/// Per-feature sums of `f(feature, value)` over all rows, threads splitting the rows.
fn feature_sums<T: Float + Send + Sync>(
    layout: FeatureLayout,
    data: &[T],
    f: impl Fn(usize, usize, T) -> f64 + Sync,
) -> Vec<f64> {
    let row = layout.row();
    let sum_rows = |rows: std::ops::Range<usize>| {
        let mut acc = vec![0.0f64; layout.features];
        for o in rows {
            let base = o * row;
            for (c, slot) in acc.iter_mut().enumerate() {
                let start = base + c * layout.inner;
                for (i, &v) in data[start..start + layout.inner].iter().enumerate() {
                    *slot += f(c, start + i, v);
                }
            }
        }
        acc
    };
    if data.len() < PARALLEL_THRESHOLD || layout.outer < 2 {
        return sum_rows(0..layout.outer);
    }
    let threads = rayon::current_num_threads().min(layout.outer);
    let per = layout.outer.div_ceil(threads);
    (0..threads)
        .into_par_iter()
        .map(|t| sum_rows(t * per..((t + 1) * per).min(layout.outer)))
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
            a
        })
        .unwrap_or_else(|| vec![0.0; layout.features])
}

/// Writes `out[i] = f(feature of i, i)` for every element, threads splitting the rows.
fn map_features<T: Float + Send + Sync>(
    layout: FeatureLayout,
    len: usize,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::zero(); len];
    let row = layout.row();
    let fill = |o: usize, chunk: &mut [T]| {
        for c in 0..layout.features {
            for i in 0..layout.inner {
                let k = c * layout.inner + i;
                chunk[k] = f(c, o * row + k);
            }
        }
    };
    if row == 0 {
        return out;
    }
    if len < PARALLEL_THRESHOLD {
        out.chunks_mut(row)
            .enumerate()
            .for_each(|(o, ch)| fill(o, ch));
    } else {
        out.par_chunks_mut(row)
            .enumerate()
            .for_each(|(o, ch)| fill(o, ch));
    }
    out
}

fn statistics_typed<T: Float + Send + Sync>(
    layout: FeatureLayout,
    x: &[T],
) -> (Vec<f64>, Vec<f64>) {
    let n = layout.count().max(1) as f64;
    let mean: Vec<f64> = feature_sums(layout, x, |_, _, v| v.to_f64().unwrap_or(f64::NAN))
        .into_iter()
        .map(|s| s / n)
        .collect();
    let variance = feature_sums(layout, x, |c, _, v| {
        let d = v.to_f64().unwrap_or(f64::NAN) - mean[c];
        d * d
    })
    .into_iter()
    .map(|s| s / n)
    .collect();
    (mean, variance)
}

fn normalize_typed<T: Float + Send + Sync>(
    layout: FeatureLayout,
    x: &[T],
    scale: &[f64],
    shift: &[f64],
) -> Vec<T> {
    let scale: Vec<T> = scale.iter().map(|&s| T::from(s).expect("float")).collect();
    let shift: Vec<T> = shift.iter().map(|&s| T::from(s).expect("float")).collect();
    map_features(layout, x.len(), |c, i| x[i] * scale[c] + shift[c])
}

/// What the backward pass of a batch normalisation returns.
pub struct BatchNormGrads {
    pub dx: Array,
    /// Σ dy·x̂ per feature (the gradient of the scale γ).
    pub dgamma: Array,
    /// Σ dy per feature (the gradient of the offset β).
    pub dbeta: Array,
}

fn backward_typed<T: Float + Send + Sync>(
    layout: FeatureLayout,
    x: &[T],
    dy: &[T],
    mean: &[f64],
    inv_std: &[f64],
    gamma: &[f64],
) -> (Vec<T>, Vec<f64>, Vec<f64>) {
    let x_hat = |c: usize, i: usize| (x[i].to_f64().unwrap_or(f64::NAN) - mean[c]) * inv_std[c];
    let g = |i: usize| dy[i].to_f64().unwrap_or(f64::NAN);
    let dbeta = feature_sums(layout, dy, |_, _, v| v.to_f64().unwrap_or(f64::NAN));
    let dgamma = feature_sums(layout, dy, |c, i, v| {
        v.to_f64().unwrap_or(f64::NAN) * x_hat(c, i)
    });
    let n = layout.count().max(1) as f64;
    let dx = map_features(layout, x.len(), |c, i| {
        let k = gamma[c] * inv_std[c];
        T::from(k * (g(i) - dbeta[c] / n - x_hat(c, i) * dgamma[c] / n)).expect("float")
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
    let layout = FeatureLayout::new(x.shape(), axis);
    let x = x.contiguous();
    let buffer = match x.buffer() {
        Buffer::F32(_) => Buffer::F32(normalize_typed(
            layout,
            x.contiguous_slice().expect("contiguous"),
            scale,
            shift,
        )),
        Buffer::F64(_) => Buffer::F64(normalize_typed(
            layout,
            x.contiguous_slice().expect("contiguous"),
            scale,
            shift,
        )),
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
}
