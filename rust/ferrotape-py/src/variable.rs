//! `ft.Variable`: a mutable, named value that tapes watch automatically when trainable.

use ferrotape_autodiff::core::kernels::{CompareOp, LogicalOp};
use ferrotape_autodiff::{ops, trace};
use ferrotape_autodiff::{Tensor, Variable};
use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;

use crate::convert::{numpy_value, to_tensor, Flag};
use crate::dtype::{optional_dtype, PyDType};
use crate::errors::{self, Raise};
use crate::tensor::{
    binary, comparison, equality, forward, logical, parse_index, tensor_methods, tensor_shape,
    truediv, value_text, wrap, PyTensor, TensorLike,
};

/// A mutable tensor (`tf.Variable(initial_value, trainable=True, name=None, dtype=None)`):
/// `assign`, `assign_add` and `assign_sub` change it in place; reading it in an op is recorded,
/// and a gradient tape watches a trainable variable when it is read.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> v = ft.Variable([1.0, 2.0])
/// >>> _ = v.assign_add([1.0, 1.0])
/// >>> v.numpy()
/// array([2., 3.], dtype=float32)
///
/// Args:
///     initial_value: The initial value (required), or a callable returning it.
///     trainable: Whether gradient tapes watch it (default True).
///     validate_shape: Ignored (the shape is always the initial value's).
///     caching_device: Ignored (TensorFlow's device placement).
///     name: The variable's name (default `"Variable"`).
///     variable_def: Ignored (graph-mode only).
///     dtype: The dtype the initial value is converted to.
///     import_scope: Ignored (graph-mode only).
///     constraint: Must be None (not supported yet: apply a constraint after each update).
///     synchronization: Ignored (distribution strategies).
///     aggregation: Ignored (distribution strategies).
///     shape: Ignored (the shape is the initial value's).
///     experimental_enable_variable_lifting: Ignored (graph-mode only).
#[pyclass(name = "Variable", module = "ferrotape", frozen, weakref)]
pub struct PyVariable {
    pub var: Variable,
}

/// Remembers the Python object of a variable (weakly), so the tape can hand back the user's
/// own objects from `watched_variables()`.
pub fn remember_owner(slf: &Bound<'_, PyVariable>) {
    let var = &slf.get().var;
    if var.owner().is_none() {
        if let Ok(weak) = PyWeakrefReference::new(slf) {
            var.set_owner(Box::new(weak.unbind()));
        }
    }
}

/// The Python object of a variable, if it is still alive.
pub fn owner_of<'py>(py: Python<'py>, var: &Variable) -> Option<Bound<'py, PyAny>> {
    let weak = var.owner()?.downcast_ref::<Py<PyWeakrefReference>>()?;
    use pyo3::types::PyWeakrefMethods;
    weak.bind(py).upgrade()
}

impl TensorLike for PyVariable {
    fn operand(slf: &Bound<'_, Self>) -> Tensor {
        remember_owner(slf);
        slf.get().var.read()
    }

    fn placed(slf: &Bound<'_, Self>) -> ferrotape_core::Device {
        slf.get().var.device()
    }
}

tensor_methods!(PyVariable, "Variable");

fn update(
    slf: &Bound<'_, PyVariable>,
    value: &Bound<'_, PyAny>,
    subtract: Option<bool>,
) -> PyResult<()> {
    let var = &slf.get().var;
    let v = to_tensor(value, Some(var.dtype())).or_else(|_| to_tensor(value, None))?;
    let write = move |var: &Variable, v: &Tensor| match subtract {
        None => var.assign(v.value()),
        Some(s) => var.assign_update(v.value(), s),
    };
    write(var, &v).raise()?;
    trace::effect("AssignVariableOp", &[&v], || {
        let var = var.clone();
        move |t: &[Tensor]| write(&var, &t[0])
    });
    Ok(())
}

