//! Batch normalisation with batch statistics, as one op.
//!
//! The forward pass and, when nothing records the backward pass, the backward pass run fused
//! kernels (`ferrotape_core::kernels::batch_norm_*`). Under an outer tape (a gradient of a
//! gradient) the backward pass is instead written in differentiable ops, the exact same
//! derivative, so higher orders keep working: [`crate::tape::would_record`] decides.

use ferrotape_core::kernels;
use ferrotape_core::{Array, DType, Result};

use super::{add, mul, reduce_mean, reduce_sum, reshape, rsqrt, squared_difference, sub};
use crate::tape::{record, would_record};
use crate::tensor::Tensor;
use crate::trace;

fn as_f64(t: &Tensor) -> Result<Vec<f64>> {
    Ok(kernels::cast(t.value(), DType::F64)?.to_vec::<f64>())
}

/// Every axis of a rank-`rank` tensor but `axis`: the axes the statistics reduce over.
fn reduction_axes(rank: usize, axis: usize) -> Vec<i64> {
    (0..rank).filter(|&i| i != axis).map(|i| i as i64).collect()
}

/// The shape that lines a `[features]` tensor up with `axis` of a rank-`rank` tensor.
fn feature_shape(rank: usize, axis: usize, features: usize) -> Vec<usize> {
    (0..rank)
        .map(|i| if i == axis { features } else { 1 })
        .collect()
}

/// `1 / sqrt(variance + epsilon)` per feature.
fn inverse_std(variance: &[f64], epsilon: f64) -> Vec<f64> {
    variance
        .iter()
        .map(|v| 1.0 / (v + epsilon).sqrt())
        .collect()
}

/// The per-feature affine map both batch norms apply in one pass:
/// `scale = γ·inv_std`, `shift = β - mean·scale` (γ = 1 and β = 0 when absent).
/// Returns γ's values too, for the fused backward pass.
fn scale_and_shift(
    mean: &[f64],
    inv_std: &[f64],
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let features = mean.len();
    let gamma_values = match gamma {
        Some(g) => as_f64(g)?,
        None => vec![1.0; features],
    };
    let beta_values = match beta {
        Some(b) => as_f64(b)?,
        None => vec![0.0; features],
    };
    let scale: Vec<f64> = (0..features)
        .map(|c| gamma_values[c] * inv_std[c])
        .collect();
    let shift: Vec<f64> = (0..features)
        .map(|c| beta_values[c] - mean[c] * scale[c])
        .collect();
    Ok((gamma_values, scale, shift))
}

/// The fused forward pass's values: `y`, the batch mean and variance, `1/sqrt(variance + ε)`
/// and γ's values (ones when absent).
struct Forward {
    y: Array,
    mean: Vec<f64>,
    variance: Vec<f64>,
    inv_std: Vec<f64>,
    gamma: Vec<f64>,
}

fn forward(
    x: &Array,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<Forward> {
    let (mean, variance) = kernels::batch_norm_statistics(x, axis)?;
    let inv_std = inverse_std(&variance, epsilon);
    let (gamma, scale, shift) = scale_and_shift(&mean, &inv_std, gamma, beta)?;
    let y = kernels::batch_norm_apply(x, axis, &scale, &shift)?;
    Ok(Forward {
        y,
        mean,
        variance,
        inv_std,
        gamma,
    })
}

impl Forward {
    /// `y`, then the batch mean and variance as `[features]` tensors of `dtype`, then (`saved`)
    /// the mean and inverse std the backward pass takes, as one `[2, features]` float64
    /// tensor (see [`fused_batch_norm`]).
    fn tensors(self, dtype: DType, saved: bool) -> Result<Vec<Tensor>> {
        let features = self.mean.len();
        let stats = |v: &[f64]| -> Result<Tensor> {
            Ok(Tensor::new(kernels::cast(
                &Array::from_vec(v.to_vec(), &[features])?,
                dtype,
            )?))
        };
        let mut out = vec![
            Tensor::new(self.y),
            stats(&self.mean)?,
            stats(&self.variance)?,
        ];
        if saved {
            let both = [self.mean, self.inv_std].concat();
            out.push(Tensor::new(Array::from_vec(both, &[2, features])?));
        }
        Ok(out)
    }
}

/// Normalises `x` along every axis but `axis` with the batch's statistics, then scales by
/// `gamma` and shifts by `beta` (each `[features]` or absent). Returns `y` and the batch mean
/// and (biased) variance as untracked `[features]` tensors, for moving averages.
///
/// While tracing, the traced forward node has one more result: the float64 mean and inverse
/// std that the backward pass takes, which the traced backward node reads. A replayed step
/// then computes the statistics once, as the eager step does, rather than again in the
/// backward pass (a whole pass over `x`), and uses the very values the eager step uses.
pub fn fused_batch_norm(
    x: &Tensor,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let values = forward(x.value(), gamma, beta, axis, epsilon)?;
    let (mean, inv_std, gamma_values) = (
        values.mean.clone(),
        values.inv_std.clone(),
        values.gamma.clone(),
    );
    let tracing = trace::is_tracing();
    let outputs = values.tensors(x.dtype(), tracing)?;
    let (y, batch_mean, batch_variance) = (&outputs[0], &outputs[1], &outputs[2]);
    let saved = outputs.get(3).cloned();
    let mut inputs = vec![x];
    inputs.extend(gamma);
    inputs.extend(beta);
    let (has_gamma, has_beta) = (gamma.is_some(), beta.is_some());
    let dtype = x.dtype();
    trace::node(
        "FusedBatchNormV3",
        &inputs,
        &outputs.iter().collect::<Vec<_>>(),
        || {
            move |t: &[Tensor]| {
                let gamma = has_gamma.then(|| &t[1]);
                let beta = has_beta.then(|| &t[1 + usize::from(has_gamma)]);
                forward(t[0].value(), gamma, beta, axis, epsilon)?.tensors(dtype, true)
            }
        },
    );
    record("FusedBatchNormV3", &inputs, &[y], || {
        let x = x.clone();
        let gamma = gamma.cloned();
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let mut watched = vec![g, &x];
            watched.extend(gamma.as_ref());
            let (dx, dgamma, dbeta) = if would_record(&watched) {
                composed_backward(&x, g, gamma.as_ref(), axis, epsilon)?
            } else {
                let grads = kernels::batch_norm_backward(
                    x.value(),
                    g.value(),
                    axis,
                    &mean,
                    &inv_std,
                    &gamma_values,
                )?;
                let grads = (
                    Tensor::new(grads.dx),
                    Tensor::new(grads.dgamma),
                    Tensor::new(grads.dbeta),
                );
                trace_backward(&x, g, gamma.as_ref(), saved.as_ref(), axis, epsilon, &grads);
                grads
            };
            let mut out = vec![needs[0].then_some(dx)];
            if gamma.is_some() {
                out.push(needs[1].then_some(dgamma));
            }
            if has_beta {
                out.push(needs[out.len()].then_some(dbeta));
            }
            Ok(out)
        }
    });
    Ok((y.clone(), batch_mean.clone(), batch_variance.clone()))
}

