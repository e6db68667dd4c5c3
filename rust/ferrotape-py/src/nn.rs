//! `ft.nn`: activations, softmax and the cross-entropy losses.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::Tensor;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{binary_operands, to_tensor};
use crate::tensor::{compute, wrap, PyTensor};

macro_rules! activations {
    ($($name:ident => $f:expr),* $(,)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (features, name=None))]
            fn $name(py: Python<'_>, features: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let t = to_tensor(features, None)?;
                wrap(compute(py, t.len(), || ($f)(&t)))
            }
        )*
        fn register_activations(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

activations! {
    relu => ops::relu, relu6 => ops::relu6, elu => ops::elu, selu => ops::selu,
    softplus => ops::softplus,
}

#[pyfunction]
#[pyo3(signature = (features, alpha=0.2, name=None))]
fn leaky_relu(
    features: &Bound<'_, PyAny>,
    alpha: f64,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::leaky_relu(&to_tensor(features, None)?, alpha))
}

#[pyfunction]
#[pyo3(signature = (features, approximate=false, name=None))]
fn gelu(
    features: &Bound<'_, PyAny>,
    approximate: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::gelu(&to_tensor(features, None)?, approximate))
}

/// x·sigmoid(beta·x).
#[pyfunction]
#[pyo3(signature = (features, beta=1.0, name=None))]
fn silu(
    features: &Bound<'_, PyAny>,
    beta: f64,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(features, None)?;
    if beta == 1.0 {
        return wrap(ops::swish(&x));
    }
    wrap(ops::mul(&x, &x.scalar_like(beta)).and_then(|bx| ops::mul(&x, &ops::sigmoid(&bx)?)))
}

fn axis_or_last(axis: Option<i64>) -> i64 {
    axis.unwrap_or(-1)
}

#[pyfunction]
#[pyo3(signature = (logits, axis=None, name=None))]
fn softmax(
    py: Python<'_>,
    logits: &Bound<'_, PyAny>,
    axis: Option<i64>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(logits, None)?;
    wrap(compute(py, t.len(), || {
        ops::softmax(&t, axis_or_last(axis))
    }))
}

#[pyfunction]
#[pyo3(signature = (logits, axis=None, name=None))]
fn log_softmax(
    py: Python<'_>,
    logits: &Bound<'_, PyAny>,
    axis: Option<i64>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(logits, None)?;
    wrap(compute(py, t.len(), || {
        ops::log_softmax(&t, axis_or_last(axis))
    }))
}

fn required<'a, 'py>(
    arg: Option<&'a Bound<'py, PyAny>>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyAny>> {
    arg.filter(|a| !a.is_none())
        .ok_or_else(|| PyValueError::new_err(format!("{what} must be provided")))
}

#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, axis=-1, name=None))]
fn softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    axis: i64,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (z, x) = binary_operands(required(labels, "labels")?, required(logits, "logits")?)?;
    let x2 = x.clone();
    let z = if z.dtype() != x.dtype() {
        ops::cast(&z, x.dtype()).map_err(crate::errors::to_py)?
    } else {
        z
    };
    wrap(compute(py, x2.len(), || {
        ops::softmax_cross_entropy_with_logits(&z, &x2, axis)
    }))
}

#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, name=None))]
fn sparse_softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let z = to_tensor(required(labels, "labels")?, None)?;
    let x = to_tensor(required(logits, "logits")?, None)?;
    wrap(compute(py, x.len(), || {
        ops::sparse_softmax_cross_entropy_with_logits(&z, &x)
    }))
}

#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, name=None))]
fn sigmoid_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(required(logits, "logits")?, None)?;
    let z: Tensor = to_tensor(required(labels, "labels")?, Some(x.dtype()))
        .or_else(|_| to_tensor(required(labels, "labels")?, None))?;
    wrap(compute(py, x.len(), || {
        ops::sigmoid_cross_entropy_with_logits(&z, &x)
    }))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_activations(m)?;
    for f in [
        wrap_pyfunction!(leaky_relu, m)?,
        wrap_pyfunction!(gelu, m)?,
        wrap_pyfunction!(silu, m)?,
        wrap_pyfunction!(softmax, m)?,
        wrap_pyfunction!(log_softmax, m)?,
        wrap_pyfunction!(softmax_cross_entropy_with_logits, m)?,
        wrap_pyfunction!(sparse_softmax_cross_entropy_with_logits, m)?,
        wrap_pyfunction!(sigmoid_cross_entropy_with_logits, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
