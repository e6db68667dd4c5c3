//! `ft.Tensor`, and the methods it shares with `ft.Variable`: conversion to numpy, shape and
//! dtype, Python operators, indexing and iteration. Operators convert a non-tensor operand to
//! the tensor's dtype first, as TensorFlow's operator overloads do.

use ferrotape_autodiff::core::kernels::{CompareOp, LogicalOp};
use ferrotape_autodiff::core::threads;
use ferrotape_autodiff::ops::{self, AxisSlice};
use ferrotape_autodiff::{DType, Error, Result, Tensor};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyEllipsis, PyInt, PySlice, PyTuple};

use crate::convert::{as_tensor, int_of, numpy_value, to_tensor};
use crate::dtype::{optional_dtype, PyDType};
use crate::errors::{self, Raise};

/// Work (elements) above which a kernel runs with the GIL released. Below it the kernel takes
/// well under a microsecond and releasing would only add overhead to the tape's hot path.
pub const DETACH_THRESHOLD: usize = 16 * 1024;

/// Runs the op `f`, releasing the GIL when `work` is large enough to matter to other threads;
/// such an op can be stopped by Ctrl-C (see `interrupts`).
pub fn compute<T: Send>(
    py: Python<'_>,
    work: usize,
    f: impl Fn() -> Result<T> + Sync,
) -> Result<T> {
    // Between ops the pool's other threads poll for the next one instead of sleeping
    // (`threads::around_op`); even a small op may split its work (a product with a long inner
    // axis), so every op tells them it starts.
    let parallel = work >= ferrotape_autodiff::core::kernels::PARALLEL_THRESHOLD;
    threads::around_op(parallel, || {
        if work >= DETACH_THRESHOLD {
            crate::interrupts::run(py, &f)
        } else {
            f()
        }
    })
}

/// An immutable n-dimensional array of one dtype (`tf.Tensor`). Operators (`+ - * / // % **
/// @`, comparisons, `-t`, `abs(t)`) and indexing (`t[0]`, `t[:, 1:]`, `t[..., None]`) are
/// recorded on active gradient tapes like the functions they stand for; `numpy()` gives the
/// values, `shape` and `dtype` describe them.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> t = ft.constant([[1.0, 2.0], [3.0, 4.0]])
/// >>> t.shape, t.dtype
/// (TensorShape([2, 2]), tf.float32)
/// >>> (t[:, 1] * 2).numpy()
/// array([4., 8.], dtype=float32)
///
/// Args:
///     value: The values: a nested list, number, NumPy array or tensor.
///     dtype: The dtype (a `DType`, name or NumPy dtype); by default TensorFlow's rules.
// `dict`: Keras attaches a layer's output mask to the tensor as `_keras_mask`, as it does to
// TensorFlow's eager tensors; the dict is made only when an attribute is first set.
#[pyclass(name = "Tensor", module = "ferrotape", frozen, dict)]
pub struct PyTensor {
    pub tensor: Tensor,
}

impl PyTensor {
    pub fn new(tensor: Tensor) -> PyTensor {
        PyTensor { tensor }
    }
}

/// Wraps an op result for Python.
pub fn wrap(r: Result<Tensor>) -> PyResult<PyTensor> {
    r.map(PyTensor::new).raise()
}

/// What the shared methods need from Tensor and Variable.
pub trait TensorLike {
    /// The current value as a tensor (reading a variable is recorded on active tapes).
    fn operand(slf: &Bound<'_, Self>) -> Tensor
    where
        Self: Sized;

    /// Where the value lives (read without recording anything).
    fn placed(slf: &Bound<'_, Self>) -> ferrotape_core::Device
    where
        Self: Sized,
    {
        Self::operand(slf).value().device()
    }
}

impl TensorLike for PyTensor {
    fn operand(slf: &Bound<'_, Self>) -> Tensor {
        slf.get().tensor.clone()
    }
}

/// The `ft.TensorShape` class (defined in Python).
fn tensor_shape_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let cls = CLASS.get_or_try_init(py, || {
        py.import("ferrotape.tensor_shape")?
            .getattr("TensorShape")
            .map(Bound::unbind)
    })?;
    Ok(cls.bind(py))
}

/// `ft.TensorShape` (defined in Python) for a shape.
pub fn tensor_shape<'py>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    tensor_shape_class(py)?.call1((PyTuple::new(py, shape)?,))
}

