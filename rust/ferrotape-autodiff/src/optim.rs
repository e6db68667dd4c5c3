//! Optimizer steps applied to variables in place, one fused kernel per variable
//! (`ferrotape_core::kernels::{adam_update, sgd_update}`). Not recorded on any tape, like
//! TensorFlow's `ResourceApply*` ops.

use ferrotape_core::kernels::{self, AdamStep, SgdStep};
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
