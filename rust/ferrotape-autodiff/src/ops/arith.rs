//! Broadcasting arithmetic and the unary numeric ops.

use ferrotape_core::kernels::{self, BinaryOp, CompareOp, UnaryOp};
use ferrotape_core::{Error, Result, Shape};

use super::{log, unbroadcast, where_, zeros_like};
use crate::tape::{record, record_vectorizable};
use crate::tensor::Tensor;
use crate::trace;

pub(crate) fn binary_kernel(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::binary(op, a.value(), b.value())?);
    trace::elementwise(trace::Elementwise::Binary(op), &[a, b], &y);
    Ok(y)
}

pub(crate) fn unary_kernel(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::unary(op, x.value())?);
    trace::elementwise(trace::Elementwise::Unary(op), &[x], &y);
    Ok(y)
}

/// Backward of a binary op: `da`/`db` map the output gradient to each input's (before
/// unbroadcasting); each runs only if that input needs a gradient.
pub(crate) fn binary_backward(
    a_shape: Shape,
    b_shape: Shape,
    da: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
    db: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
) -> impl Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static {
    move |gs, needs| {
        let ga = if needs[0] {
            Some(unbroadcast(&da(&gs[0])?, &a_shape)?)
        } else {
            None
        };
        let gb = if needs[1] {
            Some(unbroadcast(&db(&gs[0])?, &b_shape)?)
        } else {
            None
        };
        Ok(vec![ga, gb])
    }
}

fn shapes(a: &Tensor, b: &Tensor) -> (Shape, Shape) {
    (a.shape().into(), b.shape().into())
}

/// `tf.add_n`: the sum of one or more tensors of one shape and dtype (no broadcasting, as
/// TensorFlow's `AddN`); d/dxᵢ = 1 for each, through the additions.
pub fn add_n(xs: &[Tensor]) -> Result<Tensor> {
    const OP: &str = "AddN";
    let Some((first, rest)) = xs.split_first() else {
        return Err(Error::invalid(
            OP,
            "expected at least one tensor, received none",
        ));
    };
    for (i, x) in rest.iter().enumerate() {
        if x.dtype() != first.dtype() {
            return Err(Error::mismatch(OP, first.dtype(), x.dtype()));
        }
        if x.shape() != first.shape() {
            return Err(Error::invalid(
                OP,
                format!(
                    "inputs must have the same shape, received {:?} (input 0) and {:?} \
                     (input {})",
                    first.shape(),
                    x.shape(),
                    i + 1
                ),
            ));
        }
    }
    rest.iter().try_fold(first.clone(), |acc, x| add(&acc, x))
}

/// a + b; d/da = 1, d/db = 1.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.add([1, 2], 10).numpy()
/// array([11, 12], dtype=int32)
/// ```
pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::binary(BinaryOp::Add, a, b);
    }
    let y = binary_kernel(BinaryOp::Add, a, b)?;
    record_vectorizable("AddV2", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        binary_backward(sa, sb, |g| Ok(g.clone()), |g| Ok(g.clone()))
    });
    Ok(y)
}

/// a - b; d/da = 1, d/db = -1.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.subtract([[1.0], [2.0]], [1.0, 2.0]).numpy()
/// array([[ 0., -1.],
///        [ 1.,  0.]], dtype=float32)
/// ```
pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::binary(BinaryOp::Sub, a, b);
    }
    let y = binary_kernel(BinaryOp::Sub, a, b)?;
    record_vectorizable("Sub", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        binary_backward(sa, sb, |g| Ok(g.clone()), neg)
    });
    Ok(y)
}

/// a * b; d/da = b, d/db = a.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.multiply([1.0, 2.0], 3.0).numpy()
/// array([3., 6.], dtype=float32)
/// ```
pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::binary(BinaryOp::Mul, a, b);
    }
    let y = binary_kernel(BinaryOp::Mul, a, b)?;
    record_vectorizable("Mul", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a, b) = (a.clone(), b.clone());
        binary_backward(sa, sb, move |g| mul(g, &b), move |g| mul(g, &a))
    });
    Ok(y)
}

