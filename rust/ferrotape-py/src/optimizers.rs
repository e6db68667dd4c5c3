//! `ferrotape._core.optimizers`: one call per training step applies an optimizer's update to
//! every variable (fused per variable in Rust), instead of several Python-level ops each.

use ferrotape_autodiff::core::kernels::{AdagradStep, AdamStep, RmsPropStep, SgdStep};
use ferrotape_autodiff::{optim, Tensor, Variable};
use pyo3::prelude::*;

use crate::convert::to_tensor;
use crate::errors::{type_error, value_error, Raise};
use crate::tensor::compute;
use crate::variable::PyVariable;

fn variables(op: &str, objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Variable>> {
    objs.iter()
        .map(|o| {
            o.cast::<PyVariable>()
                .map(|v| v.get().var.clone())
                .map_err(|_| type_error(format!("{op}: expected ferrotape Variables")))
        })
        .collect()
}

fn gradients(op: &str, objs: &[Bound<'_, PyAny>], vars: &[Variable]) -> PyResult<Vec<Tensor>> {
    if objs.len() != vars.len() {
        return Err(value_error(format!(
            "{op}: received {} gradients for {} variables",
            objs.len(),
            vars.len()
        )));
    }
    objs.iter()
        .zip(vars)
        .map(|(g, v)| to_tensor(g, Some(v.dtype())))
        .collect()
}

fn same_length(op: &str, what: &str, n: usize, expected: usize) -> PyResult<()> {
    if n != expected {
        return Err(value_error(format!(
            "{op}: received {n} {what} for {expected} variables"
        )));
    }
    Ok(())
}

/// Adam on every variable: `alpha` already holds the bias corrections of this step.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn adam_update(
    py: Python<'_>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    first_moments: Vec<Bound<'_, PyAny>>,
    second_moments: Vec<Bound<'_, PyAny>>,
    alpha: f64,
    one_minus_beta_1: f64,
    one_minus_beta_2: f64,
    epsilon: f64,
) -> PyResult<()> {
    const OP: &str = "Adam";
    let params = variables(OP, &variables_)?;
    let grads = gradients(OP, &grads, &params)?;
    let ms = variables(OP, &first_moments)?;
    let vs = variables(OP, &second_moments)?;
    same_length(OP, "first moments", ms.len(), params.len())?;
    same_length(OP, "second moments", vs.len(), params.len())?;
    let step = AdamStep {
        alpha,
        one_minus_beta_1,
        one_minus_beta_2,
        epsilon,
    };
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || {
        for (((p, g), m), v) in params.iter().zip(&grads).zip(&ms).zip(&vs) {
            optim::adam_update(p, m, v, g, step)?;
        }
        Ok(())
    })
    .raise()
}

/// SGD on every variable; `velocities` is None without momentum.
#[pyfunction]
#[pyo3(signature = (variables_, grads, velocities, learning_rate, momentum, nesterov))]
fn sgd_update(
    py: Python<'_>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    velocities: Option<Vec<Bound<'_, PyAny>>>,
    learning_rate: f64,
    momentum: f64,
    nesterov: bool,
) -> PyResult<()> {
    const OP: &str = "SGD";
    let params = variables(OP, &variables_)?;
    let grads = gradients(OP, &grads, &params)?;
    let vels = velocities.map(|v| variables(OP, &v)).transpose()?;
    if let Some(v) = &vels {
        same_length(OP, "velocities", v.len(), params.len())?;
    }
    let step = SgdStep {
        learning_rate,
        momentum,
        nesterov,
    };
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || {
        for (i, (p, g)) in params.iter().zip(&grads).enumerate() {
            optim::sgd_update(p, vels.as_ref().map(|v| &v[i]), g, step)?;
        }
        Ok(())
    })
    .raise()
}

/// Uncentred RMSprop on every variable; `momenta` is None without momentum.
#[pyfunction]
#[pyo3(signature = (variables_, grads, velocities, momenta, learning_rate, rho, one_minus_rho, momentum, epsilon))]
#[allow(clippy::too_many_arguments)]
fn rmsprop_update(
    py: Python<'_>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    velocities: Vec<Bound<'_, PyAny>>,
    momenta: Option<Vec<Bound<'_, PyAny>>>,
    learning_rate: f64,
    rho: f64,
    one_minus_rho: f64,
    momentum: f64,
    epsilon: f64,
) -> PyResult<()> {
    const OP: &str = "RMSprop";
    let params = variables(OP, &variables_)?;
    let grads = gradients(OP, &grads, &params)?;
    let vs = variables(OP, &velocities)?;
    same_length(OP, "velocities", vs.len(), params.len())?;
    let ms = momenta.map(|m| variables(OP, &m)).transpose()?;
    if let Some(m) = &ms {
        same_length(OP, "momenta", m.len(), params.len())?;
    }
    let step = RmsPropStep {
        learning_rate,
        rho,
        one_minus_rho,
        momentum,
        epsilon,
    };
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || {
        for (i, ((p, g), v)) in params.iter().zip(&grads).zip(&vs).enumerate() {
            optim::rmsprop_update(p, v, ms.as_ref().map(|m| &m[i]), g, step)?;
        }
        Ok(())
    })
    .raise()
}

/// Adagrad on every variable.
#[pyfunction]
fn adagrad_update(
    py: Python<'_>,
    variables_: Vec<Bound<'_, PyAny>>,
    grads: Vec<Bound<'_, PyAny>>,
    accumulators: Vec<Bound<'_, PyAny>>,
    learning_rate: f64,
    epsilon: f64,
) -> PyResult<()> {
    const OP: &str = "Adagrad";
    let params = variables(OP, &variables_)?;
    let grads = gradients(OP, &grads, &params)?;
    let accs = variables(OP, &accumulators)?;
    same_length(OP, "accumulators", accs.len(), params.len())?;
    let step = AdagradStep {
        learning_rate,
        epsilon,
    };
    let work = grads.iter().map(Tensor::len).sum();
    compute(py, work, || {
        for ((p, g), a) in params.iter().zip(&grads).zip(&accs) {
            optim::adagrad_update(p, a, g, step)?;
        }
        Ok(())
    })
    .raise()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(adam_update, m)?)?;
    m.add_function(wrap_pyfunction!(sgd_update, m)?)?;
    m.add_function(wrap_pyfunction!(rmsprop_update, m)?)?;
    m.add_function(wrap_pyfunction!(adagrad_update, m)?)?;
    Ok(())
}
