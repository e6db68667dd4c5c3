//! Complex tensors: `complex`, `real` and `imag` are the only ops with complex kernels (see
//! `DType`'s module docs); every other complex op here is real arithmetic on the two parts,
//! and the ops of the other modules hand complex operands to these functions first.
//!
//! Gradients: TensorFlow's gradient for a complex `z = x + iy` is `dL/dx + i·dL/dy` (for a
//! holomorphic `f`, the upstream gradient times `conj(f'(z))`). Differentiating through the
//! parts gives exactly that: `complex`'s backward hands `real(g)` and `imag(g)` to its parts, and
//! `real`/`imag`'s backward puts a real gradient back as `complex(g, 0)`/`complex(0, g)`. So
//! these compositions need no gradient code of their own, and their second derivatives come
//! the same way.

use ferrotape_core::kernels::{self, axes_mask, BinaryOp, CompareOp, ComplexPart, LogicalOp};
use ferrotape_core::{broadcast_shapes, Error, Result};

use super::arith::{binary_backward, binary_kernel};
use super::{
    add, broadcast_to, compare, cos, cosh, div, exp, log, logical, matmul, matrix_transpose, mul,
    neg, ones, reduce_mean, reduce_sum, reshape, sin, sinh, slice, sqrt, sub, transpose, where_,
    zeros_like,
};
use crate::tape::record;
use crate::tensor::Tensor;
use crate::trace;

/// `real + i·imag` (`tf.complex`): float32 parts make complex64, float64 ones complex128; the
/// parts broadcast. The gradient hands the real and imaginary parts of the upstream gradient
/// to `real` and `imag`.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.complex([1.0, 2.0], 3.0).numpy()
/// array([1.+3.j, 2.+3.j], dtype=complex64)
/// ```
pub fn complex(re: &Tensor, im: &Tensor) -> Result<Tensor> {
    const OP: &str = "Complex";
    if re.dtype() != im.dtype() || re.dtype().complex_of().is_none() {
        return Err(Error::dtype(
            OP,
            format!(
                "The `real` and `imag` components have incorrect types: {} {}. They must be \
                 consistent, and one of [float32, float64]",
                re.dtype(),
                im.dtype()
            ),
        ));
    }
    let shape = broadcast_shapes(OP, re.shape(), im.shape())?;
    let (re, im) = (broadcast_to(re, &shape)?, broadcast_to(im, &shape)?);
    let y = Tensor::new(kernels::complex(re.value(), im.value())?);
    trace::node1("Complex", &[&re, &im], &y, || {
        move |x: &[Tensor]| complex(&x[0], &x[1])
    });
    record("Complex", &[&re, &im], &[&y], || {
        move |gs: &[Tensor], needs: &[bool]| {
            let gr = if needs[0] { Some(real(&gs[0])?) } else { None };
            let gi = if needs[1] { Some(imag(&gs[0])?) } else { None };
            Ok(vec![gr, gi])
        }
    });
    Ok(y)
}

fn part(z: &Tensor, which: ComplexPart) -> Result<Tensor> {
    let y = Tensor::new(kernels::complex_part(z.value(), which)?);
    trace::node1("ComplexPart", &[z], &y, || {
        move |x: &[Tensor]| part(&x[0], which)
    });
    let name = match which {
        ComplexPart::Real => "Real",
        ComplexPart::Imag => "Imag",
    };
    record(name, &[z], &[&y], || {
        move |gs: &[Tensor], _: &[bool]| {
            let (g, zero) = (&gs[0], zeros_like(&gs[0])?);
            Ok(vec![Some(match which {
                ComplexPart::Real => complex(g, &zero)?,
                ComplexPart::Imag => complex(&zero, g)?,
            })])
        }
    });
    Ok(y)
}

/// The real part (`tf.math.real`): float32 for complex64, float64 for complex128; a real
/// tensor is returned as it is. The gradient of a real `g` is `complex(g, 0)`.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.real(ft.constant([1 + 2j, -3j])).numpy()
/// array([ 1., -0.])
/// ```
pub fn real(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        return Ok(z.clone());
    }
    part(z, ComplexPart::Real)
}

/// The imaginary part (`tf.math.imag`); zeros for a real tensor. The gradient of a real `g` is
/// `complex(0, g)`.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.imag(ft.constant([1 + 2j, -3j])).numpy()
/// array([ 2., -3.])
/// ```
pub fn imag(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        return zeros_like(z);
    }
    part(z, ComplexPart::Imag)
}

/// Both parts of a complex tensor.
fn parts(z: &Tensor) -> Result<(Tensor, Tensor)> {
    Ok((part(z, ComplexPart::Real)?, part(z, ComplexPart::Imag)?))
}

/// The complex conjugate (`tf.math.conj`); a real tensor is returned as it is.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.conj(ft.constant([1 + 2j])).numpy()
/// array([1.-2.j])
/// ```
pub fn conj(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        return Ok(z.clone());
    }
    let (x, y) = parts(z)?;
    complex(&x, &neg(&y)?)
}

