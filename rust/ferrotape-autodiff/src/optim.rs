//! Optimizer steps applied to variables in place: [`apply_optimizer_step`] runs one of the
//! rules in `ferrotape_core::kernels::optim` on a variable and its slot variables. Not recorded
//! on any tape, like TensorFlow's `ResourceApply*` ops.

use ferrotape_core::kernels::{self, OptimizerStep};
use ferrotape_core::{Array, Error, Result};

use crate::tensor::Tensor;
use crate::variable::Variable;

/// One step of `step` on `variable` and its `slots` (in the order [`OptimizerStep`] lists),
/// from `grad`. The variable and its slots must be distinct variables: each is written.
pub fn apply_optimizer_step(
    step: &OptimizerStep,
    variable: &Variable,
    slots: &[Variable],
    grad: &Tensor,
) -> Result<()> {
    let all: Vec<&Variable> = std::iter::once(variable).chain(slots).collect();
    for (i, a) in all.iter().enumerate() {
        if all[i + 1..].contains(a) {
            return Err(Error::invalid(
                step.op(),
                "a variable and its optimizer slots must be distinct variables",
            ));
        }
    }
    let mut param = variable.value_mut();
    let mut guards: Vec<_> = slots.iter().map(Variable::value_mut).collect();
    let mut arrays: Vec<&mut Array> = guards.iter_mut().map(|g| &mut **g).collect();
    kernels::apply_optimizer_step(step, &mut param, &mut arrays, grad.value())
}

/// Keras's decoupled weight decay on `variable`, in place: `w -= w·weight_decay·lr` (see
/// [`kernels::decay_weights`]); an optimizer applies it before its step.
pub fn decay_weights(variable: &Variable, weight_decay: f64, learning_rate: f64) -> Result<()> {
    kernels::decay_weights(&mut variable.value_mut(), weight_decay, learning_rate)
}

/// Keras's moving average of `variable` (`use_ema`), in place:
/// `average = momentum·average + (1 - momentum)·variable` (see
/// [`kernels::update_moving_average`]).
pub fn update_moving_average(average: &Variable, variable: &Variable, momentum: f64) -> Result<()> {
    let value = variable.snapshot();
    kernels::update_moving_average(&mut average.value_mut(), &value, momentum)
}
