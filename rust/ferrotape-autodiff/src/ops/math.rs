//! Element-wise math: exponentials, logarithms, roots, trigonometry, rounding, and select.

use std::f64::consts::PI;

use ferrotape_core::kernels::{self, CompareOp, UnaryOp};
use ferrotape_core::{Result, Shape};

use super::{
    add, arith::unary_kernel, compare, div, maximum, minimum, mul, neg, square, sub, unbroadcast,
    zeros_like,
};
use crate::tape::record_vectorizable;
use crate::tensor::Tensor;
use crate::trace;

/// exp(x); d/dx = exp(x), saved as the output.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.exp([0.0, 1.0]).numpy().round(4)
/// array([1.    , 2.7183], dtype=float32)
/// ```
pub fn exp(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Exp", x);
    }
    let y = unary_kernel(UnaryOp::Exp, x)?;
    record_vectorizable("Exp", &[x], &[&y], grad!(|g; y| mul(g, y)?));
    Ok(y)
}

/// exp(x) - 1; d/dx = exp(x) = y + 1.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.expm1([0.0, 1.0]).numpy().round(4)
/// array([0.    , 1.7183], dtype=float32)
/// ```
pub fn expm1(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Expm1, x)?;
    record_vectorizable(
        "Expm1",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &add(y, &y.scalar_like(1.0))?)?),
    );
    Ok(y)
}

/// log(x); d/dx = 1/x.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.log([1.0, 100.0]).numpy().round(4)
/// array([0.    , 4.6052], dtype=float32)
/// ```
pub fn log(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Log", x);
    }
    let y = unary_kernel(UnaryOp::Log, x)?;
    record_vectorizable("Log", &[x], &[&y], grad!(|g; x| div(g, x)?));
    Ok(y)
}

/// log(1 + x); d/dx = 1/(1 + x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.log1p([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.6931], dtype=float32)
/// ```
pub fn log1p(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Log1p, x)?;
    record_vectorizable(
        "Log1p",
        &[x],
        &[&y],
        grad!(|g; x| div(g, &add(x, &x.scalar_like(1.0))?)?),
    );
    Ok(y)
}

/// `value` where `g` is non-zero, else 0: TensorFlow's SqrtGrad, RsqrtGrad and ReciprocalGrad
/// return 0 for a zero upstream gradient, so `where(x > 0, sqrt(x), ...)` has no NaN gradient.
pub(crate) fn zero_where_no_gradient(g: &Tensor, value: &Tensor) -> Result<Tensor> {
    let no_gradient = compare(CompareOp::Equal, g, &g.scalar_like(0.0))?;
    where_(&no_gradient, &zeros_like(value)?, value)
}

/// sqrt(x); d/dx = 0.5/sqrt(x) = 0.5/y (0 where the upstream gradient is 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.sqrt([4.0, 9.0]).numpy()
/// array([2., 3.], dtype=float32)
/// ```
pub fn sqrt(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Sqrt", x);
    }
    let y = unary_kernel(UnaryOp::Sqrt, x)?;
    record_vectorizable(
        "Sqrt",
        &[x],
        &[&y],
        grad!(|g; y| {
            zero_where_no_gradient(g, &div(&mul(g, &y.scalar_like(0.5))?, y)?)?
        }),
    );
    Ok(y)
}

/// 1/sqrt(x); d/dx = -0.5·y³ (0 where the upstream gradient is 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.rsqrt([4.0, 16.0]).numpy()
/// array([0.5 , 0.25], dtype=float32)
/// ```
pub fn rsqrt(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Rsqrt, x)?;
    record_vectorizable(
        "Rsqrt",
        &[x],
        &[&y],
        grad!(|g; y| {
            let cube = mul(y, &square(y)?)?;
            zero_where_no_gradient(g, &mul(g, &mul(&y.scalar_like(-0.5), &cube)?)?)?
        }),
    );
    Ok(y)
}

/// sin(x); d/dx = cos(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.sin([0.0, 1.5707964]).numpy().round(4)
/// array([0., 1.], dtype=float32)
/// ```
pub fn sin(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Sin", x);
    }
    let y = unary_kernel(UnaryOp::Sin, x)?;
    record_vectorizable("Sin", &[x], &[&y], grad!(|g; x| mul(g, &cos(x)?)?));
    Ok(y)
}

/// cos(x); d/dx = -sin(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.cos([0.0, 3.1415927]).numpy().round(4)
/// array([ 1., -1.], dtype=float32)
/// ```
pub fn cos(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Cos", x);
    }
    let y = unary_kernel(UnaryOp::Cos, x)?;
    record_vectorizable("Cos", &[x], &[&y], grad!(|g; x| neg(&mul(g, &sin(x)?)?)?));
    Ok(y)
}