/// atan2(y, x) with the gradient (x·g, -y·g)/(x² + y²).
fn atan2(y: &Tensor, x: &Tensor) -> Result<Tensor> {
    let out = binary_kernel(BinaryOp::Atan2, y, x)?;
    record("Atan2", &[y, x], &[&out], || {
        let (sy, sx) = (y.shape().into(), x.shape().into());
        let (y1, x1, y2, x2) = (y.clone(), x.clone(), y.clone(), x.clone());
        let r2 = |y: &Tensor, x: &Tensor| add(&mul(x, x)?, &mul(y, y)?);
        binary_backward(
            sy,
            sx,
            move |g| mul(g, &div(&x1, &r2(&y1, &x1)?)?),
            move |g| mul(g, &div(&neg(&y2)?, &r2(&y2, &x2)?)?),
        )
    });
    Ok(out)
}

/// The argument of each element (`tf.math.angle`): atan2(imag, real), in (-pi, pi]; for a
/// real tensor pi where it is negative and 0 elsewhere.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.angle(ft.constant([1j, -1.0 + 0j])).numpy().round(4)
/// array([1.5708, 3.1416])
/// ```
pub fn angle(z: &Tensor) -> Result<Tensor> {
    if !z.dtype().is_complex() {
        // Piecewise constant on the reals (so its gradient is 0, -0.0 included as 0).
        let zero = zeros_like(z)?;
        let negative = compare(CompareOp::Less, z, &zero)?;
        return where_(&negative, &z.scalar_like(std::f64::consts::PI), &zero);
    }
    let (x, y) = parts(z)?;
    atan2(&y, &x)
}

/// |z| as sqrt(x² + y²); the square root of 0 is taken where its gradient is 0 (TensorFlow's
/// gradient of |z| is `g·z/|z|`, 0 at 0).
pub(crate) fn abs(z: &Tensor) -> Result<Tensor> {
    let (x, y) = parts(z)?;
    let r2 = add(&mul(&x, &x)?, &mul(&y, &y)?)?;
    let zero = zeros_like(&r2)?;
    let nonzero = compare(CompareOp::Greater, &r2, &zero)?;
    let safe = where_(&nonzero, &r2, &super::ones_like(&r2)?)?;
    where_(&nonzero, &sqrt(&safe)?, &zero)
}

/// The error for a complex operand beside a real one (TensorFlow's binary ops need one dtype).
fn same_dtype(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::mismatch(op, a.dtype(), b.dtype()));
    }
    Ok(())
}

/// The element-wise binary ops of complex operands, on their parts.
pub(crate) fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    same_dtype(op.name(), a, b)?;
    let ((ar, ai), (br, bi)) = (parts(a)?, parts(b)?);
    match op {
        BinaryOp::Add => complex(&add(&ar, &br)?, &add(&ai, &bi)?),
        BinaryOp::Sub => complex(&sub(&ar, &br)?, &sub(&ai, &bi)?),
        BinaryOp::Mul => complex(
            &sub(&mul(&ar, &br)?, &mul(&ai, &bi)?)?,
            &add(&mul(&ar, &bi)?, &mul(&ai, &br)?)?,
        ),
        BinaryOp::Div => {
            let d = add(&mul(&br, &br)?, &mul(&bi, &bi)?)?;
            complex(
                &div(&add(&mul(&ar, &br)?, &mul(&ai, &bi)?)?, &d)?,
                &div(&sub(&mul(&ai, &br)?, &mul(&ar, &bi)?)?, &d)?,
            )
        }
        _ => Err(Error::unsupported(op.name(), a.dtype(), "a real dtype")),
    }
}

/// The element-wise one-input ops of a complex operand, by TensorFlow's op name.
pub(crate) fn unary(op: &'static str, z: &Tensor) -> Result<Tensor> {
    let (x, y) = parts(z)?;
    match op {
        "Neg" => complex(&neg(&x)?, &neg(&y)?),
        "Square" => binary(BinaryOp::Mul, z, z),
        "Reciprocal" => {
            let d = add(&mul(&x, &x)?, &mul(&y, &y)?)?;
            complex(&div(&x, &d)?, &neg(&div(&y, &d)?)?)
        }
        // exp(x)·(cos y + i sin y)
        "Exp" => {
            let e = exp(&x)?;
            complex(&mul(&e, &cos(&y)?)?, &mul(&e, &sin(&y)?)?)
        }
        // log|z| + i·arg z (the principal branch)
        "Log" => complex(&log(&abs(z)?)?, &atan2(&y, &x)?),
        // sqrt|z|·(cos(arg/2) + i sin(arg/2)): the principal root, smooth off the negative axis
        "Sqrt" => {
            let (r, half) = (sqrt(&abs(z)?)?, mul(&atan2(&y, &x)?, &x.scalar_like(0.5))?);
            complex(&mul(&r, &cos(&half)?)?, &mul(&r, &sin(&half)?)?)
        }
        // z/|z|, 0 at 0
        "Sign" => {
            let r = abs(z)?;
            let nonzero = compare(CompareOp::Greater, &r, &zeros_like(&r)?)?;
            let safe = where_(&nonzero, &r, &super::ones_like(&r)?)?;
            let unit = complex(&div(&x, &safe)?, &div(&y, &safe)?)?;
            where_(&nonzero, &unit, &zeros_like(z)?)
        }
        // sin x cosh y + i cos x sinh y, and cos x cosh y - i sin x sinh y
        "Sin" => complex(&mul(&sin(&x)?, &cosh(&y)?)?, &mul(&cos(&x)?, &sinh(&y)?)?),
        "Cos" => complex(
            &mul(&cos(&x)?, &cosh(&y)?)?,
            &neg(&mul(&sin(&x)?, &sinh(&y)?)?)?,
        ),
        // sinh x cos y + i cosh x sin y, and cosh x cos y + i sinh x sin y
        "Sinh" => complex(&mul(&sinh(&x)?, &cos(&y)?)?, &mul(&cosh(&x)?, &sin(&y)?)?),
        "Cosh" => complex(&mul(&cosh(&x)?, &cos(&y)?)?, &mul(&sinh(&x)?, &sin(&y)?)?),
        _ => Err(Error::unsupported(op, z.dtype(), "a real dtype")),
    }
}

