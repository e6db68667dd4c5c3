//! `ft.math` (and the top-level math of `ft`): element-wise ops, comparisons, logic,
//! reductions, casts and select. Conversion and exposure only; the math is in the ops.

use ferrotape_autodiff::core::kernels::{self, CompareOp, LogicalOp};
use ferrotape_autodiff::ops;
use ferrotape_autodiff::{DType, Tensor};
use pyo3::prelude::*;

use crate::convert::{axes_of, binary_operands, int_of, to_tensor, Flag};
use crate::dtype::{dtype_of, optional_dtype};
use crate::tensor::{compute, truediv as true_divide, wrap, PyTensor};

macro_rules! unary_ops {
    ($($name:ident => $f:expr),* $(,)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x, name=None))]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let t = to_tensor(x, None)?;
                wrap(compute(py, t.len(), || ($f)(&t)))
            }
        )*
        fn register_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

unary_ops! {
    exp => ops::exp, expm1 => ops::expm1, log => ops::log, log1p => ops::log1p,
    sqrt => ops::sqrt, rsqrt => ops::rsqrt, sin => ops::sin, cos => ops::cos, tan => ops::tan,
    asin => ops::asin, acos => ops::acos, atan => ops::atan, sinh => ops::sinh, cosh => ops::cosh,
    tanh => ops::tanh, sigmoid => ops::sigmoid, erf => ops::erf, floor => ops::floor,
    ceil => ops::ceil, round => ops::round, negative => ops::neg, abs => ops::abs,
    sign => ops::sign, square => ops::square, reciprocal => ops::reciprocal,
    identity => ops::identity,
    stop_gradient => |t: &Tensor| Ok(ops::stop_gradient(t)),
    logical_not => |t: &Tensor| Ok(Tensor::new(kernels::logical_not(t.value())?)),
    is_nan => |t: &Tensor| ops::compare(CompareOp::NotEqual, t, t),
}

macro_rules! binary_ops {
    ($($name:ident => $f:expr),* $(,)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x, y, name=None))]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let (a, b) = binary_operands(x, y)?;
                wrap(compute(py, a.len().max(b.len()), || ($f)(&a, &b)))
            }
        )*
        fn register_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

fn logical(op: LogicalOp) -> impl Fn(&Tensor, &Tensor) -> ferrotape_autodiff::Result<Tensor> {
    move |a, b| Ok(Tensor::new(kernels::logical(op, a.value(), b.value())?))
}

fn compare(op: CompareOp) -> impl Fn(&Tensor, &Tensor) -> ferrotape_autodiff::Result<Tensor> {
    move |a, b| ops::compare(op, a, b)
}

binary_ops! {
    add => ops::add, subtract => ops::sub, multiply => ops::mul, divide => true_divide,
    truediv => true_divide, realdiv => ops::div, floordiv => ops::floordiv, floormod => ops::floormod,
    pow => ops::pow, maximum => ops::maximum, minimum => ops::minimum,
    squared_difference => ops::squared_difference,
    equal => compare(CompareOp::Equal), not_equal => compare(CompareOp::NotEqual),
    less => compare(CompareOp::Less), less_equal => compare(CompareOp::LessEqual),
    greater => compare(CompareOp::Greater), greater_equal => compare(CompareOp::GreaterEqual),
    logical_and => logical(LogicalOp::And), logical_or => logical(LogicalOp::Or),
    logical_xor => logical(LogicalOp::Xor),
}

type Reduction = fn(&Tensor, Option<&[i64]>, bool) -> ferrotape_autodiff::Result<Tensor>;

fn reduce(
    py: Python<'_>,
    f: Reduction,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyTensor> {
    let t = to_tensor(x, None)?;
    let axes = axes_of(axis).map_err(crate::errors::in_argument("axis"))?;
    wrap(compute(py, t.len(), || f(&t, axes.as_deref(), keepdims)))
}

macro_rules! reductions {
    ($($name:ident => $f:expr),* $(,)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (input_tensor, axis=None, keepdims=Flag(false), name=None))]
            fn $name(py: Python<'_>, input_tensor: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: Flag, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                reduce(py, $f, input_tensor, axis, keepdims.0)
            }
        )*
        fn register_reductions(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

reductions! {
    reduce_sum => ops::reduce_sum, reduce_mean => ops::reduce_mean, reduce_max => ops::reduce_max,
    reduce_min => ops::reduce_min, reduce_prod => ops::reduce_prod,
    reduce_logsumexp => ops::reduce_logsumexp,
    reduce_any => |t, a, k| ops::reduce_bool(true, t, a, k),
    reduce_all => |t, a, k| ops::reduce_bool(false, t, a, k),
}

fn arg_reduce(
    max: bool,
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    output_type: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let t = to_tensor(input, None)?;
    let axis = match axis {
        Some(a) if !a.is_none() => int_of(a).map_err(crate::errors::in_argument("axis"))?,
        _ => 0,
    };
    let dtype = optional_dtype(output_type)?.unwrap_or(DType::I64);
    wrap(ops::arg_reduce(max, &t, axis, dtype))
}

/// Index of the largest value along `axis` (default 0), int64 unless `output_type` says.
#[pyfunction]
#[pyo3(signature = (input, axis=None, output_type=None, name=None))]
fn argmax(
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    output_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    arg_reduce(true, input, axis, output_type)
}

/// Index of the smallest value along `axis` (default 0).
#[pyfunction]
#[pyo3(signature = (input, axis=None, output_type=None, name=None))]
fn argmin(
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    output_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    arg_reduce(false, input, axis, output_type)
}

/// `x` as `dtype` (float → int truncates toward zero).
#[pyfunction]
#[pyo3(signature = (x, dtype, name=None))]
fn cast(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(x, None)?;
    let d = dtype_of(dtype)?;
    wrap(compute(py, t.len(), || ops::cast(&t, d)))
}

/// `condition ? x : y` with broadcasting (the one-argument form is in Python).
#[pyfunction]
fn select(
    condition: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let c = to_tensor(condition, None)?;
    let (a, b) = binary_operands(x, y)?;
    wrap(ops::where_(&c, &a, &b))
}

/// min(max(t, lo), hi).
#[pyfunction]
#[pyo3(signature = (t, clip_value_min, clip_value_max, name=None))]
fn clip_by_value(
    t: &Bound<'_, PyAny>,
    clip_value_min: &Bound<'_, PyAny>,
    clip_value_max: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(t, None)?;
    let lo =
        to_tensor(clip_value_min, Some(x.dtype())).or_else(|_| to_tensor(clip_value_min, None))?;
    let hi =
        to_tensor(clip_value_max, Some(x.dtype())).or_else(|_| to_tensor(clip_value_max, None))?;
    wrap(ops::clip_by_value(&x, &lo, &hi))
}

/// The sum of a list of same-shaped tensors.
#[pyfunction]
#[pyo3(signature = (inputs, name=None))]
fn add_n(inputs: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::add_n(&crate::convert::tensor_list("add_n", inputs)?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_unary(m)?;
    register_binary(m)?;
    register_reductions(m)?;
    for f in [
        wrap_pyfunction!(argmax, m)?,
        wrap_pyfunction!(argmin, m)?,
        wrap_pyfunction!(cast, m)?,
        wrap_pyfunction!(select, m)?,
        wrap_pyfunction!(clip_by_value, m)?,
        wrap_pyfunction!(add_n, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
