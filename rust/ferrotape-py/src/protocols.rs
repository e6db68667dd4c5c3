//! Python's object protocols for tensors, variables and dtypes, as TensorFlow answers them:
//! `copy`/`deepcopy`, pickling, `ref()`/`deref()`, and numpy's `__array__` contract.
//!
//! - A tensor is immutable: `copy` and `deepcopy` return it; it pickles as its values and dtype.
//! - A variable is shared state: `copy` returns it, `deepcopy` and pickling make a new variable
//!   with the same value, name and trainability.
//! - `np.asarray(t)` is a read-only view of the tensor's buffer, not a copy, when the tensor is
//!   contiguous (TensorFlow does the same); the view keeps the buffer alive. A variable's view
//!   holds a snapshot of its value: an update after `np.asarray(v)` copies the buffer first
//!   (copy on write), so the view never changes under the reader.
//! - DLPack goes both ways without a copy where the layout allows: `__dlpack__` exports through
//!   numpy's exporter, and `share_numpy` makes a tensor over the array numpy imports.

use std::sync::Arc;

use ferrotape_autodiff::core::{Array, Buffer, DType, Element, ForeignOwner, Storage};
use ferrotape_autodiff::Tensor;
use ferrotape_py_macros::op_errors;
use half::{bf16, f16};
use numpy::ndarray::{ArrayView, IxDyn};
use numpy::{PyArray, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyTuple};

use crate::convert::to_numpy;
use crate::dtype::PyDType;
use crate::errors::{value_error, Raise};
use crate::tensor::{PyTensor, TensorLike};
use crate::variable::PyVariable;

/// A numpy view of `a`'s buffer kept alive by `owner` (read-only unless `writable`), or `None`
/// when the layout or dtype needs a copy (a strided view, bfloat16, which numpy lacks).
fn numpy_view<'py>(
    a: &Array,
    owner: Bound<'py, PyAny>,
    writable: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    fn view<'py, T: numpy::Element + Element>(
        a: &Array,
        owner: Bound<'py, PyAny>,
        writable: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(values) = a.contiguous_slice::<T>() else {
            return Ok(None);
        };
        let shaped = ArrayView::from_shape(IxDyn(a.shape()), values)
            .map_err(|e| value_error(format!("__array__: {e}")))?;
        // SAFETY: `owner` holds a `Tensor` whose `Array` shares (and so keeps alive, unchanged)
        // the buffer `values` points into: tensors are immutable, and a variable updates a
        // shared buffer by copying it first. A `writable` view (for a DLPack consumer older
        // than 1.0, which cannot be told it is read-only) relies on the consumer not writing
        // through it, as DLPack asks: a write would change memory Rust reads as `&[T]`, and
        // could put a byte other than 0 or 1 in a bool.
        let array = unsafe { PyArray::borrow_from_array(&shaped, owner) };
        if !writable {
            let flags = [("write", false)].into_py_dict(array.py())?;
            array.call_method("setflags", (), Some(&flags))?;
        }
        Ok(Some(array.into_any()))
    }
    match a.dtype() {
        DType::F16 => view::<f16>(a, owner, writable),
        DType::F32 => view::<f32>(a, owner, writable),
        DType::F64 => view::<f64>(a, owner, writable),
        DType::I32 => view::<i32>(a, owner, writable),
        DType::I64 => view::<i64>(a, owner, writable),
        DType::Bool => view::<bool>(a, owner, writable),
        DType::U8 => view::<u8>(a, owner, writable),
        DType::U16 => view::<u16>(a, owner, writable),
        // bfloat16, and the dtypes stored in their twin's type: copied (see `to_numpy`).
        _ => Ok(None),
    }
}