/// `==`/`!=` of complex operands (both parts equal); the order comparisons are not defined.
pub(crate) fn compare_parts(op: CompareOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let name = match op {
        CompareOp::Equal => "Equal",
        CompareOp::NotEqual => "NotEqual",
        _ => return Err(Error::unsupported("Compare", a.dtype(), "a real dtype")),
    };
    same_dtype(name, a, b)?;
    let ((ar, ai), (br, bi)) = (parts(a)?, parts(b)?);
    let (re, im) = (compare(op, &ar, &br)?, compare(op, &ai, &bi)?);
    let join = match op {
        CompareOp::Equal => LogicalOp::And,
        _ => LogicalOp::Or,
    };
    logical(join, &re, &im)
}

/// `reduce_sum`/`reduce_mean` of a complex tensor, part by part.
pub(crate) fn reduce(mean: bool, z: &Tensor, axes: Option<&[i64]>, keep: bool) -> Result<Tensor> {
    let (x, y) = parts(z)?;
    let f = if mean { reduce_mean } else { reduce_sum };
    complex(&f(&x, axes, keep)?, &f(&y, axes, keep)?)
}

/// `reduce_prod` of a complex tensor: the reduced axes moved to the front and flattened, then
/// one complex multiplication per reduced element (its gradient, TensorFlow's, follows from
/// the multiplications; zeros need no special case).
pub(crate) fn reduce_prod(z: &Tensor, axes: Option<&[i64]>, keep: bool) -> Result<Tensor> {
    let mask = axes_mask("Prod", z.rank(), axes)?;
    let (reduced, kept): (Vec<usize>, Vec<usize>) = (0..z.rank()).partition(|&i| mask[i]);
    let perm: Vec<usize> = reduced.iter().chain(&kept).copied().collect();
    let n: usize = reduced.iter().map(|&i| z.shape()[i]).product();
    let kept_dims: Vec<usize> = kept.iter().map(|&i| z.shape()[i]).collect();
    let flat = reshape(&transpose(z, &perm)?, &[&[n][..], &kept_dims[..]].concat())?;
    let mut acc = ones(z.dtype(), &kept_dims)?;
    let (begin, mut size) = (vec![0; kept_dims.len() + 1], flat.shape().to_vec());
    size[0] = 1;
    for i in 0..n {
        let mut at = begin.clone();
        at[0] = i;
        acc = binary(
            BinaryOp::Mul,
            &acc,
            &reshape(&slice(&flat, &at, &size)?, &kept_dims)?,
        )?;
    }
    if !keep {
        return Ok(acc);
    }
    let shape: Vec<usize> = (0..z.rank())
        .map(|i| if mask[i] { 1 } else { z.shape()[i] })
        .collect();
    reshape(&acc, &shape)
}

/// The matrix product of complex operands: (A + iB)(C + iD) = (AC - BD) + i(AD + BC).
pub(crate) fn complex_matmul(a: &Tensor, b: &Tensor, ta: bool, tb: bool) -> Result<Tensor> {
    same_dtype("MatMul", a, b)?;
    let ((ar, ai), (br, bi)) = (parts(a)?, parts(b)?);
    let mm = |p: &Tensor, q: &Tensor| matmul(p, q, ta, tb);
    complex(
        &sub(&mm(&ar, &br)?, &mm(&ai, &bi)?)?,
        &add(&mm(&ar, &bi)?, &mm(&ai, &br)?)?,
    )
}

/// The conjugate transpose of the last two axes (`tf.linalg.adjoint`).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.linalg.adjoint(ft.constant([[1 + 1j, 2j]])).numpy()
/// array([[1.-1.j],
///        [0.-2.j]])
/// ```
pub fn adjoint(x: &Tensor) -> Result<Tensor> {
    matrix_transpose(&conj(x)?)
}
