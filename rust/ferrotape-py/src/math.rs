//! `ft.math` (and the top-level math of `ft`): element-wise ops, comparisons, logic,
//! reductions, casts and select. Conversion and exposure only; the math is in the ops.

use ferrotape_autodiff::core::kernels::{CompareOp, LogicalOp};
use ferrotape_autodiff::ops;
use ferrotape_autodiff::{DType, Tensor};
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;

use crate::convert::{axes_of, binary_operands, int_of, to_tensor, Flag};
use crate::dtype::{dtype_of, optional_dtype};
use crate::registry::{self, functions};
use crate::tensor::{compute, truediv as true_divide, wrap, PyTensor};

/// Rows of one-tensor element-wise ops: `name [TensorFlow names] => kind(...)` (see
/// `registry.rs` for the kinds). Makes one `#[pyfunction]` per row, `register_unary` and `UNARY`.
macro_rules! unary_ops {
    ($($name:ident $tf:tt => $kind:ident $args:tt),* $(,)?) => {
        $(
            #[op_errors]
            #[pyfunction]
            #[pyo3(signature = (x, name=None))]
            #[doc = registry::row_doc!(unary $tf $kind $args)]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let t = to_tensor(x, None)?;
                wrap(compute(py, t.len(), || (registry::row_forward!($kind $args))(&t)))
            }
        )*
        fn register_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const UNARY: &[registry::Row] = &[$(registry::row_of!($name $tf $kind $args)),*];
    };
}

unary_ops! {
    exp ["exp", "math.exp"] => op(exp),
    expm1 ["math.expm1"] => op(expm1),
    log ["math.log"] => op(log),
    log1p ["math.log1p"] => op(log1p),
    sqrt ["sqrt", "math.sqrt"] => op(sqrt),
    rsqrt ["math.rsqrt"] => op(rsqrt),
    sin ["sin", "math.sin"] => op(sin),
    cos ["cos", "math.cos"] => op(cos),
    tan ["tan", "math.tan"] => op(tan),
    asin ["asin", "math.asin"] => op(asin),
    acos ["acos", "math.acos"] => op(acos),
    atan ["atan", "math.atan"] => op(atan),
    sinh ["sinh", "math.sinh"] => op(sinh),
    cosh ["cosh", "math.cosh"] => op(cosh),
    asinh ["asinh", "math.asinh"] => op(asinh),
    acosh ["acosh", "math.acosh"] => op(acosh),
    atanh ["atanh", "math.atanh"] => op(atanh),
    tanh ["tanh", "math.tanh", "nn.tanh"] => op(tanh),
    sigmoid ["sigmoid", "math.sigmoid", "nn.sigmoid"] => op(sigmoid),
    erf ["math.erf"] => op(erf),
    erfc ["math.erfc"] => op(erfc),
    erfinv ["math.erfinv"] => op(erfinv),
    erfcinv ["math.erfcinv"] => op(erfcinv),
    ndtri ["math.ndtri"] => op(ndtri),
    lgamma ["math.lgamma"] => op(lgamma),
    digamma ["math.digamma"] => op(digamma),
    bessel_i0 ["math.bessel_i0", "math.special.bessel_i0"] => op(bessel_i0),
    bessel_i0e ["math.bessel_i0e", "math.special.bessel_i0e"] => op(bessel_i0e),
    bessel_i1 ["math.bessel_i1", "math.special.bessel_i1"] => op(bessel_i1),
    bessel_i1e ["math.bessel_i1e", "math.special.bessel_i1e"] => op(bessel_i1e),
    bessel_j0 ["math.special.bessel_j0"] => op(bessel_j0),
    bessel_j1 ["math.special.bessel_j1"] => op(bessel_j1),
    bessel_y0 ["math.special.bessel_y0"] => op(bessel_y0),
    bessel_y1 ["math.special.bessel_y1"] => op(bessel_y1),
    bessel_k0 ["math.special.bessel_k0"] => op(bessel_k0),
    bessel_k0e ["math.special.bessel_k0e"] => op(bessel_k0e),
    bessel_k1 ["math.special.bessel_k1"] => op(bessel_k1),
    bessel_k1e ["math.special.bessel_k1e"] => op(bessel_k1e),
    dawsn ["math.special.dawsn"] => op(dawsn),
    expint ["math.special.expint"] => op(expint),
    fresnel_cos ["math.special.fresnel_cos"] => op(fresnel_cos),
    fresnel_sin ["math.special.fresnel_sin"] => op(fresnel_sin),
    spence ["math.special.spence"] => op(spence),
    floor ["floor", "math.floor"] => no_grad_op(floor),
    ceil ["ceil", "math.ceil"] => no_grad_op(ceil),
    round ["round", "math.round"] => no_grad_op(round),
    negative ["negative", "math.negative"] => op(neg),
    abs ["abs", "math.abs"] => op(abs),
    sign ["sign", "math.sign"] => op(sign),
    square ["square", "math.square"] => op(square),
    reciprocal ["math.reciprocal"] => op(reciprocal),
    identity ["identity"] => op(identity),
    real ["math.real"] => op(real),
    imag ["math.imag"] => op(imag),
    conj ["math.conj"] => op(conj),
    angle ["math.angle"] => op(angle),
    stop_gradient [] => no_grad(
        |t: &Tensor| Ok(ops::stop_gradient(t)),
        "The same value with no gradient path back to `x`.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> x = ft.constant(3.0)\n\
        >>> with ft.GradientTape() as tape:\n\
        ...     tape.watch(x)\n\
        ...     y = x * ft.stop_gradient(x)\n\
        ...\n\
        >>> float(tape.gradient(y, x))\n\
        3.0"
    ),
    logical_not ["logical_not", "math.logical_not"] => no_grad(
        |t: &Tensor| ops::logical_not(t),
        "The logical negation of a bool tensor, element-wise; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.logical_not([True, False]).numpy()\n\
        array([False,  True])"
    ),
    is_nan ["math.is_nan"] => no_grad(
        |t: &Tensor| ops::compare(CompareOp::NotEqual, t, t),
        "Whether each element is NaN (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.math.is_nan([1.0, float('nan')]).numpy()\n\
        array([False,  True])"
    ),
}