/// a / b (true division); d/da = 1/b, d/db = -a/b².
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.realdiv([1.0, 3.0], 2.0).numpy()
/// array([0.5, 1.5], dtype=float32)
/// ```
pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::binary(BinaryOp::Div, a, b);
    }
    let y = binary_kernel(BinaryOp::Div, a, b)?;
    record_vectorizable("RealDiv", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a, b1, b2) = (a.clone(), b.clone(), b.clone());
        binary_backward(
            sa,
            sb,
            move |g| div(g, &b1),
            move |g| mul(g, &div(&div(&neg(&a)?, &b2)?, &b2)?),
        )
    });
    Ok(y)
}

/// floor(a / b); not differentiable (TensorFlow returns no gradient).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.floordiv([7, -7], 2).numpy()
/// array([ 3, -4], dtype=int32)
/// ```
pub fn floordiv(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary_kernel(BinaryOp::FloorDiv, a, b)
}

/// a mod b with the sign of b; d/da = 1, d/db = -floor(a / b).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.floormod([7, -7], 3).numpy()
/// array([1, 2], dtype=int32)
/// ```
pub fn floormod(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Mod, a, b)?;
    record("FloorMod", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a, b) = (a.clone(), b.clone());
        binary_backward(
            sa,
            sb,
            |g| Ok(g.clone()),
            move |g| mul(&neg(g)?, &floordiv(&a, &b)?),
        )
    });
    Ok(y)
}

/// a ** b; d/da = b·a^(b-1), d/db = log(a)·a^b (taken as 0 where a <= 0, as TensorFlow does).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.pow([2.0, 3.0], 2.0).numpy()
/// array([4., 9.], dtype=float32)
/// ```
pub fn pow(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Pow, a, b)?;
    record_vectorizable("Pow", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a1, b1, a2, y) = (a.clone(), b.clone(), a.clone(), y.clone());
        binary_backward(
            sa,
            sb,
            move |g| mul(g, &mul(&b1, &pow(&a1, &sub(&b1, &b1.scalar_like(1.0))?)?)?),
            move |g| {
                let positive = compare(CompareOp::Greater, &a2, &a2.scalar_like(0.0))?;
                let safe = where_(&positive, &a2, &super::ones_like(&a2)?)?;
                let log_a = where_(&positive, &log(&safe)?, &zeros_like(&a2)?)?;
                mul(g, &mul(&log_a, &y)?)
            },
        )
    });
    Ok(y)
}

fn max_min(
    op: BinaryOp,
    tie: CompareOp,
    name: &'static str,
    a: &Tensor,
    b: &Tensor,
) -> Result<Tensor> {
    let y = binary_kernel(op, a, b)?;
    record_vectorizable(name, &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a, b) = (a.clone(), b.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            // The gradient goes to `a` where it wins or ties, else to `b`.
            let a_wins = compare(tie, &a, &b)?;
            let g = &gs[0];
            let zero = zeros_like(g)?;
            let ga = if needs[0] {
                Some(unbroadcast(&where_(&a_wins, g, &zero)?, &sa)?)
            } else {
                None
            };
            let gb = if needs[1] {
                Some(unbroadcast(&where_(&a_wins, &zero, g)?, &sb)?)
            } else {
                None
            };
            Ok(vec![ga, gb])
        }
    });
    Ok(y)
}

/// max(a, b); the gradient goes to `a` where a >= b (ties to the first argument), else to `b`.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.maximum([1, 5], [3, 2]).numpy()
/// array([3, 5], dtype=int32)
/// ```
pub fn maximum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    max_min(BinaryOp::Maximum, CompareOp::GreaterEqual, "Maximum", a, b)
}

/// min(a, b); the gradient goes to `a` where a <= b (ties to the first argument), else to `b`.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.minimum([1, 5], [3, 2]).numpy()
/// array([1, 2], dtype=int32)
/// ```
pub fn minimum(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    max_min(BinaryOp::Minimum, CompareOp::LessEqual, "Minimum", a, b)
}