/// tan(x); d/dx = 1 + tan²(x) = 1 + y².
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.tan([0.0, 0.7853982]).numpy().round(4)
/// array([0., 1.], dtype=float32)
/// ```
pub fn tan(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Tan, x)?;
    record_vectorizable(
        "Tan",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &add(&square(y)?, &y.scalar_like(1.0))?)?),
    );
    Ok(y)
}

/// asin(x); d/dx = 1/sqrt(1 - x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.asin([0.0, 1.0]).numpy().round(4)
/// array([0.    , 1.5708], dtype=float32)
/// ```
pub fn asin(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Asin, x)?;
    record_vectorizable(
        "Asin",
        &[x],
        &[&y],
        grad!(|g; x| div(g, &sqrt(&sub(&x.scalar_like(1.0), &square(x)?)?)?)?),
    );
    Ok(y)
}

/// acos(x); d/dx = -1/sqrt(1 - x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.acos([1.0, 0.0]).numpy().round(4)
/// array([0.    , 1.5708], dtype=float32)
/// ```
pub fn acos(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Acos, x)?;
    record_vectorizable(
        "Acos",
        &[x],
        &[&y],
        grad!(|g; x| neg(&div(g, &sqrt(&sub(&x.scalar_like(1.0), &square(x)?)?)?)?)?),
    );
    Ok(y)
}

/// atan(x); d/dx = 1/(1 + x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.atan([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.7854], dtype=float32)
/// ```
pub fn atan(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Atan, x)?;
    record_vectorizable(
        "Atan",
        &[x],
        &[&y],
        grad!(|g; x| div(g, &add(&square(x)?, &x.scalar_like(1.0))?)?),
    );
    Ok(y)
}

/// sinh(x); d/dx = cosh(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.sinh([0.0, 1.0]).numpy().round(4)
/// array([0.    , 1.1752], dtype=float32)
/// ```
pub fn sinh(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Sinh", x);
    }
    let y = unary_kernel(UnaryOp::Sinh, x)?;
    record_vectorizable("Sinh", &[x], &[&y], grad!(|g; x| mul(g, &cosh(x)?)?));
    Ok(y)
}

/// cosh(x); d/dx = sinh(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.cosh([0.0, 1.0]).numpy().round(4)
/// array([1.    , 1.5431], dtype=float32)
/// ```
pub fn cosh(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Cosh", x);
    }
    let y = unary_kernel(UnaryOp::Cosh, x)?;
    record_vectorizable("Cosh", &[x], &[&y], grad!(|g; x| mul(g, &sinh(x)?)?));
    Ok(y)
}

/// asinh(x), the inverse hyperbolic sine; d/dx = 1/sqrt(x² + 1) = 1/cosh(y).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.asinh([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.8814], dtype=float32)
/// ```
pub fn asinh(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Asinh, x)?;
    record_vectorizable("Asinh", &[x], &[&y], grad!(|g; y| div(g, &cosh(y)?)?));
    Ok(y)
}

/// acosh(x), the inverse hyperbolic cosine (x ≥ 1); d/dx = 1/sqrt(x² - 1) = 1/sinh(y).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.acosh([1.0, 2.0]).numpy().round(4)
/// array([0.   , 1.317], dtype=float32)
/// ```
pub fn acosh(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Acosh, x)?;
    record_vectorizable("Acosh", &[x], &[&y], grad!(|g; y| div(g, &sinh(y)?)?));
    Ok(y)
}

/// atanh(x), the inverse hyperbolic tangent (|x| < 1); d/dx = 1/(1 - x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.atanh([0.0, 0.5]).numpy().round(4)
/// array([0.    , 0.5493], dtype=float32)
/// ```
pub fn atanh(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Atanh, x)?;
    record_vectorizable(
        "Atanh",
        &[x],
        &[&y],
        grad!(|g; x| div(g, &sub(&x.scalar_like(1.0), &square(x)?)?)?),
    );
    Ok(y)
}

/// tanh(x); d/dx = 1 - y².
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.tanh([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.7616], dtype=float32)
/// ```
pub fn tanh(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Tanh, x)?;
    record_vectorizable(
        "Tanh",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &sub(&y.scalar_like(1.0), &square(y)?)?)?),
    );
    Ok(y)
}

/// 1/(1 + exp(-x)); d/dx = y(1 - y).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.sigmoid([0.0, 2.0]).numpy().round(4)
/// array([0.5   , 0.8808], dtype=float32)
/// ```
pub fn sigmoid(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Sigmoid, x)?;
    record_vectorizable(
        "Sigmoid",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &mul(y, &sub(&y.scalar_like(1.0), y)?)?)?),
    );
    Ok(y)
}

