//! `ferrotape._core.keras`: the computing cores of Keras's layers (`ferrotape-keras`). The
//! Python layer classes (`ferrotape.keras.layers`) create the variables with `add_weight` and
//! hand them here once built; each call is then one Rust call.

use ferrotape_autodiff::core::kernels::{Conv2dParams, Padding};
use ferrotape_autodiff::{Tensor, Variable};
use ferrotape_keras as layers;
use ferrotape_keras::Activation;
use pyo3::prelude::*;

use crate::convert::{to_tensor, Flag, Text};
use crate::errors::{type_error, Raise};
use crate::tensor::{compute, wrap, PyTensor};
use crate::variable::{remember_owner, PyVariable};

/// The variable behind a Python `ft.Variable` (remembering the Python object for the tape).
fn variable(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Variable> {
    let v = obj
        .cast::<PyVariable>()
        .map_err(|_| type_error(format!("{what} must be a ferrotape Variable")))?;
    remember_owner(v);
    Ok(v.get().var.clone())
}

fn optional_variable(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Variable>> {
    obj.filter(|o| !o.is_none())
        .map(|o| variable(o, what))
        .transpose()
}

fn conv_params(
    strides: [usize; 2],
    dilation_rate: [usize; 2],
    padding: &str,
) -> PyResult<Conv2dParams> {
    Ok(Conv2dParams {
        stride: strides,
        dilation: dilation_rate,
        padding: Padding::parse("Conv2D", padding).raise()?,
    })
}

/// Runs a layer's call with the GIL released when the input is large.
fn run(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    call: impl Fn(&Tensor) -> ferrotape_autodiff::Result<Tensor> + Sync,
) -> PyResult<PyTensor> {
    let x = to_tensor(inputs, None)?;
    wrap(compute(py, x.len(), || call(&x)))
}

#[pyclass(name = "Dense", module = "ferrotape._core.keras", frozen)]
struct PyDense(layers::Dense);

#[pymethods]
impl PyDense {
    #[new]
    #[pyo3(signature = (kernel, bias=None, activation=None))]
    fn new(
        kernel: &Bound<'_, PyAny>,
        bias: Option<&Bound<'_, PyAny>>,
        activation: Option<&str>,
    ) -> PyResult<Self> {
        Ok(PyDense(layers::Dense {
            kernel: variable(kernel, "Dense: kernel")?,
            bias: optional_variable(bias, "Dense: bias")?,
            activation: Activation::parse(activation).raise()?,
        }))
    }

    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x))
    }
}

#[pyclass(name = "Conv2D", module = "ferrotape._core.keras", frozen)]
struct PyConv2D(layers::Conv2D);

#[pymethods]
impl PyConv2D {
    #[new]
    #[pyo3(signature = (kernel, bias, strides, dilation_rate, padding, activation=None))]
    fn new(
        kernel: &Bound<'_, PyAny>,
        bias: Option<&Bound<'_, PyAny>>,
        strides: [usize; 2],
        dilation_rate: [usize; 2],
        padding: Text,
        activation: Option<&str>,
    ) -> PyResult<Self> {
        Ok(PyConv2D(layers::Conv2D {
            kernel: variable(kernel, "Conv2D: kernel")?,
            bias: optional_variable(bias, "Conv2D: bias")?,
            params: conv_params(strides, dilation_rate, &padding.0)?,
            activation: Activation::parse(activation).raise()?,
        }))
    }

    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x))
    }
}

#[pyclass(name = "DepthwiseConv2D", module = "ferrotape._core.keras", frozen)]
struct PyDepthwiseConv2D(layers::DepthwiseConv2D);

#[pymethods]
impl PyDepthwiseConv2D {
    #[new]
    #[pyo3(signature = (kernel, bias, strides, dilation_rate, padding, activation=None))]
    fn new(
        kernel: &Bound<'_, PyAny>,
        bias: Option<&Bound<'_, PyAny>>,
        strides: [usize; 2],
        dilation_rate: [usize; 2],
        padding: Text,
        activation: Option<&str>,
    ) -> PyResult<Self> {
        Ok(PyDepthwiseConv2D(layers::DepthwiseConv2D {
            kernel: variable(kernel, "DepthwiseConv2D: kernel")?,
            bias: optional_variable(bias, "DepthwiseConv2D: bias")?,
            params: conv_params(strides, dilation_rate, &padding.0)?,
            activation: Activation::parse(activation).raise()?,
        }))
    }

    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x))
    }
}