/// Records the fused backward kernel while tracing: from `saved` (the traced forward's mean
/// and inverse std) when the forward pass was traced, else from the statistics of `x`
/// computed again (a forward pass run before the trace began, whose `x` is a constant of it).
fn trace_backward(
    x: &Tensor,
    g: &Tensor,
    gamma: Option<&Tensor>,
    saved: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
    (dx, dgamma, dbeta): &(Tensor, Tensor, Tensor),
) {
    let mut inputs = vec![x, g];
    inputs.extend(gamma);
    inputs.extend(saved);
    let (has_gamma, has_saved) = (gamma.is_some(), saved.is_some());
    trace::node(
        "FusedBatchNormGradV3",
        &inputs,
        &[dx, dgamma, dbeta],
        || {
            move |t: &[Tensor]| {
                let gamma = has_gamma.then(|| &t[2]);
                let (dx, dgamma, dbeta) = match has_saved {
                    true => saved_backward(&t[0], &t[1], gamma, &t[t.len() - 1], axis)?,
                    false => fused_backward(&t[0], &t[1], gamma, axis, epsilon)?,
                };
                Ok(vec![dx, dgamma, dbeta])
            }
        },
    );
}

/// The backward kernel of [`fused_batch_norm`] with the statistics it saved (`[2, features]`:
/// the mean, then the inverse std).
fn saved_backward(
    x: &Tensor,
    g: &Tensor,
    gamma: Option<&Tensor>,
    saved: &Tensor,
    axis: usize,
) -> Result<(Tensor, Tensor, Tensor)> {
    let saved = saved.value().to_vec::<f64>();
    let (mean, inv_std) = saved.split_at(saved.len() / 2);
    let gamma_values = match gamma {
        Some(g) => as_f64(g)?,
        None => vec![1.0; mean.len()],
    };
    let grads =
        kernels::batch_norm_backward(x.value(), g.value(), axis, mean, inv_std, &gamma_values)?;
    Ok((
        Tensor::new(grads.dx),
        Tensor::new(grads.dgamma),
        Tensor::new(grads.dbeta),
    ))
}

/// The backward kernel of [`fused_batch_norm`] with the statistics computed again from `x`.
fn fused_backward(
    x: &Tensor,
    g: &Tensor,
    gamma: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (mean, variance) = kernels::batch_norm_statistics(x.value(), axis)?;
    let inv_std = inverse_std(&variance, epsilon);
    let (gamma_values, _, _) = scale_and_shift(&mean, &inv_std, gamma, None)?;
    let grads =
        kernels::batch_norm_backward(x.value(), g.value(), axis, &mean, &inv_std, &gamma_values)?;
    Ok((
        Tensor::new(grads.dx),
        Tensor::new(grads.dgamma),
        Tensor::new(grads.dbeta),
    ))
}