/// numpy 2's `__array__(dtype, copy)`: `copy=True` always copies, `copy=False` never does
/// (ValueError when it would have to), `None` copies only when it must.
fn array_protocol<'py>(
    py: Python<'py>,
    tensor: Tensor,
    dtype: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::function::note_value_read(py, &tensor, "__array__ (numpy conversion)");
    let dtype = dtype.filter(|d| !d.is_none());
    let owner = Bound::new(py, PyTensor::new(tensor.clone()))?.into_any();
    let view = if copy == Some(true) {
        None
    } else {
        numpy_view(tensor.value(), owner, false)?
    };
    let array = match view {
        Some(view) => view,
        None if copy == Some(false) => {
            return Err(value_error(format!(
                "__array__: a {} tensor of this layout cannot be shared with numpy without a \
                 copy; pass copy=None or copy=True",
                tensor.dtype()
            )))
        }
        None => to_numpy(py, tensor.value())?,
    };
    let Some(dtype) = dtype else {
        return Ok(array);
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item("copy", copy != Some(false))?;
    let converted = array.call_method("astype", (dtype,), Some(&kwargs))?;
    if copy == Some(false) && !converted.is(&array) {
        return Err(value_error(
            "__array__: converting to another dtype needs a copy; pass copy=None or copy=True",
        ));
    }
    Ok(converted)
}

/// DLPack's `__dlpack__`: the tensor's memory handed to another library without a copy (through
/// numpy's exporter). A consumer of DLPack 1.0 or newer gets it marked read-only; an older one
/// (which cannot be told) gets it writable, as TensorFlow hands it out: writing through it
/// would change an immutable tensor, so consumers must not.
fn dlpack<'py>(
    py: Python<'py>,
    tensor: Tensor,
    max_version: Option<&Bound<'py, PyAny>>,
    dl_device: Option<&Bound<'py, PyAny>>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let max_version = max_version.filter(|v| !v.is_none());
    let versioned = match max_version {
        Some(v) => v.get_item(0)?.extract::<u32>()? >= 1,
        None => false,
    };
    let owner = Bound::new(py, PyTensor::new(tensor.clone()))?.into_any();
    let array = match copy {
        Some(true) => to_numpy(py, tensor.value())?,
        _ => match numpy_view(tensor.value(), owner, !versioned)? {
            Some(view) => view,
            None if copy == Some(false) => {
                return Err(value_error(format!(
                    "__dlpack__: a {} tensor of this layout cannot be shared without a copy",
                    tensor.dtype()
                )))
            }
            None => to_numpy(py, tensor.value())?,
        },
    };
    let kwargs = PyDict::new(py);
    if let Some(v) = max_version {
        kwargs.set_item("max_version", v)?;
    }
    if let Some(d) = dl_device.filter(|d| !d.is_none()) {
        kwargs.set_item("dl_device", d)?;
    }
    array.call_method("__dlpack__", (), Some(&kwargs))
}

