//! Optimizer steps applied to variables in place, one fused kernel per variable
//! (`ferrotape_core::kernels::*_update`). Not recorded on any tape, like
//! TensorFlow's `ResourceApply*` ops.

use ferrotape_core::kernels::{self, AdagradStep, AdamStep, RmsPropStep, SgdStep};
use ferrotape_core::{Error, Result};

use crate::tensor::Tensor;
use crate::variable::Variable;

fn distinct(op: &'static str, vars: &[&Variable]) -> Result<()> {
    for (i, a) in vars.iter().enumerate() {
        if vars[i + 1..].iter().any(|b| a == b) {
            return Err(Error::invalid(
                op,
                "a variable and its optimizer slots must be distinct variables",
            ));
        }
    }
    Ok(())
}

/// One Adam step: `m`, `v` are the variable's first- and second-moment slots.
pub fn adam_update(
    param: &Variable,
    m: &Variable,
    v: &Variable,
    grad: &Tensor,
    step: AdamStep,
) -> Result<()> {
    distinct("ResourceApplyAdam", &[param, m, v])?;
    let (mut p, mut m, mut v) = (param.value_mut(), m.value_mut(), v.value_mut());
    kernels::adam_update(&mut p, &mut m, &mut v, grad.value(), step)
}

/// One SGD step, with the velocity slot when momentum is used.
pub fn sgd_update(
    param: &Variable,
    velocity: Option<&Variable>,
    grad: &Tensor,
    step: SgdStep,
) -> Result<()> {
    if let Some(vel) = velocity {
        distinct("ResourceApplyGradientDescent", &[param, vel])?;
    }
    let mut p = param.value_mut();
    match velocity {
        Some(vel) => kernels::sgd_update(&mut p, Some(&mut vel.value_mut()), grad.value(), step),
        None => kernels::sgd_update(&mut p, None, grad.value(), step),
    }
}

/// One (uncentred) RMSprop step, with the momentum slot when momentum is used.
pub fn rmsprop_update(
    param: &Variable,
    velocity: &Variable,
    momentum: Option<&Variable>,
    grad: &Tensor,
    step: RmsPropStep,
) -> Result<()> {
    let mut all = vec![param, velocity];
    all.extend(momentum);
    distinct("ResourceApplyRMSProp", &all)?;
    let (mut p, mut v) = (param.value_mut(), velocity.value_mut());
    match momentum {
        Some(m) => {
            kernels::rmsprop_update(&mut p, &mut v, Some(&mut m.value_mut()), grad.value(), step)
        }
        None => kernels::rmsprop_update(&mut p, &mut v, None, grad.value(), step),
    }
}

/// One Adagrad step.
pub fn adagrad_update(
    param: &Variable,
    accumulator: &Variable,
    grad: &Tensor,
    step: AdagradStep,
) -> Result<()> {
    distinct("ResourceApplyAdagrad", &[param, accumulator])?;
    let (mut p, mut a) = (param.value_mut(), accumulator.value_mut());
    kernels::adagrad_update(&mut p, &mut a, grad.value(), step)
}
