//! `ft.DType`: TensorFlow's dtype objects (`ft.float32`, ...), comparable with names and numpy
//! dtypes, plus the conversion of any dtype-like argument.

use ferrotape_autodiff::DType;
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyString, PyTuple, PyType};

use crate::errors::type_error;

/// The element type of a tensor (`tf.dtypes.DType`): `ft.float32`, `ft.int64`, `ft.bool`, ...
/// It compares equal to its name and to the NumPy dtype; `DType(obj)` converts either.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.float32.name, ft.float32.size, ft.float32.is_floating
/// ('float32', 4, True)
/// >>> ft.DType("int64") == ft.int64, ft.float32 == "float32"
/// (True, True)
///
/// Args:
///     obj: A dtype-like value: a `DType`, a name such as `"float32"`, or a NumPy dtype.
#[pyclass(name = "DType", module = "ferrotape", frozen, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PyDType(pub DType);

#[pymethods]
impl PyDType {
    #[new]
    fn py_new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyDType(dtype_of(obj)?))
    }

    /// The canonical name (`"float32"`).
    #[getter]
    fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Whether it is a floating-point type.
    #[getter]
    fn is_floating(&self) -> bool {
        self.0.is_float()
    }

    /// Whether it is an integer type (signed or unsigned).
    #[getter]
    fn is_integer(&self) -> bool {
        self.0.is_int()
    }

    /// Whether it is a complex type (`complex64`, `complex128`).
    #[getter]
    fn is_complex(&self) -> bool {
        self.0.is_complex()
    }

    /// The dtype of a complex type's parts (`float32` for `complex64`); a real dtype's is
    /// itself.
    #[getter]
    fn real_dtype(&self) -> Self {
        PyDType(self.0.real_dtype())
    }

    /// Whether it is bool.
    #[getter]
    fn is_bool(&self) -> bool {
        self.0 == DType::Bool
    }

    /// The size of one element in bytes.
    #[getter]
    fn size(&self) -> usize {
        self.0.size_in_bytes()
    }

    /// The dtype itself (ferrotape has no reference dtypes).
    #[getter]
    fn base_dtype(&self) -> Self {
        *self
    }

    /// Whether it is an unsigned integer type (`uint8` ... `uint64`).
    #[getter]
    fn is_unsigned(&self) -> bool {
        self.0.is_unsigned()
    }

    /// The lowest value of the type (the most negative finite one for floats).
    #[getter]
    fn min<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extreme(py, self.0, false)
    }

    /// The highest (finite) value of the type.
    #[getter]
    fn max<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extreme(py, self.0, true)
    }

    /// TensorFlow's `limits`: the range of an image of this type, `(lowest, highest)` for
    /// integers and bool and `(-1, 1)` for floats, with the lower end 0 when `clip_negative`.
    ///
    /// Args:
    ///     clip_negative: Whether to report 0 instead of a negative lower end.
    ///
    /// Returns:
    ///     A `(min, max)` tuple.
    #[pyo3(signature = (clip_negative=true))]
    fn limits<'py>(&self, py: Python<'py>, clip_negative: bool) -> PyResult<Bound<'py, PyTuple>> {
        if self.0.is_complex() {
            return Err(crate::errors::value_error(format!(
                "<dtype: '{}'> does not have defined limits.",
                self.0.name()
            )));
        }
        let (lo, hi) = if self.0.is_float() {
            (
                (-1i64).into_pyobject(py)?.into_any(),
                1i64.into_pyobject(py)?.into_any(),
            )
        } else if self.0 == DType::Bool {
            let (f, t) = (PyBool::new(py, false), PyBool::new(py, true));
            (f.to_owned().into_any(), t.to_owned().into_any())
        } else {
            (extreme(py, self.0, false)?, extreme(py, self.0, true)?)
        };
        let lo = if clip_negative {
            0i64.into_pyobject(py)?.into_any()
        } else {
            lo
        };
        PyTuple::new(py, [lo, hi])
    }

    /// The numpy scalar type (`np.float32`, ...); bfloat16 has none in numpy and maps to float32.
    #[getter]
    fn as_numpy_dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let name = if self.0 == DType::BF16 {
            "float32"
        } else {
            self.0.name()
        };
        py.import("numpy")?.getattr(name)
    }

    fn __repr__(&self) -> String {
        format!("tf.{}", self.0.name())
    }

    fn __str__(&self) -> String {
        format!("<dtype: '{}'>", self.0.name())
    }

    fn __hash__(&self) -> u64 {
        self.0 as u64
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<bool> {
        let same = dtype_of(other).map(|d| d == self.0).unwrap_or(false);
        match op {
            CompareOp::Eq => Ok(same),
            CompareOp::Ne => Ok(!same),
            _ => Err(type_error("dtypes are only compared for equality")),
        }
    }
}