/// Whether the binding class `C` is `Tensor` (not `Variable`, whose shape never changes).
fn is_tensor_class<C: 'static>() -> bool {
    std::any::TypeId::of::<C>() == std::any::TypeId::of::<PyTensor>()
}

/// Notes a Python read of `t`'s shape in the trace being recorded (see
/// `trace::shape_read`); a variable's shape never changes, so reading it is not noted.
pub fn note_shape_read<C: 'static>(py: Python<'_>, t: &Tensor) {
    if is_tensor_class::<C>() {
        ferrotape_autodiff::trace::shape_read(t, || {
            crate::function::python_line(py).unwrap_or_default()
        });
    }
}

/// `t.shape` for Python: a `TensorShape`, with `None` for the sizes a trace hides (see
/// `trace::host_shape`); the sizes seen are noted as read (not a variable's, which never
/// change).
pub fn host_shape<'py, C: 'static>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    if !is_tensor_class::<C>() || !ferrotape_autodiff::trace::is_tracing() {
        return tensor_shape(py, t.shape());
    }
    let dims = ferrotape_autodiff::trace::host_shape(t, || {
        crate::function::python_line(py).unwrap_or_default()
    });
    if dims.iter().all(Option::is_some) {
        let dims: Vec<usize> = dims.into_iter().flatten().collect();
        return tensor_shape(py, &dims);
    }
    tensor_shape_class(py)?.call1((dims.into_iter().collect::<Vec<Option<usize>>>(),))
}

/// The other operand of a binary operator, converted to `like`'s dtype if it is not a tensor.
pub fn other_operand(like: &Tensor, other: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    match as_tensor(other) {
        Some(t) => Ok(t),
        None => crate::convert::value_to_tensor(other, like.dtype()),
    }
}