/// erf(x); d/dx = 2/sqrt(pi)·exp(-x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.erf([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.8427], dtype=float32)
/// ```
pub fn erf(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Erf, x)?;
    record_vectorizable(
        "Erf",
        &[x],
        &[&y],
        grad!(|g; x| {
            mul(g, &mul(&x.scalar_like(2.0 / PI.sqrt()), &exp(&neg(&square(x)?)?)?)?)?
        }),
    );
    Ok(y)
}

/// floor(x); no gradient (TensorFlow returns None).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.floor([-1.5, 1.5]).numpy()
/// array([-2.,  1.], dtype=float32)
/// ```
pub fn floor(x: &Tensor) -> Result<Tensor> {
    unary_kernel(UnaryOp::Floor, x)
}

/// ceil(x); no gradient.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.ceil([-1.5, 1.5]).numpy()
/// array([-1.,  2.], dtype=float32)
/// ```
pub fn ceil(x: &Tensor) -> Result<Tensor> {
    unary_kernel(UnaryOp::Ceil, x)
}

/// Rounds half to even, like `tf.round`; no gradient.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.round([0.5, 1.5, 2.5, -0.5]).numpy()
/// array([ 0.,  2.,  2., -0.], dtype=float32)
/// ```
pub fn round(x: &Tensor) -> Result<Tensor> {
    unary_kernel(UnaryOp::Round, x)
}

/// `cond ? x : y` element-wise with broadcasting; d/dx = cond, d/dy = !cond; none for `cond`.
pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let out = Tensor::new(kernels::select(cond.value(), x.value(), y.value())?);
    trace::node1("SelectV2", &[cond, x, y], &out, || {
        |t: &[Tensor]| {
            Ok(Tensor::new(kernels::select(
                t[0].value(),
                t[1].value(),
                t[2].value(),
            )?))
        }
    });
    record_vectorizable("SelectV2", &[cond, x, y], &[&out], || {
        let (cond, sx, sy): (Tensor, Shape, Shape) =
            (cond.clone(), x.shape().into(), y.shape().into());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let zero = g.scalar_like(0.0);
            let gx = if needs[1] {
                Some(unbroadcast(&where_(&cond, g, &zero)?, &sx)?)
            } else {
                None
            };
            let gy = if needs[2] {
                Some(unbroadcast(&where_(&cond, &zero, g)?, &sy)?)
            } else {
                None
            };
            Ok(vec![None, gx, gy])
        }
    });
    Ok(out)
}

/// A new tensor with the same value; d/dx = 1. Under a `tf.device` scope the value is copied
/// to that device, as TensorFlow's identity copies across devices.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.identity([1, 2]).numpy()
/// array([1, 2], dtype=int32)
/// ```
pub fn identity(x: &Tensor) -> Result<Tensor> {
    let value = match ferrotape_core::device::placement() {
        Some(device) => x.value().to_device(device)?,
        None => x.value().clone(),
    };
    let y = Tensor::new(value);
    trace::node1("Identity", &[x], &y, || {
        |t: &[Tensor]| Ok(stop_gradient(&t[0]))
    });
    record_vectorizable("Identity", &[x], &[&y], grad!(|g| g.clone()));
    Ok(y)
}

/// The same value with no gradient path back to `x`.
pub fn stop_gradient(x: &Tensor) -> Tensor {
    let y = Tensor::new(x.value().clone());
    trace::node1("StopGradient", &[x], &y, || {
        |t: &[Tensor]| Ok(stop_gradient(&t[0]))
    });
    y
}

/// min(max(x, lo), hi), TensorFlow's composition (so ties pass the gradient to `x`).
pub fn clip_by_value(x: &Tensor, lo: &Tensor, hi: &Tensor) -> Result<Tensor> {
    minimum(&maximum(x, lo)?, hi)
}

/// `x > 0` as a bool tensor, a helper for masked derivatives.
pub(crate) fn positive(x: &Tensor) -> Result<Tensor> {
    compare(CompareOp::Greater, x, &x.scalar_like(0.0))
}

/// `g` where `mask` holds, else 0 (a broadcast scalar zero: no zero-filled copy of `g`).
pub(crate) fn masked(mask: &Tensor, g: &Tensor) -> Result<Tensor> {
    where_(mask, g, &g.scalar_like(0.0))
}

/// Element-wise logical `op` of two bool tensors, with broadcasting; no gradient.
pub fn logical(op: kernels::LogicalOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::logical(op, a.value(), b.value())?);
    trace::node1("Logical", &[a, b], &y, || {
        move |t: &[Tensor]| logical(op, &t[0], &t[1])
    });
    Ok(y)
}

/// The logical negation of a bool tensor, element-wise; no gradient.
pub fn logical_not(x: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::logical_not(x.value())?);
    trace::node1("LogicalNot", &[x], &y, || |t: &[Tensor]| logical_not(&t[0]));
    Ok(y)
}