/// Rows of two-tensor element-wise ops (broadcasting, TensorFlow's dtype rules for Python
/// operands): makes one `#[pyfunction]` per row, `register_binary` and `BINARY`.
macro_rules! binary_ops {
    ($($name:ident $tf:tt => $kind:ident $args:tt),* $(,)?) => {
        $(
            #[op_errors]
            #[pyfunction]
            #[pyo3(signature = (x, y, name=None))]
            #[doc = registry::row_doc!(binary $tf $kind $args)]
            fn $name(py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let (a, b) = binary_operands(x, y)?;
                wrap(compute(py, a.len().max(b.len()), || (registry::row_forward!($kind $args))(&a, &b)))
            }
        )*
        fn register_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const BINARY: &[registry::Row] = &[$(registry::row_of!($name $tf $kind $args)),*];
    };
}

fn logical(op: LogicalOp) -> impl Fn(&Tensor, &Tensor) -> ferrotape_autodiff::Result<Tensor> {
    move |a, b| ops::logical(op, a, b)
}

fn compare(op: CompareOp) -> impl Fn(&Tensor, &Tensor) -> ferrotape_autodiff::Result<Tensor> {
    move |a, b| ops::compare(op, a, b)
}

binary_ops! {
    add ["add", "math.add"] => op(add),
    subtract ["subtract", "math.subtract"] => op(sub),
    multiply ["multiply", "math.multiply"] => op(mul),
    divide ["divide", "math.divide"] => grad(
        true_divide,
        "x / y, integers divided as floating point; d/dx = 1/y, d/dy = -x/y².\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.divide([1, 3], 2).numpy()\n\
        array([0.5, 1.5])"
    ),
    truediv ["truediv", "math.truediv"] => grad(
        true_divide,
        "x / y, integers divided as floating point; d/dx = 1/y, d/dy = -x/y².\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.truediv(ft.constant([1.0, 3.0]), 2.0).numpy()\n\
        array([0.5, 1.5], dtype=float32)"
    ),
    realdiv ["math.realdiv"] => op(div),
    complex ["complex"] => op(complex),
    floordiv ["math.floordiv"] => no_grad_op(floordiv),
    floormod ["math.floormod", "math.mod"] => op(floormod),
    pow ["pow", "math.pow"] => op(pow),
    maximum ["maximum", "math.maximum"] => op(maximum),
    minimum ["minimum", "math.minimum"] => op(minimum),
    squared_difference ["math.squared_difference"] => op(squared_difference),
    equal ["equal", "math.equal"] => no_grad(
        compare(CompareOp::Equal),
        "x == y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.equal([1, 2], [1, 3]).numpy()\n\
        array([ True, False])"),
    not_equal ["not_equal", "math.not_equal"] => no_grad(
        compare(CompareOp::NotEqual), "x != y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.not_equal([1, 2], [1, 3]).numpy()\n\
        array([False,  True])"
    ),
    less ["less", "math.less"] => no_grad(
        compare(CompareOp::Less),
        "x < y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.less([1, 2], 2).numpy()\n\
        array([ True, False])"),
    less_equal ["less_equal", "math.less_equal"] => no_grad(
        compare(CompareOp::LessEqual), "x <= y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.less_equal([1, 2], 2).numpy()\n\
        array([ True,  True])"
    ),
    greater ["greater", "math.greater"] => no_grad(
        compare(CompareOp::Greater), "x > y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.greater([1, 2], 1).numpy()\n\
        array([False,  True])"
    ),
    greater_equal ["greater_equal", "math.greater_equal"] => no_grad(
        compare(CompareOp::GreaterEqual), "x >= y (bool); no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.greater_equal([1, 2], 2).numpy()\n\
        array([False,  True])"
    ),
    logical_and ["logical_and", "math.logical_and"] => no_grad(
        logical(LogicalOp::And), "x AND y of bool tensors; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.logical_and([True, True], [True, False]).numpy()\n\
        array([ True, False])"
    ),
    logical_or ["logical_or", "math.logical_or"] => no_grad(
        logical(LogicalOp::Or), "x OR y of bool tensors; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.logical_or([True, False], [False, False]).numpy()\n\
        array([ True, False])"
    ),
    logical_xor ["math.logical_xor"] => no_grad(
        logical(LogicalOp::Xor), "x XOR y of bool tensors; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.math.logical_xor([True, True], [True, False]).numpy()\n\
        array([False,  True])"
    ),
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

/// Rows of reductions over `axis` (all axes by default): makes one `#[pyfunction]` per row,
/// `register_reductions` and `REDUCTIONS`.
macro_rules! reductions {
    ($($name:ident $tf:tt => $kind:ident $args:tt),* $(,)?) => {
        $(
            #[op_errors]
            #[pyfunction]
            #[pyo3(signature = (input_tensor, axis=None, keepdims=Flag(false), name=None))]
            #[doc = registry::row_doc!(reduction $tf $kind $args)]
            fn $name(py: Python<'_>, input_tensor: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: Flag, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                reduce(py, registry::row_forward!($kind $args), input_tensor, axis, keepdims.0)
            }
        )*
        fn register_reductions(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const REDUCTIONS: &[registry::Row] = &[$(registry::row_of!($name $tf $kind $args)),*];
    };
}

reductions! {
    reduce_sum ["reduce_sum", "math.reduce_sum"] => op(reduce_sum),
    reduce_mean ["reduce_mean", "math.reduce_mean"] => op(reduce_mean),
    reduce_max ["reduce_max", "math.reduce_max"] => op(reduce_max),
    reduce_min ["reduce_min", "math.reduce_min"] => op(reduce_min),
    reduce_prod ["reduce_prod", "math.reduce_prod"] => op(reduce_prod),
    reduce_logsumexp ["reduce_logsumexp", "math.reduce_logsumexp"] => op(reduce_logsumexp),
    reduce_any ["reduce_any", "math.reduce_any"] => no_grad(
        |t, a, k| ops::reduce_bool(true, t, a, k),
        "Logical or over `axis` of a bool tensor; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.reduce_any([[True, False], [False, False]], axis=1).numpy()\n\
        array([ True, False])"
    ),
    reduce_all ["reduce_all", "math.reduce_all"] => no_grad(
        |t, a, k| ops::reduce_bool(false, t, a, k),
        "Logical and over `axis` of a bool tensor; no gradient.\n\nFor example:\n\n\
        >>> import ferrotape as ft\n\
        >>> ft.reduce_all([[True, False], [True, True]], axis=1).numpy()\n\
        array([False,  True])"
    ),
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
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.argmax([[1, 9], [8, 2]], axis=1).numpy()
/// array([1, 0])
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     axis: The axis to reduce (default 0).
///     output_type: The index dtype, int32 or int64 (default int64).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `input`'s shape without `axis`.
#[op_errors]
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
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.argmin([[1, 9], [8, 2]]).numpy()
/// array([0, 1])
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     axis: The axis to reduce (default 0).
///     output_type: The index dtype, int32 or int64 (default int64).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `input`'s shape without `axis`.
#[op_errors]
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
#[doc = ""]
#[doc = op_doc!(cast)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.cast([1.7, -1.7], ft.int32).numpy()
/// array([ 1, -1], dtype=int32)
///
/// Args:
///     x: A tensor, or a value convertible to one.
///     dtype: The target dtype.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `x`'s shape and `dtype`.
#[op_errors]
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
#[doc = ""]
#[doc = op_doc!(where_)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft._core.select([True, False], [1, 2], [10, 20]).numpy()
/// array([ 1, 20], dtype=int32)
///
/// Args:
///     condition: A bool tensor, broadcastable with `x` and `y`.
///     x: The values where `condition` holds.
///     y: The values elsewhere, of `x`'s dtype.
///
/// Returns:
///     A tensor of the broadcast shape of the three.
#[op_errors]
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
#[doc = ""]
#[doc = op_doc!(clip_by_value)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.clip_by_value([-2.0, 0.5, 3.0], -1.0, 1.0).numpy()
/// array([-1. ,  0.5,  1. ], dtype=float32)
///
/// Args:
///     t: A tensor, or a value convertible to one.
///     clip_value_min: The lower bound, a scalar or a tensor broadcastable to `t`.
///     clip_value_max: The upper bound, likewise.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `t`'s shape and dtype.
#[op_errors]
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
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.add_n([ft.constant([1, 2]), ft.constant([10, 20])]).numpy()
/// array([11, 22], dtype=int32)
///
/// Args:
///     inputs: A list of tensors of one shape and dtype.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     Their element-wise sum.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (inputs, name=None))]
fn add_n(inputs: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::add_n(&crate::convert::tensor_list("add_n", inputs)?))
}

/// Rows of two-tensor special functions whose arguments TensorFlow names (`igamma(a, x)`,
/// `zeta(x, q)`), so that keyword calls work: `name(first, second) [TensorFlow names] => op`.
/// Makes one `#[pyfunction]` per row, `register_named_binary` and `NAMED_BINARY`.
macro_rules! named_binary_ops {
    ($($name:ident($p:ident, $q:ident) [$($tf:literal),*] => $op:ident),* $(,)?) => {
        $(
            #[op_errors]
            #[pyfunction]
            #[pyo3(signature = ($p, $q, name=None))]
            #[doc = concat!(
                op_doc!($op),
                "\n\nArgs:\n    ", stringify!($p),
                ": A floating tensor, or a value convertible to one.\n    ", stringify!($q),
                ": A tensor or value broadcastable with `", stringify!($p), "`, of its dtype.",
                registry::signature_doc!(@name),
                "\n\nReturns:\n    A tensor of the broadcast shape, of their dtype.",
                registry::tf_names!($($tf),*)
            )]
            fn $name(
                py: Python<'_>,
                $p: &Bound<'_, PyAny>,
                $q: &Bound<'_, PyAny>,
                name: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyTensor> {
                let _ = name;
                let (a, b) = binary_operands($p, $q)?;
                wrap(compute(py, a.len().max(b.len()), || ops::$op(&a, &b)))
            }
        )*
        fn register_named_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const NAMED_BINARY: &[registry::Row] =
            &[$(registry::row_of!($name [$($tf),*] op($op))),*];
    };
}

named_binary_ops! {
    igamma(a, x) ["math.igamma"] => igamma,
    igammac(a, x) ["math.igammac"] => igammac,
    polygamma(a, x) ["math.polygamma"] => polygamma,
    zeta(x, q) ["math.zeta"] => zeta,
}

#[doc = op_doc!(betainc)]
///
/// Args:
///     a: A floating tensor (the first shape parameter).
///     b: A tensor of `a`'s dtype (the second shape parameter).
///     x: A tensor of `a`'s dtype, in [0, 1]; the three broadcast together.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of the broadcast shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (a, b, x, name=None))]
fn betainc(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    // Python values take the dtype of the first tensor operand, as in the binary ops.
    let dtype = [a, b, x]
        .into_iter()
        .find_map(crate::convert::as_tensor)
        .map(|t| t.dtype());
    let (a, b, x) = (
        to_tensor(a, dtype)?,
        to_tensor(b, dtype)?,
        to_tensor(x, dtype)?,
    );
    wrap(compute(py, a.len().max(b.len()).max(x.len()), || {
        ops::betainc(&a, &b, &x)
    }))
}

functions! {
    argmax ["argmax", "math.argmax"] no_grad,
    argmin ["argmin", "math.argmin"] no_grad,
    cast ["cast"] grad,
    select [] grad,
    clip_by_value ["clip_by_value"] grad,
    add_n ["add_n", "math.add_n"] grad,
    betainc ["math.betainc"] grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[UNARY, BINARY, NAMED_BINARY, REDUCTIONS, FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_unary(m)?;
    register_binary(m)?;
    register_named_binary(m)?;
    register_reductions(m)?;
    register_functions(m)
}
