//! `ferrotape._core.optimizers`: `apply` runs one optimizer rule (the only copy of each:
//! `ferrotape_core::kernels::optim`) on a list of variables in one call. Conversion only: the
//! rule's name and hyperparameters are read, and checked, by `OptimizerStep::new`.

use std::collections::HashMap;

use ferrotape_autodiff::core::kernels::OptimizerStep;
use ferrotape_autodiff::{optim, Tensor, Variable};
use pyo3::prelude::*;

use crate::convert::to_tensor;
use crate::errors::{type_error, value_error, Raise};
use crate::tensor::compute;
use crate::variable::PyVariable;

fn variables(objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Variable>> {
    objs.iter()
        .map(|o| {
            o.cast::<PyVariable>()
                .map(|v| v.get().var.clone())
                .map_err(|_| type_error("optimizers.apply: expected ferrotape Variables"))
        })
        .collect()
}

fn same_length(what: &str, n: usize, expected: usize) -> PyResult<()> {
    if n != expected {
        return Err(value_error(format!(
            "optimizers.apply: received {n} {what} for {expected} variables"
        )));
    }
    Ok(())
}

/// Applies step `step` (counted from 1) of `rule` ("sgd", "adam", "rmsprop", "adagrad") with
/// `learning_rate` and the rule's `hyperparameters` (Keras's argument names; flags as bools)
/// to every variable, from its gradient and its slot variables.
#[pyfunction]
#[pyo3(signature = (rule, learning_rate, step, hyperparameters, variables_, grads, slots))]
#[allow(clippy::too_many_arguments)]
fn apply(
    py: Python<'_>,
    rule: &str,
    learning_rate: f64,
    step: u64,
    hyperparameters: HashMap<String, f64>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    slots: Vec<Vec<Bound<'_, PyAny>>>,
) -> PyResult<()> {
    let optimizer_step = OptimizerStep::new(rule, learning_rate, step, |name| {
        hyperparameters.get(name).copied()
    })
    .raise()?;
    let params = variables(&variables_)?;
    same_length("gradients", grads.len(), params.len())?;
    same_length("slot lists", slots.len(), params.len())?;
    let grads = grads
        .iter()
        .zip(&params)
        .map(|(g, v)| to_tensor(g, Some(v.dtype())))
        .collect::<PyResult<Vec<Tensor>>>()?;
    let slots = slots
        .iter()
        .map(|s| variables(s))
        .collect::<PyResult<Vec<_>>>()?;
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || {
        for ((p, g), s) in params.iter().zip(&grads).zip(&slots) {
            optim::apply_optimizer_step(&optimizer_step, p, s, g)?;
        }
        Ok(())
    })
    .raise()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    Ok(())
}