/// The lowest or highest value of `d`, as a Python int or float (TypeError for bool, as
/// TensorFlow).
fn extreme(py: Python<'_>, d: DType, highest: bool) -> PyResult<Bound<'_, PyAny>> {
    let float = |max: f64| {
        let v = if highest { max } else { -max };
        Ok(v.into_pyobject(py)?.into_any())
    };
    match d {
        DType::F16 => float(half::f16::MAX.to_f64()),
        DType::BF16 => float(half::bf16::MAX.to_f64()),
        DType::F32 => float(f32::MAX as f64),
        DType::F64 => float(f64::MAX),
        DType::Bool => Err(type_error("Cannot find minimum or maximum value of bool")),
        DType::C64 | DType::C128 => Err(type_error(format!(
            "Cannot find {} value of <dtype: '{}'>",
            if highest { "maximum" } else { "minimum" },
            d.name()
        ))),
        DType::U64 if highest => Ok(u64::MAX.into_pyobject(py)?.into_any()),
        _ => {
            let bits = 8 * d.size_in_bytes() as u32;
            let (lo, hi) = if d.is_unsigned() {
                (0, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            let v = if highest { hi } else { lo };
            Ok(v.into_pyobject(py)?.into_any())
        }
    }
}

/// The dtype named by a DType, a string, a numpy dtype or scalar type, or Python's `float`
/// (float32) or `bool`. Python's `int` and `complex` name no TensorFlow dtype (TensorFlow refuses
/// them; Keras's own rule, `int` as int64, lives in `keras.backend.standardize_dtype`).
pub fn dtype_of(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().0);
    }
    let py = obj.py();
    let name: String = if let Ok(s) = obj.cast::<PyString>() {
        s.to_string()
    } else if let Ok(t) = obj.cast::<PyType>() {
        if t.is(py.get_type::<PyInt>()) || t.is(py.get_type::<PyComplex>()) {
            return Err(type_error(format!(
                "Cannot convert the argument `type_value`: {} to a TensorFlow DType.",
                obj.repr()?
            )));
        }
        match t.name()?.to_string().as_str() {
            "float" if t.is(py.get_type::<PyFloat>()) => "float32".into(),
            "bool" if t.is(py.get_type::<PyBool>()) => "bool".into(),
            _ => obj
                .py()
                .import("numpy")?
                .call_method1("dtype", (obj,))?
                .getattr("name")?
                .extract()?,
        }
    } else if obj.is_instance(&obj.py().import("numpy")?.getattr("dtype")?)?
        || obj.hasattr("dtype")?
    {
        // A numpy dtype, or an object that has one (a numpy scalar).
        let numpy_dtype = obj.py().import("numpy")?.call_method1("dtype", (obj,));
        numpy_dtype
            .and_then(|d| d.getattr("name")?.extract())
            .map_err(|_| cannot_convert(obj))?
    } else {
        return Err(cannot_convert(obj));
    };
    DType::from_name(&name)
        .ok_or_else(|| type_error(format!("ferrotape does not support dtype {name:?}")))
}

/// TensorFlow's message for a value that names no dtype.
fn cannot_convert(obj: &Bound<'_, PyAny>) -> PyErr {
    let shown: String = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect();
    type_error(format!(
        "Cannot convert value {shown} to a TensorFlow DType."
    ))
}

/// An optional dtype argument (`None` stays `None`).
pub fn optional_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        Some(o) if !o.is_none() => Ok(Some(dtype_of(o)?)),
        _ => Ok(None),
    }
}