#[pymethods]
impl PyVariable {
    #[new]
    #[pyo3(signature = (initial_value=None, trainable=None, validate_shape=Flag(true), caching_device=None,
        name=None, variable_def=None, dtype=None, import_scope=None, constraint=None,
        synchronization=None, aggregation=None, shape=None, experimental_enable_variable_lifting=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        initial_value: Option<&Bound<'_, PyAny>>,
        trainable: Option<Flag>,
        validate_shape: Flag,
        caching_device: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
        variable_def: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        import_scope: Option<&Bound<'_, PyAny>>,
        constraint: Option<&Bound<'_, PyAny>>,
        synchronization: Option<&Bound<'_, PyAny>>,
        aggregation: Option<&Bound<'_, PyAny>>,
        shape: Option<&Bound<'_, PyAny>>,
        experimental_enable_variable_lifting: Option<Flag>,
    ) -> PyResult<Self> {
        let _ = (
            validate_shape,
            caching_device,
            variable_def,
            import_scope,
            synchronization,
            aggregation,
            shape,
        );
        let _ = experimental_enable_variable_lifting;
        if constraint.is_some_and(|c| !c.is_none()) {
            return Err(errors::unimplemented(
                "Variable",
                "constraint is not supported yet; apply it after each update instead",
            ));
        }
        let init = initial_value
            .ok_or_else(|| errors::value_error("Variable: initial_value must be specified."))?;
        // Keras initializers hand over a callable.
        let init = if init.is_callable() && !init.is_instance_of::<PyTensor>() {
            init.call0()?
        } else {
            init.clone()
        };
        let value = to_tensor(&init, optional_dtype(dtype)?)?;
        let name = name.unwrap_or_else(|| "Variable".to_string());
        trace::variable_created();
        Ok(PyVariable {
            var: Variable::new(
                value.value().contiguous(),
                trainable.is_none_or(|f| f.0),
                name,
            ),
        })
    }

    /// The variable's name with TensorFlow's output suffix (`"Variable:0"`).
    #[getter]
    fn name(&self) -> String {
        format!("{}:0", self.var.name())
    }

    /// Whether gradient tapes watch the variable when it is read.
    #[getter]
    fn trainable(&self) -> bool {
        self.var.trainable()
    }

    /// Assigns `value` (same shape and dtype) in place and returns the variable.
    ///
    /// Args:
    ///     value: The new value, of the variable's shape; converted to its dtype.
    ///     use_locking: Ignored (TensorFlow's locking hint).
    ///     name: Ignored (TensorFlow's op name).
    ///     read_value: Ignored: the variable is always returned.
    ///
    /// Returns:
    ///     The variable itself.
    #[pyo3(signature = (value, use_locking=None, name=None, read_value=Flag(true)))]
    fn assign<'py>(
        slf: &Bound<'py, Self>,
        value: &Bound<'py, PyAny>,
        use_locking: Option<Flag>,
        name: Option<String>,
        read_value: Flag,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        update(slf, value, None)?;
        Ok(slf.clone())
    }

    /// `self += delta` in place; returns the variable.
    ///
    /// Args:
    ///     delta: The amount to add, of the variable's shape; converted to its dtype.
    ///     use_locking: Ignored (TensorFlow's locking hint).
    ///     name: Ignored (TensorFlow's op name).
    ///     read_value: Ignored: the variable is always returned.
    ///
    /// Returns:
    ///     The variable itself.
    #[pyo3(signature = (delta, use_locking=None, name=None, read_value=Flag(true)))]
    fn assign_add<'py>(
        slf: &Bound<'py, Self>,
        delta: &Bound<'py, PyAny>,
        use_locking: Option<Flag>,
        name: Option<String>,
        read_value: Flag,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        update(slf, delta, Some(false))?;
        Ok(slf.clone())
    }

    /// `self -= delta` in place; returns the variable.
    ///
    /// Args:
    ///     delta: The amount to subtract, of the variable's shape; converted to its dtype.
    ///     use_locking: Ignored (TensorFlow's locking hint).
    ///     name: Ignored (TensorFlow's op name).
    ///     read_value: Ignored: the variable is always returned.
    ///
    /// Returns:
    ///     The variable itself.
    #[pyo3(signature = (delta, use_locking=None, name=None, read_value=Flag(true)))]
    fn assign_sub<'py>(
        slf: &Bound<'py, Self>,
        delta: &Bound<'py, PyAny>,
        use_locking: Option<Flag>,
        name: Option<String>,
        read_value: Flag,
    ) -> PyResult<Bound<'py, Self>> {
        let _ = (use_locking, name, read_value);
        update(slf, delta, Some(true))?;
        Ok(slf.clone())
    }

    /// The current value as a tensor (recorded on active tapes).
    fn read_value(slf: &Bound<'_, Self>) -> PyTensor {
        PyTensor::new(PyVariable::operand(slf))
    }

    /// The current value as a tensor (the same as `read_value`).
    fn value(slf: &Bound<'_, Self>) -> PyTensor {
        PyTensor::new(PyVariable::operand(slf))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let t = Tensor::new(self.var.snapshot());
        Ok(format!(
            "<tf.Variable '{}' shape={} dtype={}, numpy={}>",
            self.name(),
            tensor_shape(py, t.shape())?.str()?,
            t.dtype().name(),
            value_text(py, &t, true)?
        ))
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.__repr__(py)
    }

    /// A process-unique id (what gradients with respect to this variable are keyed by).
    #[getter]
    fn _id(&self) -> u64 {
        self.var.id()
    }

    /// Whether reads follow Keras's autocast scope (`add_weight(autocast=True)` sets it): in a
    /// mixed-precision layer's call they come out in the layer's compute dtype.
    #[getter]
    fn _autocast(&self) -> bool {
        self.var.autocast()
    }

    #[setter(_autocast)]
    fn set_autocast(&self, autocast: bool) {
        self.var.set_autocast(autocast);
    }
}
