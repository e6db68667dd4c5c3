//! The engine of `ft.autodiff.ForwardAccumulator`: conversions around
//! `ferrotape_autodiff::tape::Accumulator`. The Python class (`ferrotape/forwardprop.py`) adds
//! nests, TensorFlow's argument checks and the `with` block.

use std::sync::Arc;

use ferrotape_autodiff::tape::Accumulator;
use pyo3::prelude::*;

use crate::convert::to_tensor;
use crate::errors::Raise;
use crate::tape::source_of;
use crate::tensor::PyTensor;
use crate::variable::PyVariable;

/// Forward-mode tangents of the tensors computed while it is active (internal: use
/// `ft.autodiff.ForwardAccumulator`).
#[pyclass(name = "ForwardAccumulatorCore", module = "ferrotape", frozen)]
pub struct PyAccumulator {
    acc: Arc<Accumulator>,
}

#[pymethods]
impl PyAccumulator {
    #[new]
    fn py_new() -> Self {
        PyAccumulator {
            acc: Accumulator::new(),
        }
    }

    /// Gives `primal` (a tensor or variable) the tangent `tangent`; a second call sums them.
    fn watch(&self, primal: &Bound<'_, PyAny>, tangent: &Bound<'_, PyAny>) -> PyResult<()> {
        let tangent = to_tensor(tangent, None)?;
        match primal.cast::<PyVariable>() {
            Ok(v) => self.acc.watch_variable(&v.get().var, tangent),
            Err(_) => self.acc.watch_tensor(&to_tensor(primal, None)?, tangent),
        }
        .raise()
    }

    /// Starts computing tangents on this thread.
    fn push(&self) {
        self.acc.push();
    }

    /// Stops computing tangents; false if it was not active.
    fn pop(&self) -> bool {
        self.acc.pop()
    }

    /// The tangent of `primal` (a tensor or variable), or None if it has none.
    fn jvp(&self, primal: &Bound<'_, PyAny>) -> PyResult<Option<PyTensor>> {
        let id = source_of(primal)?.id;
        Ok(self.acc.jvp(id).raise()?.map(PyTensor::new))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAccumulator>()
}
