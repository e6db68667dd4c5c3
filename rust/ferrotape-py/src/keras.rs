//! `ferrotape._core.keras`: one generic binding for the native forms of Keras's layers
//! (`ferrotape-keras`). A Python layer makes its native form once built,
//! `NativeLayer("Dense", {"kernel": ..., "bias": ...})`, and calls it with its current
//! settings, `native(inputs, training, activation="relu")`, so that settings changed after
//! the build take effect (see `ferrotape_keras::layer`). `set_autocast_dtype` is Keras's
//! autocast scope, which a mixed-precision layer's call opens (see `ferrotape_autodiff`'s
//! `variable` module).

use ferrotape_keras::{Activation, NativeLayer, Setting, Settings, Weights};
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::convert::{to_tensor, Flag, Seed};
use crate::dtype::optional_dtype;
use crate::errors::{type_error, value_error, Raise};
use crate::tensor::{compute, wrap, PyTensor};
use crate::variable::{remember_owner, PyVariable};

/// A Keras layer's native form: its weights, and a call that takes the layer's settings.
#[pyclass(name = "NativeLayer", module = "ferrotape._core.keras", frozen)]
struct PyNativeLayer(NativeLayer);

/// `None`, a number, a string, or a tuple or list of ints and `None`.
fn setting(layer: &str, name: &str, value: &Bound<'_, PyAny>) -> PyResult<Setting> {
    if value.is_none() {
        return Ok(Setting::None);
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Setting::Text(s.to_str()?.to_owned()));
    }
    if value.is_instance_of::<PyTuple>() || value.is_instance_of::<PyList>() {
        return value
            .try_iter()?
            .map(|item| {
                let item = item?;
                if item.is_none() {
                    Ok(None)
                } else {
                    item.extract::<i64>().map(Some).map_err(|_| {
                        type_error(format!(
                            "{layer}: `{name}` must hold ints or None, received {item}"
                        ))
                    })
                }
            })
            .collect::<PyResult<_>>()
            .map(Setting::Dims);
    }
    value.extract::<f64>().map(Setting::Number).map_err(|_| {
        type_error(format!(
            "{layer}: `{name}` must be None, a number, a string or a tuple, received {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })
}

#[pymethods]
impl PyNativeLayer {
    /// The native form of the Keras layer `class_name` over `weights` (name → Variable or
    /// None); `seed` seeds the layers that draw random numbers.
    #[new]
    #[pyo3(signature = (class_name, weights, seed=Seed(0)))]
    fn new(class_name: &str, weights: &Bound<'_, PyDict>, seed: Seed) -> PyResult<Self> {
        let mut native = Weights::new();
        for (name, value) in weights.iter() {
            let name: String = name.extract()?;
            let variable = if value.is_none() {
                None
            } else {
                let v = value.cast::<PyVariable>().map_err(|_| {
                    type_error(format!(
                        "{class_name}: the weight `{name}` must be a ferrotape Variable or None"
                    ))
                })?;
                remember_owner(v);
                Some(v.get().var.clone())
            };
            native.insert(&name, variable);
        }
        NativeLayer::new(class_name, native, seed.0)
            .map(PyNativeLayer)
            .raise()
    }

    /// Runs the layer on `inputs` with these settings (Keras's attribute names).
    #[pyo3(signature = (inputs, training=Flag(false), **settings))]
    fn __call__(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        training: Flag,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyTensor> {
        let layer = &self.0;
        let mut call_settings: Settings = layer.settings();
        for (name, value) in settings.into_iter().flat_map(|d| d.iter()) {
            let name: String = name.extract()?;
            call_settings.insert(&name, setting(layer.class_name(), &name, &value)?);
        }
        let x = to_tensor(inputs, None)?;
        wrap(compute(py, x.len(), || {
            layer.call(&x, training.0, &call_settings)
        }))
    }

    /// Keras's class name of this layer.
    #[getter]
    fn class_name(&self) -> &'static str {
        self.0.class_name()
    }
}

/// Sets this thread's autocast dtype (a floating dtype, or None to end autocasting) and
/// returns the previous one's name, for the layer's call to restore: while it is set, reads of
/// the variables marked `_autocast` come out cast to it.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (dtype, /))]
fn set_autocast_dtype(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Option<&'static str>> {
    let dtype = optional_dtype(dtype)?;
    if let Some(d) = dtype.filter(|d| !d.is_float()) {
        return Err(value_error(format!(
            "set_autocast_dtype: the autocast dtype must be a floating dtype such as \
             'float16', received {}",
            d.name()
        )));
    }
    Ok(ferrotape_autodiff::set_autocast_dtype(dtype).map(|d| d.name()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNativeLayer>()?;
    m.add_function(wrap_pyfunction!(set_autocast_dtype, m)?)?;
    // The one list of activations a native call applies itself; Python applies any other.
    let names: Vec<&str> = Activation::TABLE.iter().map(|(name, _)| *name).collect();
    m.add("FUSED_ACTIVATIONS", PyTuple::new(m.py(), names)?)?;
    let layers: Vec<&str> = NativeLayer::names().collect();
    m.add("NATIVE_LAYERS", PyTuple::new(m.py(), layers)?)?;
    Ok(())
}
