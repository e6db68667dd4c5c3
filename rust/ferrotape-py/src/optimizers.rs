//! `ferrotape._core.optimizers`: `apply` runs one optimizer rule (the only copy of each:
//! `ferrotape_core::kernels::optim`) on a list of variables in one call. Conversion only: the
//! rule's name and hyperparameters are read, and checked, by `OptimizerStep::new`.

use std::collections::HashMap;

use ferrotape_autodiff::core::kernels::OptimizerStep;
use ferrotape_autodiff::{optim, trace, Tensor, Variable};
use ferrotape_py_macros::op_errors;
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

/// A number given either as a Python number or as a variable read when the step runs (so that
/// a step traced by `ft.function` reads the current learning rate and iteration count).
#[derive(Clone)]
enum Scalar {
    Value(f64),
    Read(Variable),
}

impl Scalar {
    fn of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Scalar> {
        if let Ok(v) = obj.cast::<PyVariable>() {
            return Ok(Scalar::Read(v.get().var.clone()));
        }
        obj.extract::<f64>().map(Scalar::Value).map_err(|_| {
            type_error(format!(
                "optimizers.apply: `{what}` must be a number or a Variable, received {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })
    }

    fn get(&self) -> f64 {
        match self {
            Scalar::Value(v) => *v,
            Scalar::Read(var) => var.snapshot().scalar_f64().unwrap_or(f64::NAN),
        }
    }
}

/// Applies step `step` (counted from 1) of `rule` ("sgd", "adam", "rmsprop", "adagrad") with
/// `learning_rate` and the rule's `hyperparameters` (Keras's argument names; flags as bools)
/// to every variable, from its gradient and its slot variables. `learning_rate` may be a
/// variable (read when the step runs), and `step` the optimizer's `iterations` variable (the
/// step is then its value plus one, read when the step runs). With `weight_decay`, each
/// variable whose entry of `decays` is true first decays (`w -= w·weight_decay·lr`, Keras's
/// decoupled weight decay).
#[op_errors]
#[pyfunction]
#[pyo3(signature = (
    rule, learning_rate, step, hyperparameters, variables_, grads, slots, weight_decay=None,
    decays=None
))]
#[allow(clippy::too_many_arguments)]
fn apply(
    py: Python<'_>,
    rule: &str,
    learning_rate: &Bound<'_, PyAny>,
    step: &Bound<'_, PyAny>,
    hyperparameters: HashMap<String, f64>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    slots: Vec<Vec<Bound<'_, PyAny>>>,
    weight_decay: Option<f64>,
    decays: Option<Vec<bool>>,
) -> PyResult<()> {
    let learning_rate = Scalar::of(learning_rate, "learning_rate")?;
    let step = match Scalar::of(step, "step")? {
        Scalar::Read(iterations) => StepSource::AfterIterations(iterations),
        Scalar::Value(v) => StepSource::Given(v as u64),
    };
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
    // The weight decay of each variable (None: it does not decay).
    let decays: Vec<Option<f64>> = match (weight_decay, decays) {
        (None, _) => vec![None; params.len()],
        (Some(rate), None) => vec![Some(rate); params.len()],
        (Some(rate), Some(flags)) => {
            same_length("weight-decay flags", flags.len(), params.len())?;
            flags.into_iter().map(|d| d.then_some(rate)).collect()
        }
    };
    let rule = rule.to_string();
    let run = move |grads: &[Tensor]| -> ferrotape_autodiff::Result<()> {
        let learning_rate = learning_rate.get();
        let optimizer_step = OptimizerStep::new(&rule, learning_rate, step.get(), |name| {
            hyperparameters.get(name).copied()
        })?;
        for (((p, g), s), decay) in params.iter().zip(grads).zip(&slots).zip(&decays) {
            if let Some(rate) = *decay {
                optim::decay_weights(p, rate, learning_rate)?;
            }
            optim::apply_optimizer_step(&optimizer_step, p, s, g)?;
        }
        Ok(())
    };
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || run(&grads)).raise()?;
    let refs: Vec<&Tensor> = grads.iter().collect();
    trace::effect("OptimizerStep", &refs, move || run);
    Ok(())
}

/// Updates each of `averages` towards its variable in `variables` (Keras's `use_ema`):
/// `average = m·average + (1 - m)·variable`, where `m` is `ema_momentum`, or 0 while the
/// optimizer's `iterations` variable is 0 (the first step copies the variables). `iterations`
/// is read when the update runs, so a traced step replays it with the current count.
#[op_errors]
#[pyfunction]
fn update_moving_averages(
    py: Python<'_>,
    averages: Vec<Bound<'_, PyAny>>,
    variables_: Vec<Bound<'_, PyAny>>,
    iterations: &Bound<'_, PyAny>,
    ema_momentum: f64,
) -> PyResult<()> {
    let averages = variables(&averages)?;
    let values = variables(&variables_)?;
    same_length("moving averages", averages.len(), values.len())?;
    let iterations = match Scalar::of(iterations, "iterations")? {
        Scalar::Read(v) => v,
        Scalar::Value(_) => {
            return Err(type_error(
                "optimizers.update_moving_averages: `iterations` must be a Variable",
            ))
        }
    };
    let work = values.iter().map(|v| v.snapshot().len()).sum();
    let run = move |_: &[Tensor]| -> ferrotape_autodiff::Result<()> {
        let first = iterations.snapshot().scalar_f64().unwrap_or(0.0) == 0.0;
        let momentum = if first { 0.0 } else { ema_momentum };
        for (average, value) in averages.iter().zip(&values) {
            optim::update_moving_average(average, value, momentum)?;
        }
        Ok(())
    };
    compute(py, work, || run(&[])).raise()?;
    trace::effect("UpdateMovingAverages", &[], move || run);
    Ok(())
}

/// Where a step's number comes from.
#[derive(Clone)]
enum StepSource {
    Given(u64),
    AfterIterations(Variable),
}

impl StepSource {
    fn get(&self) -> u64 {
        match self {
            StepSource::Given(s) => *s,
            StepSource::AfterIterations(v) => v.snapshot().scalar_f64().unwrap_or(0.0) as u64 + 1,
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    m.add_function(wrap_pyfunction!(update_moving_averages, m)?)?;
    Ok(())
}