/// A tensor over a numpy array's memory, without a copy: DLPack's import side (numpy consumes
/// the capsule, and the tensor keeps the numpy array, and so the capsule's owner, alive).
/// `None`, for the caller to copy, where the memory cannot be lent as it is: a layout that is
/// not C-contiguous, misaligned memory, bool (numpy does not promise bytes of 0 or 1, which
/// Rust's bool requires) and the dtypes ferrotape lacks.
///
/// Args:
///     array: A numpy array (typically from `np.from_dlpack`).
///
/// Returns:
///     A `Tensor` sharing the array's memory, or `None` where it would need a copy.
///
/// For example:
///
/// ```python
/// >>> import numpy as np
/// >>> from ferrotape import _core
/// >>> _core.share_numpy(np.arange(3.0)).numpy().tolist()
/// [0.0, 1.0, 2.0]
/// ```
#[op_errors]
#[pyfunction]
pub fn share_numpy(array: &Bound<'_, PyAny>) -> PyResult<Option<PyTensor>> {
    /// Lends the elements of `array`, read as numpy's `N`, as ferrotape's `T` of the same bits.
    fn lend<N: numpy::Element, T: Element>(
        array: &Bound<'_, PyAny>,
        wrap: fn(Storage<T>) -> Buffer,
    ) -> PyResult<Option<Array>> {
        const { assert!(std::mem::size_of::<N>() == std::mem::size_of::<T>()) };
        let Ok(typed) = array.cast::<PyArrayDyn<N>>() else {
            return Ok(None);
        };
        let len = typed.len();
        let ptr = typed.data().cast::<T>();
        if !typed.is_c_contiguous() || !ptr.is_aligned() {
            return Ok(None);
        }
        // An empty array's pointer may dangle (numpy allows any): lend nothing, copy nothing.
        let storage = match std::ptr::NonNull::new(ptr).filter(|_| len > 0) {
            // SAFETY: the array is C-contiguous with `len` elements at the aligned `ptr`, each
            // `N`'s bits being a valid `T` (same size; the pairs below are the same type, or
            // bfloat16 seen as numpy's uint16), and the owner holds a reference to the array,
            // which keeps its memory (numpy's, or the DLPack producer's behind it) alive.
            // The lender's later writes show through (`Storage`'s design note); one made while
            // an op reads the memory (ops run without the GIL) would be a data race, which the
            // lender must avoid, as with TensorFlow's DLPack import.
            Some(ptr) => unsafe {
                let owner: ForeignOwner = Arc::new(typed.clone().into_any().unbind());
                Storage::lent(ptr, len, owner)
            },
            None => Vec::new().into(),
        };
        Array::from_buffer(wrap(storage), typed.shape())
            .raise()
            .map(Some)
    }
    let kind: String = array.getattr("dtype")?.getattr("name")?.extract()?;
    let shared = match kind.as_str() {
        "float32" => lend::<f32, f32>(array, Buffer::F32)?,
        "float64" => lend::<f64, f64>(array, Buffer::F64)?,
        "float16" => lend::<f16, f16>(array, Buffer::F16)?,
        "int32" => lend::<i32, i32>(array, Buffer::I32)?,
        "int64" => lend::<i64, i64>(array, Buffer::I64)?,
        "uint8" => lend::<u8, u8>(array, Buffer::U8)?,
        "uint16" => lend::<u16, u16>(array, Buffer::U16)?,
        // The others are stored in their twin's type (see `DType::twin`): lent through numpy's
        // view of the same bits as that type, which keeps the original alive.
        "int8" => lend::<u8, u8>(&array.call_method1("view", ("uint8",))?, Buffer::I8)?,
        "int16" => lend::<u16, u16>(&array.call_method1("view", ("uint16",))?, Buffer::I16)?,
        "uint32" => lend::<i32, i32>(&array.call_method1("view", ("int32",))?, Buffer::U32)?,
        "uint64" => lend::<i64, i64>(&array.call_method1("view", ("int64",))?, Buffer::U64)?,
        // ml_dtypes' bfloat16 has our bits; numpy's uint16 view keeps the original alive.
        "bfloat16" => lend::<u16, bf16>(&array.call_method1("view", ("uint16",))?, Buffer::BF16)?,
        _ => None,
    };
    Ok(shared.map(|a| PyTensor::new(crate::convert::host_constant(a))))
}

/// What `ref()` returns: a hashable handle comparing by identity, as TensorFlow's
/// `Reference` (tensors themselves are not hashable by value).
#[pyclass(name = "Reference", module = "ferrotape._core", frozen)]
pub struct PyReference {
    wrapped: Py<PyAny>,
}

#[pymethods]
impl PyReference {
    #[new]
    fn new(wrapped: &Bound<'_, PyAny>) -> PyReference {
        reference(wrapped)
    }

    /// Copies and pickles as a reference to the copy of what it wraps, so that dictionaries
    /// keyed by references (an optimizer's, say) survive `deepcopy` and pickling.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let wrapped = slf.get().wrapped.bind(py).clone();
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [wrapped])?.into_any(),
            ],
        )
    }

    /// The tensor or variable this reference wraps.
    fn deref(&self, py: Python<'_>) -> Py<PyAny> {
        self.wrapped.clone_ref(py)
    }

    fn __hash__(&self) -> isize {
        self.wrapped.as_ptr() as isize
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyReference>()
            .is_ok_and(|o| o.get().wrapped.is(&self.wrapped))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<Reference wrapping {}>",
            self.wrapped.bind(py).repr()?
        ))
    }
}