#[pyclass(name = "BatchNormalization", module = "ferrotape._core.keras", frozen)]
struct PyBatchNormalization(layers::BatchNormalization);

#[pymethods]
impl PyBatchNormalization {
    #[new]
    #[pyo3(signature = (gamma, beta, moving_mean, moving_variance, axis, momentum, epsilon))]
    fn new(
        gamma: Option<&Bound<'_, PyAny>>,
        beta: Option<&Bound<'_, PyAny>>,
        moving_mean: &Bound<'_, PyAny>,
        moving_variance: &Bound<'_, PyAny>,
        axis: i64,
        momentum: f64,
        epsilon: f64,
    ) -> PyResult<Self> {
        Ok(PyBatchNormalization(layers::BatchNormalization {
            gamma: optional_variable(gamma, "BatchNormalization: gamma")?,
            beta: optional_variable(beta, "BatchNormalization: beta")?,
            moving_mean: variable(moving_mean, "BatchNormalization: moving_mean")?,
            moving_variance: variable(moving_variance, "BatchNormalization: moving_variance")?,
            axis,
            momentum,
            epsilon,
        }))
    }

    #[pyo3(signature = (inputs, training=Flag(false)))]
    fn __call__(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        training: Flag,
    ) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x, training.0))
    }
}

#[pyclass(name = "LayerNormalization", module = "ferrotape._core.keras", frozen)]
struct PyLayerNormalization(layers::LayerNormalization);

#[pymethods]
impl PyLayerNormalization {
    #[new]
    #[pyo3(signature = (gamma, beta, axes, epsilon))]
    fn new(
        gamma: Option<&Bound<'_, PyAny>>,
        beta: Option<&Bound<'_, PyAny>>,
        axes: Vec<i64>,
        epsilon: f64,
    ) -> PyResult<Self> {
        Ok(PyLayerNormalization(layers::LayerNormalization {
            gamma: optional_variable(gamma, "LayerNormalization: gamma")?,
            beta: optional_variable(beta, "LayerNormalization: beta")?,
            axes,
            epsilon,
        }))
    }

    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x))
    }
}

#[pyclass(name = "Dropout", module = "ferrotape._core.keras", frozen)]
struct PyDropout(layers::Dropout);

#[pymethods]
impl PyDropout {
    #[new]
    #[pyo3(signature = (rate, seed, noise_shape=None))]
    fn new(rate: f64, seed: u64, noise_shape: Option<Vec<Option<usize>>>) -> PyResult<Self> {
        Ok(PyDropout(
            layers::Dropout::new(rate, noise_shape, seed).raise()?,
        ))
    }

    #[pyo3(signature = (inputs, training=Flag(false)))]
    fn __call__(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        training: Flag,
    ) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x, training.0))
    }
}

#[pyclass(name = "Embedding", module = "ferrotape._core.keras", frozen)]
struct PyEmbedding(layers::Embedding);

#[pymethods]
impl PyEmbedding {
    #[new]
    fn new(embeddings: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyEmbedding(layers::Embedding {
            embeddings: variable(embeddings, "Embedding: embeddings")?,
        }))
    }

    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        run(py, inputs, |x| self.0.call(x))
    }
}

/// Applies a named activation (the names `Activation` layers and `activation=` accept).
#[pyfunction]
fn activation(py: Python<'_>, name: &str, inputs: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
    let act = Activation::parse(Some(name)).raise()?;
    run(py, inputs, |x| act.apply(x))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDense>()?;
    m.add_class::<PyConv2D>()?;
    m.add_class::<PyDepthwiseConv2D>()?;
    m.add_class::<PyBatchNormalization>()?;
    m.add_class::<PyLayerNormalization>()?;
    m.add_class::<PyDropout>()?;
    m.add_class::<PyEmbedding>()?;
    m.add_function(wrap_pyfunction!(activation, m)?)?;
    Ok(())
}
