//! The tape engine behind `ft.GradientTape` (the Python class adds nests, the `with` block
//! and TensorFlow's error behaviour), plus `custom_gradient`'s hooks.

use std::sync::Arc;

use ferrotape_autodiff::tape::{self, Source};
use ferrotape_autodiff::{Tape, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert::{as_tensor, to_tensor};
use crate::errors::{park, Raise};
use crate::tensor::PyTensor;
use crate::variable::{owner_of, remember_owner, PyVariable};

#[pyclass(name = "Tape", module = "ferrotape._core", frozen)]
pub struct PyTape {
    tape: Arc<Tape>,
}

fn source_of(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(v) = obj.cast::<PyVariable>() {
        remember_owner(v);
        return Ok(Source::of_variable(&v.get().var));
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Source::of_tensor(&t.get().tensor));
    }
    Err(PyTypeError::new_err(format!(
        "gradient sources must be Tensors or Variables, received {}",
        obj.get_type().name()?
    )))
}

fn targets_of(objs: &[Bound<'_, PyAny>]) -> PyResult<Vec<Tensor>> {
    objs.iter().map(|o| to_tensor(o, None)).collect()
}

fn wrap_all(grads: Vec<Option<Tensor>>) -> Vec<Option<PyTensor>> {
    grads.into_iter().map(|g| g.map(PyTensor::new)).collect()
}

#[pymethods]
impl PyTape {
    #[new]
    fn py_new(persistent: bool, watch_accessed_variables: bool) -> Self {
        PyTape {
            tape: Tape::new(persistent, watch_accessed_variables),
        }
    }

    fn push(&self) {
        self.tape.push();
    }

    fn pop(&self) -> bool {
        self.tape.pop()
    }

    fn set_paused(&self, paused: bool) -> bool {
        self.tape.set_paused(paused)
    }

    /// Watches a tensor or variable; returns false for a non-float tensor (not watchable).
    fn watch(&self, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Ok(v) = obj.cast::<PyVariable>() {
            remember_owner(v);
            self.tape.watch_variable(&v.get().var);
            return Ok(true);
        }
        match as_tensor(obj) {
            Some(t) => Ok(self.tape.watch_tensor(&t)),
            None => Err(PyTypeError::new_err(format!(
                "watch() expects Tensors or Variables, received {}",
                obj.get_type().name()?
            ))),
        }
    }

    fn reset(&self) {
        self.tape.reset();
    }

    fn watched_variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let vars: Vec<Bound<'py, PyAny>> = self
            .tape
            .watched_variables()
            .iter()
            .map(|v| match owner_of(py, v) {
                Some(obj) => Ok(obj),
                None => Ok(Bound::new(py, PyVariable { var: v.clone() })?.into_any()),
            })
            .collect::<PyResult<_>>()?;
        PyTuple::new(py, vars)
    }

    /// Flat gradient: `targets` and `sources` are lists; returns a list aligned with sources.
    #[pyo3(signature = (targets, sources, output_gradients=None))]
    fn gradient(
        &self,
        py: Python<'_>,
        targets: Vec<Bound<'_, PyAny>>,
        sources: Vec<Bound<'_, PyAny>>,
        output_gradients: Option<Vec<Option<Bound<'_, PyAny>>>>,
    ) -> PyResult<Vec<Option<PyTensor>>> {
        let targets = targets_of(&targets)?;
        let sources = sources
            .iter()
            .map(source_of)
            .collect::<PyResult<Vec<_>>>()?;
        let seeds = match output_gradients {
            None => None,
            Some(gs) => Some(
                gs.iter()
                    .zip(&targets)
                    .map(|(g, t)| match g {
                        Some(g) if !g.is_none() => {
                            to_tensor(g, Some(t.dtype())).or_else(|_| to_tensor(g, None))
                        }
                        _ => Ok(ferrotape_autodiff::ops::ones_like(t)),
                    })
                    .collect::<PyResult<Vec<_>>>()?,
            ),
        };
        let tape = &self.tape;
        let grads = py
            .detach(|| tape.gradient(&targets, &sources, seeds.as_deref()))
            .raise()?;
        Ok(wrap_all(grads))
    }

    fn jacobian(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        sources: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Option<PyTensor>>> {
        let target = to_tensor(target, None)?;
        let sources = sources
            .iter()
            .map(source_of)
            .collect::<PyResult<Vec<_>>>()?;
        let tape = &self.tape;
        Ok(wrap_all(
            py.detach(|| tape.jacobian(&target, &sources)).raise()?,
        ))
    }

    fn batch_jacobian(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        source: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        let target = to_tensor(target, None)?;
        let source = source_of(source)?;
        let tape = &self.tape;
        Ok(PyTensor::new(
            py.detach(|| tape.batch_jacobian(&target, &source))
                .raise()?,
        ))
    }
}

/// Starts collecting the variables read on this thread (for `custom_gradient`).
#[pyfunction]
fn push_variable_watcher() {
    tape::push_variable_watcher();
}

/// Stops collecting and returns the variables read since the matching push.
#[pyfunction]
fn pop_variable_watcher(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyAny>>> {
    tape::pop_variable_watcher()
        .iter()
        .map(|v| match owner_of(py, v) {
            Some(obj) => Ok(obj),
            None => Ok(Bound::new(py, PyVariable { var: v.clone() })?.into_any()),
        })
        .collect()
}

/// Records `outputs` as a function of `inputs` (tensors or variables) whose derivative is the
/// Python callable `backward(*output_grads) -> list of input grads`.
#[pyfunction]
fn record_custom_gradient(
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    backward: Py<PyAny>,
) -> PyResult<()> {
    let ids = inputs
        .iter()
        .map(|i| source_of(i).map(|s| s.id))
        .collect::<PyResult<Vec<_>>>()?;
    let outs = outputs
        .iter()
        .map(|o| to_tensor(o, None))
        .collect::<PyResult<Vec<_>>>()?;
    let n_inputs = ids.len();
    let refs: Vec<&Tensor> = outs.iter().collect();
    let backward_fn = move |grads: &[Tensor], _needs: &[bool]| {
        Python::attach(|py| {
            let args: Vec<PyTensor> = grads.iter().cloned().map(PyTensor::new).collect();
            let result = backward.bind(py).call1(PyTuple::new(py, args)?)?;
            let result: Vec<Bound<'_, PyAny>> = result.extract()?;
            if result.len() != n_inputs {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "custom_gradient function expected to return {n_inputs} gradients, but returned {} instead",
                    result.len()
                )));
            }
            result
                .iter()
                .map(|g| if g.is_none() { Ok(None) } else { to_tensor(g, None).map(Some) })
                .collect::<PyResult<Vec<_>>>()
        })
        .map_err(park)
    };
    tape::record_custom("CustomGradient", &ids, &refs, Box::new(backward_fn));
    Ok(())
}

/// A new tensor with the same value as `x` and no recorded history.
#[pyfunction]
fn fresh_tensor(x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    Ok(PyTensor::new(Tensor::new(
        to_tensor(x, None)?.value().clone(),
    )))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTape>()?;
    m.add_function(wrap_pyfunction!(push_variable_watcher, m)?)?;
    m.add_function(wrap_pyfunction!(pop_variable_watcher, m)?)?;
    m.add_function(wrap_pyfunction!(record_custom_gradient, m)?)?;
    m.add_function(wrap_pyfunction!(fresh_tensor, m)?)?;
    Ok(())
}