fn reference(obj: &Bound<'_, PyAny>) -> PyReference {
    PyReference {
        wrapped: obj.clone().unbind(),
    }
}

#[pymethods]
impl PyTensor {
    /// DLPack export (`torch.from_dlpack(t)`, `np.from_dlpack(t)`): no copy where the
    /// layout allows.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = stream; // CPU memory: there is no stream to synchronise with.
        dlpack(
            slf.py(),
            PyTensor::operand(slf),
            max_version,
            dl_device,
            copy,
        )
    }

    /// DLPack's device of the memory: the CPU (`kDLCPU`, device 0).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        array_protocol(slf.py(), PyTensor::operand(slf), dtype, copy)
    }

    /// A hashable reference to this tensor (`deref()` gives it back).
    #[pyo3(name = "ref")]
    fn reference(slf: &Bound<'_, Self>) -> PyReference {
        reference(slf.as_any())
    }

    fn __copy__(slf: &Bound<'_, Self>) -> Py<Self> {
        slf.clone().unbind()
    }

    fn __deepcopy__(slf: &Bound<'_, Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf.clone().unbind()
    }

    /// Pickles as `ferrotape.constant(values, dtype)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let tensor = &slf.get().tensor;
        let constant = py.import("ferrotape._core")?.getattr("constant")?;
        let values = to_numpy(py, tensor.value())?;
        let dtype = Bound::new(py, PyDType(tensor.dtype()))?;
        PyTuple::new(
            py,
            [
                constant,
                PyTuple::new(py, [values, dtype.into_any()])?.into_any(),
            ],
        )
    }
}

/// A new variable with `var`'s current value, name and trainability.
fn variable_rebuilder<'py>(slf: &Bound<'py, PyVariable>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let var = &slf.get().var;
    let kwargs = PyDict::new(py);
    kwargs.set_item("initial_value", to_numpy(py, &var.snapshot())?)?;
    kwargs.set_item("dtype", Bound::new(py, PyDType(var.dtype()))?)?;
    kwargs.set_item("name", var.name())?;
    kwargs.set_item("trainable", var.trainable())?;
    let partial = py.import("functools")?.getattr("partial")?;
    partial.call((slf.get_type(),), Some(&kwargs))
}

#[pymethods]
impl PyVariable {
    /// DLPack export (`torch.from_dlpack(t)`, `np.from_dlpack(t)`): no copy where the
    /// layout allows.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = stream; // CPU memory: there is no stream to synchronise with.
        dlpack(slf.py(), slf.get().var.read(), max_version, dl_device, copy)
    }

    /// DLPack's device of the memory: the CPU (`kDLCPU`, device 0).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    /// A read-only view of the variable's current value (later updates do not show in it).
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        array_protocol(slf.py(), slf.get().var.read(), dtype, copy)
    }

    /// A hashable reference to this variable (`deref()` gives it back).
    #[pyo3(name = "ref")]
    fn reference(slf: &Bound<'_, Self>) -> PyReference {
        reference(slf.as_any())
    }

    /// The same variable: `copy.copy` shares state, as TensorFlow's does.
    fn __copy__(slf: &Bound<'_, Self>) -> Py<Self> {
        slf.clone().unbind()
    }

    /// A new variable with the same value, name and trainability.
    fn __deepcopy__<'py>(
        slf: &Bound<'py, Self>,
        _memo: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        variable_rebuilder(slf)?.call0()
    }

    /// Pickles as a new variable with the same value, name and trainability.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        PyTuple::new(
            py,
            [variable_rebuilder(slf)?, PyTuple::empty(py).into_any()],
        )
    }
}

#[pymethods]
impl PyDType {
    /// Pickles as `ferrotape.DType(name)`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let name = slf.get().0.to_string();
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [name])?.into_any(),
            ],
        )
    }

    fn __copy__(slf: &Bound<'_, Self>) -> Py<Self> {
        slf.clone().unbind()
    }

    fn __deepcopy__(slf: &Bound<'_, Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf.clone().unbind()
    }
}