/// (a - b)²; d/da = 2(a - b), d/db = -2(a - b).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.squared_difference([1.0, 5.0], 2.0).numpy()
/// array([1., 9.], dtype=float32)
/// ```
pub fn squared_difference(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::SquaredDifference, a, b)?;
    record_vectorizable("SquaredDifference", &[a, b], &[&y], || {
        let (sa, sb) = shapes(a, b);
        let (a1, b1, a2, b2) = (a.clone(), b.clone(), a.clone(), b.clone());
        binary_backward(
            sa,
            sb,
            move |g| mul(g, &mul(&a1.scalar_like(2.0), &sub(&a1, &b1)?)?),
            move |g| mul(g, &mul(&a2.scalar_like(-2.0), &sub(&a2, &b2)?)?),
        )
    });
    Ok(y)
}

/// -x; d/dx = -1.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.negative([1, -2]).numpy()
/// array([-1,  2], dtype=int32)
/// ```
pub fn neg(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Neg", x);
    }
    let y = unary_kernel(UnaryOp::Neg, x)?;
    record_vectorizable("Neg", &[x], &[&y], grad!(|g| neg(g)?));
    Ok(y)
}

/// |x|; d/dx = sign(x) (0 at 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.abs([-1.5, 2.0]).numpy()
/// array([1.5, 2. ], dtype=float32)
/// ```
pub fn abs(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::abs(x);
    }
    let y = unary_kernel(UnaryOp::Abs, x)?;
    record_vectorizable("Abs", &[x], &[&y], grad!(|g; x| mul(g, &sign(x)?)?));
    Ok(y)
}

/// sign(x); its derivative is 0 everywhere (TensorFlow returns zeros).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.sign([-3.0, 0.0, 2.0]).numpy()
/// array([-1.,  0.,  1.], dtype=float32)
/// ```
pub fn sign(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Sign", x);
    }
    let y = unary_kernel(UnaryOp::Sign, x)?;
    record_vectorizable("Sign", &[x], &[&y], grad!(|g| zeros_like(g)?));
    Ok(y)
}

/// x²; d/dx = 2x.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.square([2, -3]).numpy()
/// array([4, 9], dtype=int32)
/// ```
pub fn square(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Square", x);
    }
    let y = unary_kernel(UnaryOp::Square, x)?;
    record_vectorizable(
        "Square",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &mul(x, &x.scalar_like(2.0))?)?),
    );
    Ok(y)
}

/// 1/x; d/dx = -1/x² = -y² (0 where the upstream gradient is 0, as TensorFlow).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.reciprocal([2.0, 4.0]).numpy()
/// array([0.5 , 0.25], dtype=float32)
/// ```
pub fn reciprocal(x: &Tensor) -> Result<Tensor> {
    if x.dtype().is_complex() {
        return super::complex::unary("Reciprocal", x);
    }
    let y = unary_kernel(UnaryOp::Reciprocal, x)?;
    record_vectorizable(
        "Reciprocal",
        &[x],
        &[&y],
        grad!(|g; y| {
            super::math::zero_where_no_gradient(g, &neg(&mul(g, &square(y)?)?)?)?
        }),
    );
    Ok(y)
}

/// Element-wise comparison; the bool result has no gradient.
pub fn compare(op: CompareOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::compare_parts(op, a, b);
    }
    let y = Tensor::new(kernels::compare(op, a.value(), b.value())?);
    trace::node1("Compare", &[a, b], &y, || {
        move |x: &[Tensor]| compare(op, &x[0], &x[1])
    });
    Ok(y)
}

/// `x` as `dtype`; the gradient is cast back between float and complex types (complex to real
/// keeps the real part, so its gradient is `complex(g, 0)`, as TensorFlow's), and there is
/// none to or from integers and bools.
pub fn cast(x: &Tensor, dtype: ferrotape_core::DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        return Ok(x.clone());
    }
    let y = Tensor::new(kernels::cast(x.value(), dtype)?);
    trace::node1("Cast", &[x], &y, || move |t: &[Tensor]| cast(&t[0], dtype));
    if x.dtype().is_differentiable() {
        let src = x.dtype();
        record_vectorizable("Cast", &[x], &[&y], grad!(|g| cast(g, src)?));
    }
    Ok(y)
}
