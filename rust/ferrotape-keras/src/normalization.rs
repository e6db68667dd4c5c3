//! BatchNormalization and LayerNormalization.

use ferrotape_autodiff::core::kernels::{self, BinaryOp};
use ferrotape_autodiff::core::Array;
use ferrotape_autodiff::{ops, trace};
use ferrotape_autodiff::{Error, Result, Tensor, Variable};

use crate::autocast;
use crate::layer::{Layer, Settings};

fn normalized_axis(op: &'static str, axis: i64, rank: usize) -> Result<usize> {
    ops::norm_axis(op, axis, rank).map_err(|_| {
        Error::invalid(
            op,
            format!("axis {axis} is out of range for an input of rank {rank}"),
        )
    })
}

/// `x·inv + shift` with `inv = gamma / sqrt(variance + epsilon)` and
/// `shift = beta - mean·inv`: two passes over `x`, as TensorFlow's `batch_normalization`.
fn normalize(
    x: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    gamma: Option<&Tensor>,
    beta: Option<&Tensor>,
    epsilon: f64,
) -> Result<Tensor> {
    let mut inv = ops::rsqrt(&ops::add(variance, &variance.scalar_like(epsilon))?)?;
    if let Some(g) = gamma {
        inv = ops::mul(&inv, g)?;
    }
    let centred = ops::mul(mean, &inv)?;
    let shift = match beta {
        Some(b) => ops::sub(b, &centred)?,
        None => ops::neg(&centred)?,
    };
    ops::add(&ops::mul(x, &inv)?, &shift)
}

/// Normalises each feature (channel) of `axis` with the batch's statistics in training, and
/// with moving averages of them otherwise; the moving averages are updated in training as
/// `moving = moving·momentum + batch·(1 - momentum)` (Keras's rule, biased variance).
/// Settings: `axis`, `momentum`, `epsilon`.
pub struct BatchNormalization {
    pub gamma: Option<Variable>,
    pub beta: Option<Variable>,
    pub moving_mean: Variable,
    pub moving_variance: Variable,
}

fn update_moving(moving: &Variable, batch: &Tensor, momentum: f64) -> Result<()> {
    moving_step(moving, batch, momentum)?;
    // A traced step updates the moving averages again on every replay.
    trace::effect("AssignMovingAvg", &[batch], || {
        let moving = moving.clone();
        move |t: &[Tensor]| moving_step(&moving, &t[0], momentum)
    });
    Ok(())
}

fn moving_step(moving: &Variable, batch: &Tensor, momentum: f64) -> Result<()> {
    let current = moving.snapshot();
    let batch = batch.value().reshape(current.shape())?;
    let batch = kernels::cast(&batch, current.dtype())?;
    // moving -= (moving - batch)·(1 - momentum): the same rule, one in-place update.
    let delta = kernels::binary(BinaryOp::Sub, &current, &batch)?;
    let factor = Array::scalar_of(current.dtype(), 1.0 - momentum);
    moving.assign_update(&kernels::binary(BinaryOp::Mul, &delta, &factor)?, true)
}

impl Layer for BatchNormalization {
    fn call(&self, x: &Tensor, training: bool, settings: &Settings) -> Result<Tensor> {
        const OP: &str = "BatchNormalization";
        let axis = match settings.ints("axis")?[..] {
            [axis] => normalized_axis(OP, axis, x.rank())?,
            _ => return Err(Error::invalid(OP, "only one axis is supported")),
        };
        let epsilon = settings.number("epsilon")?;
        let d = self.moving_mean.shape()[0];
        if x.shape()[axis] != d {
            return Err(Error::invalid(
                OP,
                format!(
                    "expected {d} features on axis {axis}, received shape {:?}",
                    x.shape()
                ),
            ));
        }
        let x = autocast(x, self.moving_mean.dtype())?;
        if training {
            // One fused op: statistics, normalisation and (when nothing records it) the
            // backward pass each take one or two passes over `x`.
            let gamma = self.gamma.as_ref().map(Variable::read);
            let beta = self.beta.as_ref().map(Variable::read);
            let (y, mean, variance) =
                ops::fused_batch_norm(&x, gamma.as_ref(), beta.as_ref(), axis, epsilon)?;
            // An empty batch carries no statistics: TensorFlow folds its NaN mean into the
            // moving averages (poisoning them for good); the moving averages stay as they were.
            if !x.is_empty() {
                let momentum = settings.number("momentum")?;
                update_moving(&self.moving_mean, &mean, momentum)?;
                update_moving(&self.moving_variance, &variance, momentum)?;
            }
            return Ok(y);
        }
        let gamma = self.gamma.as_ref().map(Variable::read);
        let beta = self.beta.as_ref().map(Variable::read);
        ops::batch_norm_inference(
            &x,
            &self.moving_mean.read(),
            &self.moving_variance.read(),
            gamma.as_ref(),
            beta.as_ref(),
            axis,
            epsilon,
        )
    }
}

/// Normalises each sample over `axes` (the last one by default) with its own statistics, then
/// scales and shifts with `gamma` and `beta` shaped like those axes.
/// Settings: `axis` (an int or a tuple of them), `epsilon`.
pub struct LayerNormalization {
    pub gamma: Option<Variable>,
    pub beta: Option<Variable>,
}

impl Layer for LayerNormalization {
    fn call(&self, x: &Tensor, _training: bool, settings: &Settings) -> Result<Tensor> {
        const OP: &str = "LayerNormalization";
        let epsilon = settings.number("epsilon")?;
        let dtype = self
            .gamma
            .as_ref()
            .or(self.beta.as_ref())
            .map(|v| v.dtype())
            .unwrap_or(x.dtype());
        let x = autocast(x, dtype)?;
        let axes = settings
            .ints("axis")?
            .iter()
            .map(|&a| normalized_axis(OP, a, x.rank()))
            .collect::<Result<Vec<_>>>()?;
        let shape: Vec<usize> = (0..x.rank())
            .map(|i| if axes.contains(&i) { x.shape()[i] } else { 1 })
            .collect();
        let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        let mean = ops::reduce_mean(&x, Some(&axes), true)?;
        let variance = ops::reduce_mean(&ops::squared_difference(&x, &mean)?, Some(&axes), true)?;
        let read = |v: &Option<Variable>| {
            v.as_ref()
                .map(|v| ops::reshape(&v.read(), &shape))
                .transpose()
        };
        let (gamma, beta) = (read(&self.gamma)?, read(&self.beta)?);
        normalize(&x, &mean, &variance, gamma.as_ref(), beta.as_ref(), epsilon)
    }
}
