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

/// Normalises `x` along every axis but `axis` with the batch's statistics, then scales by
/// `gamma` and shifts by `beta` (each `[features]` or absent). Returns `y` and the batch mean
/// and (biased) variance as untracked `[features]` tensors, for moving averages.
pub fn fused_batch_norm(
    x: &Tensor,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    axis: usize,
    epsilon: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let features = x.shape()[axis];
    let (mean, variance) = kernels::batch_norm_statistics(x.value(), axis)?;
    let inv_std = inverse_std(&variance, epsilon);
    let (gamma_values, scale, shift) = scale_and_shift(&mean, &inv_std, gamma, beta)?;
    let y = Tensor::new(kernels::batch_norm_apply(x.value(), axis, &scale, &shift)?);
    let mut inputs = vec![x];
    inputs.extend(gamma);
    inputs.extend(beta);
    let stats = |v: &[f64]| -> Result<Tensor> {
        Ok(Tensor::new(kernels::cast(
            &Array::from_vec(v.to_vec(), &[features])?,
            x.dtype(),
        )?))
    };
    let (batch_mean, batch_variance) = (stats(&mean)?, stats(&variance)?);
    // The statistics are host values read from `x`: a replay computes them again.
    let (has_gamma, has_beta) = (gamma.is_some(), beta.is_some());
    trace::node(
        "FusedBatchNormV3",
        &inputs,
        &[&y, &batch_mean, &batch_variance],
        || {
            move |t: &[Tensor]| {
                let gamma = has_gamma.then(|| &t[1]);
                let beta = has_beta.then(|| &t[1 + usize::from(has_gamma)]);
                let (y, m, v) = fused_batch_norm(&t[0], gamma, beta, axis, epsilon)?;
                Ok(vec![y, m, v])
            }
        },
    );
    record("FusedBatchNormV3", &inputs, &[&y], || {
        let x = x.clone();
        let (gamma, has_beta) = (gamma.cloned(), beta.is_some());
        let (mean, inv_std) = (mean.clone(), inv_std.clone());
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
                let mut inputs = vec![&x, g];
                inputs.extend(gamma.as_ref());
                trace::node(
                    "FusedBatchNormGradV3",
                    &inputs,
                    &[&grads.0, &grads.1, &grads.2],
                    || {
                        let has_gamma = gamma.is_some();
                        move |t: &[Tensor]| {
                            let (dx, dgamma, dbeta) = fused_backward(
                                &t[0],
                                &t[1],
                                has_gamma.then(|| &t[2]),
                                axis,
                                epsilon,
                            )?;
                            Ok(vec![dx, dgamma, dbeta])
                        }
                    },
                );
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
    Ok((y, batch_mean, batch_variance))
}

/// The backward kernel of [`fused_batch_norm`] with the statistics computed again from `x`
/// (what a replayed trace runs: the statistics were host values while tracing).
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