pub fn binary(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    reflected: bool,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> PyResult<PyTensor> {
    let b = other_operand(a, other)?;
    let (x, y) = if reflected { (&b, a) } else { (a, &b) };
    let work = x.len().max(y.len());
    wrap(compute(py, work, || f(x, y)))
}

/// `a <op> other` for the forward operators, as TensorFlow's operator wrapper does it: when
/// `other` does not convert to a tensor but its type has the reflected method (a Keras
/// symbolic tensor's `__rmul__`), that method answers; if it cannot either, the conversion
/// error stands.
pub fn forward(
    slf: &Bound<'_, PyAny>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    reflected: &str,
    f: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    let err = match binary(py, a, other, false, f) {
        Ok(t) => return Ok(Bound::new(py, t)?.into_any().unbind()),
        Err(err) => err,
    };
    let answers = as_tensor(other).is_none() && other.get_type().hasattr(reflected)?;
    if answers
        && (err.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
            || err.is_instance_of::<pyo3::exceptions::PyValueError>(py))
    {
        match other.call_method1(reflected, (slf,)) {
            Ok(r) if !r.is(py.NotImplemented().bind(py)) => return Ok(r.unbind()),
            Ok(_) => {}
            Err(e)
                if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
                    || e.is_instance_of::<pyo3::exceptions::PyValueError>(py) => {}
            Err(e) => return Err(e),
        }
    }
    Err(err)
}

/// `/`: integers are divided as float64, as TensorFlow's `truediv` does.
pub fn truediv(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_int() && b.dtype() == a.dtype() {
        return ops::div(&ops::cast(a, DType::F64)?, &ops::cast(b, DType::F64)?);
    }
    ops::div(a, b)
}

fn compare_fn(op: CompareOp) -> impl Fn(&Tensor, &Tensor) -> Result<Tensor> {
    move |a, b| ops::compare(op, a, b)
}

pub fn comparison(a: &Tensor, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<PyTensor> {
    let b = other_operand(a, other)?;
    wrap(compare_fn(op)(a, &b))
}

/// `==` and `!=`: element-wise, but False/True (not an error) for None or shapes that cannot
/// broadcast, like TensorFlow's `tensor_equals`.
pub fn equality(
    py: Python<'_>,
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    equal: bool,
) -> PyResult<Py<PyAny>> {
    let b = if other.is_none() {
        None
    } else {
        other_operand(a, other).ok()
    };
    let op = if equal {
        CompareOp::Equal
    } else {
        CompareOp::NotEqual
    };
    match b.map(|b| ops::compare(op, a, &b)) {
        Some(Ok(t)) => Ok(Py::new(py, PyTensor::new(t))?.into_any()),
        // Different dtypes are an error, as in TensorFlow; only unbroadcastable shapes compare
        // unequal.
        Some(Err(e @ Error::DType { .. })) => Err(crate::errors::to_py(e)),
        _ => Ok(pyo3::types::PyBool::new(py, !equal)
            .to_owned()
            .into_any()
            .unbind()),
    }
}

pub fn logical(
    a: &Tensor,
    other: &Bound<'_, PyAny>,
    op: LogicalOp,
    reflected: bool,
) -> PyResult<PyTensor> {
    let b = other_operand(a, other)?;
    let (x, y) = if reflected { (&b, a) } else { (a, &b) };
    Ok(PyTensor::new(ops::logical(op, x, y).raise()?))
}

fn index_axis(op: &'static str, i: i64, d: usize) -> Result<usize> {
    let j = if i < 0 { i + d as i64 } else { i };
    if j < 0 || j >= d as i64 {
        return Err(Error::out_of_range(
            op,
            format!("slice index {i} of dimension of size {d} out of bounds"),
        ));
    }
    Ok(j as usize)
}

/// Lowers a Python index (ints, slices, None, Ellipsis, scalar int tensors) to a slice spec.
pub fn parse_index(shape: &[usize], index: &Bound<'_, PyAny>) -> PyResult<Vec<AxisSlice>> {
    const OP: &str = "StridedSlice";
    let items: Vec<Bound<'_, PyAny>> = match index.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![index.clone()],
    };
    let consumes = |x: &Bound<'_, PyAny>| !(x.is_none() || x.is_instance_of::<PyEllipsis>());
    let used = items.iter().filter(|x| consumes(x)).count();
    if used > shape.len() {
        return Err(crate::errors::to_py(Error::invalid(
            OP,
            format!(
                "too many indices: {used} for a tensor of rank {}",
                shape.len()
            ),
        )));
    }
    // A whole axis (`:`, or one `...` or the end leaves): resolved at every replay of a trace.
    let full = |_: usize| AxisSlice::All;
    let mut spec = Vec::with_capacity(shape.len() + 1);
    let mut axis = 0;
    let mut saw_ellipsis = false;
    for item in &items {
        if item.is_none() {
            spec.push(AxisSlice::NewAxis);
        } else if item.is_instance_of::<PyEllipsis>() {
            if saw_ellipsis {
                return Err(errors::invalid_argument(
                    OP,
                    "an index can only have a single ellipsis ('...')",
                ));
            }
            saw_ellipsis = true;
            for _ in 0..shape.len() - used {
                spec.push(full(shape[axis]));
                axis += 1;
            }
        } else if let Ok(s) = item.cast::<PySlice>() {
            let open = |name: &str| s.getattr(name).map(|v| v.is_none());
            if open("start")? && open("stop")? && open("step")? {
                spec.push(AxisSlice::All);
                axis += 1;
                continue;
            }
            let ind = s.indices(shape[axis] as isize)?;
            let len = ind.slicelength;
            let begin = if len == 0 { 0 } else { ind.start as usize };
            spec.push(AxisSlice::Range {
                begin,
                len,
                step: ind.step,
            });
            axis += 1;
        } else if item.is_instance_of::<pyo3::types::PyBool>() {
            // TensorFlow reads a bool as a mask, and a mask cannot be a scalar.
            return Err(errors::value_error(
                "a bool is not a valid tensor index (a mask cannot be scalar)",
            ));
        } else if item.is_instance_of::<PyInt>()
            || as_tensor(item).is_some()
            || item.hasattr("__index__")?
        {
            let i = int_of(item).map_err(|_| {
                errors::type_error(
                    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 tensors are valid indices",
                )
            })?;
            spec.push(AxisSlice::Index(index_axis(OP, i, shape[axis]).raise()?));
            axis += 1;
        } else {
            return Err(errors::type_error(format!(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 tensors are valid indices, got {}",
                item.repr()?
            )));
        }
    }
    while axis < shape.len() {
        spec.push(full(shape[axis]));
        axis += 1;
    }
    Ok(spec)
}

/// The numpy text TensorFlow shows for a value: `str` of the array or scalar.
pub fn value_text(py: Python<'_>, t: &Tensor, repr: bool) -> PyResult<String> {
    let v = numpy_value(py, t.value())?;
    if repr {
        // TensorFlow's repr shows scalars as the Python value's repr (full precision).
        let shown = if t.rank() == 0 {
            v.call_method0("item")?
        } else {
            v
        };
        return shown.repr()?.extract();
    }
    v.str()?.extract()
}

/// Python methods shared by `Tensor` and `Variable`.
/// Iterating a tensor: its rows along the first axis, each made when asked for (`t[i]`, so a
/// gradient flows into the row), as TensorFlow iterates; building them all up front would cost
/// the whole tensor's size before the first row.
#[pyclass(module = "ferrotape", frozen)]
pub struct TensorRows {
    tensor: Tensor,
    next: std::sync::atomic::AtomicUsize,
}

impl TensorRows {
    pub fn new(tensor: Tensor) -> TensorRows {
        TensorRows {
            tensor,
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

#[pymethods]
impl TensorRows {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__(&self) -> PyResult<Option<PyTensor>> {
        let row = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if row >= self.tensor.shape()[0] {
            return Ok(None);
        }
        let shape = self.tensor.shape();
        let rest = shape[1..].iter().map(|&len| AxisSlice::Range {
            begin: 0,
            len,
            step: 1,
        });
        let spec: Vec<AxisSlice> = std::iter::once(AxisSlice::Index(row)).chain(rest).collect();
        wrap(ops::strided_slice(&self.tensor, &spec)).map(Some)
    }

    fn __length_hint__(&self) -> usize {
        let done = self.next.load(std::sync::atomic::Ordering::Relaxed);
        self.tensor.shape()[0].saturating_sub(done)
    }
}

macro_rules! tensor_methods {
    ($cls:ident, $pyname:literal) => {
        #[pymethods]
        impl $cls {
            /// Makes numpy defer to our reflected operators (`ndarray * tensor` stays a tensor).
            #[classattr]
            #[pyo3(name = "__array_priority__")]
            const ARRAY_PRIORITY: i32 = 100;

            /// The value as a numpy array (a numpy scalar for rank 0).
            fn numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                let t = $cls::operand(slf);
                $crate::function::note_value_read(slf.py(), &t, "numpy()");
                numpy_value(slf.py(), t.value())
            }

            /// The shape, a `TensorShape` (`t.shape[0]`, `t.shape.as_list()`).
            #[getter(shape)]
            fn shape_getter<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                let t = $cls::operand(slf);
                $crate::tensor::host_shape::<$cls>(slf.py(), &t)
            }

            /// The shape, a `TensorShape` (the same as `shape`).
            fn get_shape<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                Self::shape_getter(slf)
            }

            /// The element type, a `DType`.
            #[getter]
            fn dtype(slf: &Bound<'_, Self>) -> PyDType {
                PyDType($cls::operand(slf).dtype())
            }

            /// The number of axes (the rank).
            #[getter]
            fn ndim(slf: &Bound<'_, Self>) -> usize {
                $cls::operand(slf).rank()
            }

            /// The device holding the value, named as TensorFlow names it.
            #[getter]
            fn device(slf: &Bound<'_, Self>) -> String {
                $cls::placed(slf).tf_name()
            }

            fn __len__(slf: &Bound<'_, Self>) -> PyResult<usize> {
                let t = $cls::operand(slf);
                $crate::tensor::note_shape_read::<$cls>(slf.py(), &t);
                if t.rank() == 0 {
                    return Err($crate::errors::type_error("len is not well defined for a rank-0 tensor"));
                }
                Ok(t.shape()[0])
            }

            fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                let t = $cls::operand(slf);
                $crate::tensor::note_shape_read::<$cls>(slf.py(), &t);
                if t.rank() == 0 {
                    return Err($crate::errors::type_error("Cannot iterate over a scalar tensor."));
                }
                let rows = $crate::tensor::TensorRows::new(t);
                Ok(Bound::new(slf.py(), rows)?.into_any())
            }

            #[::ferrotape_py_macros::op_errors("strided_slice")]
            fn __getitem__(slf: &Bound<'_, Self>, index: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let t = $cls::operand(slf);
                let spec = parse_index(t.shape(), index)?;
                wrap(ops::strided_slice(&t, &spec))
            }

            fn __float__(slf: &Bound<'_, Self>) -> PyResult<f64> {
                let t = $cls::operand(slf);
                $crate::function::note_value_read(slf.py(), &t, "float() or int()");
                t.value().scalar_f64().ok_or_else(|| {
                    $crate::errors::type_error(format!("only a tensor of one element converts to float, received shape {:?}", t.shape()))
                })
            }

            fn __int__(slf: &Bound<'_, Self>) -> PyResult<i64> {
                Ok(Self::__float__(slf)?.trunc() as i64)
            }

            fn __index__(slf: &Bound<'_, Self>) -> PyResult<i64> {
                let t = $cls::operand(slf);
                if !t.dtype().is_int() || t.rank() != 0 {
                    return Err($crate::errors::type_error("only integer scalar tensors can be used as an index"));
                }
                Self::__int__(slf)
            }

            fn __bool__(slf: &Bound<'_, Self>) -> PyResult<bool> {
                let t = $cls::operand(slf);
                // A Python `if`/`while` on a tensor: the branch taken would be baked in.
                $crate::function::note_value_read(slf.py(), &t, "a Python `if` or `while` (bool())");
                match t.value().scalar_f64() {
                    Some(v) => Ok(v != 0.0),
                    None => Err($crate::errors::value_error(
                        "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()",
                    )),
                }
            }

            fn __format__(slf: &Bound<'_, Self>, spec: &str) -> PyResult<String> {
                Self::numpy(slf)?.call_method1("__format__", (spec,))?.extract()
            }

            fn __hash__(&self) -> PyResult<isize> {
                Err($crate::errors::type_error(concat!($pyname, " is unhashable. Instead, use id() as the key.")))
            }

            #[::ferrotape_py_macros::op_errors("add")]
            fn __add__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__radd__", ops::add) }
            #[::ferrotape_py_macros::op_errors("add")]
            fn __radd__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, ops::add) }
            #[::ferrotape_py_macros::op_errors("subtract")]
            fn __sub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rsub__", ops::sub) }
            #[::ferrotape_py_macros::op_errors("subtract")]
            fn __rsub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, ops::sub) }
            #[::ferrotape_py_macros::op_errors("multiply")]
            fn __mul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rmul__", ops::mul) }
            #[::ferrotape_py_macros::op_errors("multiply")]
            fn __rmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, ops::mul) }
            #[::ferrotape_py_macros::op_errors("truediv")]
            fn __truediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rtruediv__", truediv) }
            #[::ferrotape_py_macros::op_errors("truediv")]
            fn __rtruediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, truediv) }
            #[::ferrotape_py_macros::op_errors("floordiv")]
            fn __floordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rfloordiv__", ops::floordiv) }
            #[::ferrotape_py_macros::op_errors("floordiv")]
            fn __rfloordiv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, ops::floordiv) }
            #[::ferrotape_py_macros::op_errors("floormod")]
            fn __mod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rmod__", ops::floormod) }
            #[::ferrotape_py_macros::op_errors("floormod")]
            fn __rmod__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, ops::floormod) }
            #[::ferrotape_py_macros::op_errors("pow")]
            fn __pow__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                let _ = modulo;
                forward(slf.as_any(), &$cls::operand(slf), o, "__rpow__", ops::pow)
            }
            #[::ferrotape_py_macros::op_errors("pow")]
            fn __rpow__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let _ = modulo;
                binary(slf.py(), &$cls::operand(slf), o, true, ops::pow)
            }
            #[::ferrotape_py_macros::op_errors("matmul")]
            fn __matmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { forward(slf.as_any(), &$cls::operand(slf), o, "__rmatmul__", |a, b| ops::matmul(a, b, false, false)) }
            #[::ferrotape_py_macros::op_errors("matmul")]
            fn __rmatmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { binary(slf.py(), &$cls::operand(slf), o, true, |a, b| ops::matmul(a, b, false, false)) }
            #[::ferrotape_py_macros::op_errors("negative")]
            fn __neg__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> { wrap(ops::neg(&$cls::operand(slf))) }
            fn __pos__(slf: &Bound<'_, Self>) -> PyTensor { PyTensor::new($cls::operand(slf)) }
            #[::ferrotape_py_macros::op_errors("abs")]
            fn __abs__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> { wrap(ops::abs(&$cls::operand(slf))) }
            #[::ferrotape_py_macros::op_errors("logical_not")]
            fn __invert__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> {
                Ok(PyTensor::new(ops::logical_not(&$cls::operand(slf)).raise()?))
            }
            #[::ferrotape_py_macros::op_errors("logical_and")]
            fn __and__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::And, false) }
            #[::ferrotape_py_macros::op_errors("logical_and")]
            fn __rand__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::And, true) }
            #[::ferrotape_py_macros::op_errors("logical_or")]
            fn __or__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::Or, false) }
            #[::ferrotape_py_macros::op_errors("logical_or")]
            fn __ror__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::Or, true) }
            #[::ferrotape_py_macros::op_errors("logical_xor")]
            fn __xor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::Xor, false) }
            #[::ferrotape_py_macros::op_errors("logical_xor")]
            fn __rxor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { logical(&$cls::operand(slf), o, LogicalOp::Xor, true) }
            #[::ferrotape_py_macros::op_errors("less")]
            fn __lt__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { comparison(&$cls::operand(slf), o, CompareOp::Less) }
            #[::ferrotape_py_macros::op_errors("less_equal")]
            fn __le__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { comparison(&$cls::operand(slf), o, CompareOp::LessEqual) }
            #[::ferrotape_py_macros::op_errors("greater")]
            fn __gt__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { comparison(&$cls::operand(slf), o, CompareOp::Greater) }
            #[::ferrotape_py_macros::op_errors("greater_equal")]
            fn __ge__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<PyTensor> { comparison(&$cls::operand(slf), o, CompareOp::GreaterEqual) }
            #[::ferrotape_py_macros::op_errors("equal")]
            fn __eq__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { equality(slf.py(), &$cls::operand(slf), o, true) }
            #[::ferrotape_py_macros::op_errors("not_equal")]
            fn __ne__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> { equality(slf.py(), &$cls::operand(slf), o, false) }
        }
    };
}

pub(crate) use tensor_methods;

tensor_methods!(PyTensor, "Tensor");

#[pymethods]
impl PyTensor {
    #[new]
    #[pyo3(signature = (value, dtype=None))]
    fn py_new(value: &Bound<'_, PyAny>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Ok(PyTensor::new(to_tensor(value, optional_dtype(dtype)?)?))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let t = &self.tensor;
        Ok(format!(
            "<tf.Tensor: shape={}, dtype={}, numpy={}>",
            tensor_shape(py, t.shape())?.str()?,
            t.dtype().name(),
            value_text(py, t, true)?
        ))
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        let t = &self.tensor;
        let text = value_text(py, t, false)?;
        let sep = if text.contains('\n') { "\n" } else { "" };
        Ok(format!(
            "tf.Tensor({sep}{text}, shape={}, dtype={})",
            tensor_shape(py, t.shape())?.str()?,
            t.dtype().name()
        ))
    }

    /// A process-unique id (what the tape keys gradients by); for debugging.
    #[getter]
    fn _id(&self) -> u64 {
        self.tensor.id()
    }
}