/// The same derivative in differentiable ops: with x̂ = (x - mean)·rsqrt(var + ε),
/// dβ = Σ g, dγ = Σ g·x̂, dx = γ·rsqrt(var + ε)·(g - mean(g) - x̂·mean(g·x̂)).
fn composed_backward(
    x: &Tensor,
    g: &Tensor,
    gamma: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let features = x.shape()[axis];
    let axes = reduction_axes(x.rank(), axis);
    let param_shape = feature_shape(x.rank(), axis, features);
    let mean = reduce_mean(x, Some(&axes), true)?;
    let variance = reduce_mean(&squared_difference(x, &mean)?, Some(&axes), true)?;
    let inv_std = rsqrt(&add(&variance, &variance.scalar_like(epsilon))?)?;
    let x_hat = mul(&sub(x, &mean)?, &inv_std)?;
    let dbeta = reduce_sum(g, Some(&axes), false)?;
    let dgamma = reduce_sum(&mul(g, &x_hat)?, Some(&axes), false)?;
    let scale = match gamma {
        Some(gm) => mul(&reshape(gm, &param_shape)?, &inv_std)?,
        None => inv_std,
    };
    let centred = sub(g, &reduce_mean(g, Some(&axes), true)?)?;
    let projection = mul(&x_hat, &reduce_mean(&mul(g, &x_hat)?, Some(&axes), true)?)?;
    let dx = mul(&scale, &sub(&centred, &projection)?)?;
    Ok((dx, dgamma, dbeta))
}

/// Batch normalisation with given statistics (Keras's inference mode), as one op:
/// `y = x·scale + shift` per feature of `axis`, with `scale = γ·rsqrt(var + ε)` and
/// `shift = β - mean·scale`, in one pass over `x` (TensorFlow's `batch_normalization` takes
/// two). `mean` and `variance` are `[features]`; each input is differentiable, the backward
/// pass written in ops so that higher orders work.
pub fn batch_norm_inference(
    x: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<Tensor> {
    let features = x.shape()[axis];
    let inv_std = inverse_std(&as_f64(variance)?, epsilon);
    let (_, scale, shift) = scale_and_shift(&as_f64(mean)?, &inv_std, gamma, beta)?;
    let y = Tensor::new(kernels::batch_norm_apply(x.value(), axis, &scale, &shift)?);
    let mut inputs = vec![x, mean, variance];
    inputs.extend(gamma);
    inputs.extend(beta);
    // The statistics were read into the host: a replay reads them again.
    trace::node1("FusedBatchNormV3", &inputs, &y, || {
        let (has_gamma, has_beta) = (gamma.is_some(), beta.is_some());
        move |t: &[Tensor]| {
            let gamma = has_gamma.then(|| &t[3]);
            let beta = has_beta.then(|| &t[3 + usize::from(has_gamma)]);
            batch_norm_inference(&t[0], &t[1], &t[2], gamma, beta, axis, epsilon)
        }
    });
    record("FusedBatchNormV3", &inputs, &[&y], || {
        let (x, mean, variance) = (x.clone(), mean.clone(), variance.clone());
        let (gamma, has_beta) = (gamma.cloned(), beta.is_some());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let axes = reduction_axes(x.rank(), axis);
            let param_shape = feature_shape(x.rank(), axis, features);
            let inv_std = rsqrt(&add(&variance, &variance.scalar_like(epsilon))?)?;
            let scale = match &gamma {
                Some(gm) => mul(gm, &inv_std)?,
                None => inv_std.clone(),
            };
            let at_axis = |t: &Tensor| reshape(t, &param_shape);
            let dx = needs[0].then(|| mul(g, &at_axis(&scale)?)).transpose()?;
            let dbeta = reduce_sum(g, Some(&axes), false)?;
            let dmean = needs[1]
                .then(|| mul(&dbeta, &scale).and_then(|d| super::neg(&d)))
                .transpose()?;
            // Σ g·(x - mean), shared by dγ (times inv_std) and dvar (times -γ·inv_std³/2).
            let needs_gamma = gamma.is_some() && needs[3];
            let g_centred = (needs[2] || needs_gamma)
                .then(|| reduce_sum(&mul(g, &sub(&x, &at_axis(&mean)?)?)?, Some(&axes), false))
                .transpose()?;
            let dvariance = match (&g_centred, needs[2]) {
                (Some(s), true) => {
                    let cubed = mul(&inv_std, &mul(&inv_std, &inv_std)?)?;
                    let d = mul(s, &mul(&cubed, &cubed.scalar_like(-0.5))?)?;
                    Some(match &gamma {
                        Some(gm) => mul(&d, gm)?,
                        None => d,
                    })
                }
                _ => None,
            };
            let mut out = vec![dx, dmean, dvariance];
            if gamma.is_some() {
                out.push(match (&g_centred, needs_gamma) {
                    (Some(s), true) => Some(mul(s, &inv_std)?),
                    _ => None,
                });
            }
            if has_beta {
                out.push(needs[out.len()].then_some(dbeta));
            }
            Ok(out)
        }
    });
    Ok(y)
}
