//! Special functions (`tf.math.lgamma`, `digamma`, `igamma`, `betainc`, `zeta`, the Bessel
//! functions of `tf.math.special`, ...), with the derivatives TensorFlow defines for them. The
//! values come from `ferrotape_core::kernels::special`; each derivative is written with ops (often
//! another special function: ψ' = polygamma(1, ·), I₀' = I₁), so every order follows.
//!
//! Where TensorFlow declares no derivative for an argument (the order of `polygamma`, the
//! exponent of `zeta`, `a` and `b` of `betainc`) the gradient is None, as in TensorFlow; the
//! derivative of `igamma` in `a` (`IgammaGradA`) has no derivative of its own in TensorFlow, and
//! differentiating through it raises.

use std::f64::consts::PI;

use ferrotape_core::kernels::{self, BinaryOp, CompareOp, UnaryOp};
use ferrotape_core::{Error, Result};

use super::arith::{binary_backward, binary_kernel, unary_kernel};
use super::{
    add, compare, div, exp, log, log1p, mul, neg, sign, square, sub, unbroadcast, where_,
    zeros_like,
};
use crate::tape::{record, record_vectorizable};
use crate::tensor::Tensor;

/// log|Γ(x)|; d/dx = ψ(x) (digamma).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.lgamma([1.0, 0.5, 10.0]).numpy().round(4)
/// array([ 0.    ,  0.5724, 12.8018], dtype=float32)
/// ```
pub fn lgamma(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Lgamma, x)?;
    record_vectorizable("Lgamma", &[x], &[&y], grad!(|g; x| mul(g, &digamma(x)?)?));
    Ok(y)
}

/// ψ(x) = d/dx log Γ(x) (NaN at 0 and the negative integers); d/dx = polygamma(1, x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.digamma([1.0, 0.5]).numpy().round(4)
/// array([-0.5772, -1.9635], dtype=float32)
/// ```
pub fn digamma(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Digamma, x)?;
    record_vectorizable(
        "Digamma",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &polygamma(&x.scalar_like(1.0), x)?)?),
    );
    Ok(y)
}

/// ψ⁽ᵃ⁾(x), the a-th derivative of digamma (a a non-negative integer, else NaN);
/// d/dx = polygamma(a + 1, x); no gradient for the order `a` (None, as TensorFlow).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.polygamma([1.0, 2.0], [1.0, 1.0]).numpy().round(4)
/// array([ 1.6449, -2.4041], dtype=float32)
/// ```
pub fn polygamma(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Polygamma, a, x)?;
    record("Polygamma", &[a, x], &[&y], || {
        let (a, x) = (a.clone(), x.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let gx = if needs[1] {
                let next = polygamma(&add(&a, &a.scalar_like(1.0))?, &x)?;
                Some(unbroadcast(&mul(&gs[0], &next)?, x.shape())?)
            } else {
                None
            };
            Ok(vec![None, gx])
        }
    });
    Ok(y)
}

/// The Hurwitz zeta function ζ(x, q) = Σₖ (q + k)^-x; d/dq = -x·ζ(x + 1, q); no gradient
/// for `x` (None, as TensorFlow).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.zeta([2.0, 4.0], 1.0).numpy().round(4)
/// array([1.6449, 1.0823], dtype=float32)
/// ```
pub fn zeta(x: &Tensor, q: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Zeta, x, q)?;
    record("Zeta", &[x, q], &[&y], || {
        let (x, q) = (x.clone(), q.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let gq = if needs[1] {
                let next = zeta(&add(&x, &x.scalar_like(1.0))?, &q)?;
                let partial = neg(&mul(&x, &next)?)?;
                Some(unbroadcast(&mul(&gs[0], &partial)?, q.shape())?)
            } else {
                None
            };
            Ok(vec![None, gq])
        }
    });
    Ok(y)
}

/// erfc(x) = 1 - erf(x) without cancellation; d/dx = -2/√π·exp(-x²).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.erfc([0.0, 1.0, 5.0]).numpy()
/// array([1.0000000e+00, 1.5729921e-01, 1.5374598e-12], dtype=float32)
/// ```
pub fn erfc(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Erfc, x)?;
    record_vectorizable(
        "Erfc",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &mul(&x.scalar_like(-2.0 / PI.sqrt()), &exp(&neg(&square(x)?)?)?)?)?),
    );
    Ok(y)
}

/// erf⁻¹(x) on [-1, 1] (±inf at ±1, NaN outside); d/dx = √π/2·exp(y²), saved as the output.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.erfinv([0.0, 0.5, -0.9]).numpy().round(4)
/// array([ 0.    ,  0.4769, -1.1631], dtype=float32)
/// ```
pub fn erfinv(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Erfinv, x)?;
    record_vectorizable(
        "Erfinv",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &mul(&y.scalar_like(PI.sqrt() / 2.0), &exp(&square(y)?)?)?)?),
    );
    Ok(y)
}

/// erfc⁻¹(x) on [0, 2] (+inf at 0, -inf at 2, NaN outside); d/dx = -√π/2·exp(y²), saved as
/// the output.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.erfcinv([1.0, 0.5, 1.5]).numpy().round(4)
/// array([ 0.    ,  0.4769, -0.4769], dtype=float32)
/// ```
pub fn erfcinv(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Erfcinv, x)?;
    record_vectorizable(
        "Erfcinv",
        &[x],
        &[&y],
        grad!(|g; y| mul(g, &mul(&y.scalar_like(-PI.sqrt() / 2.0), &exp(&square(y)?)?)?)?),
    );
    Ok(y)
}

/// Φ⁻¹(p), the standard normal quantile (-inf at 0, +inf at 1, NaN outside [0, 1]);
/// d/dp = √(2π)·exp(y²/2), saved as the output.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.ndtri([0.5, 0.975]).numpy().round(4)
/// array([0.  , 1.96], dtype=float32)
/// ```
pub fn ndtri(p: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Ndtri, p)?;
    record_vectorizable(
        "Ndtri",
        &[p],
        &[&y],
        grad!(|g; y| {
            let half_square = mul(&square(y)?, &y.scalar_like(0.5))?;
            mul(g, &mul(&y.scalar_like((2.0 * PI).sqrt()), &exp(&half_square)?)?)?
        }),
    );
    Ok(y)
}

/// ∂P(a, x)/∂a for the regularized lower incomplete gamma function (TensorFlow's
/// `IgammaGradA`). TensorFlow defines no derivative for it, so a gradient through it raises.
pub fn igamma_grad_a(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::IgammaGradA, a, x)?;
    record("IgammaGradA", &[a, x], &[&y], || {
        |_: &[Tensor], _: &[bool]| -> Result<Vec<Option<Tensor>>> {
            Err(Error::unimplemented(
                "IgammaGradA",
                "no gradient is defined for IgammaGradA (the derivative of igamma/igammac in \
                 `a`), as in TensorFlow: differentiate igamma in `a` only once",
            ))
        }
    });
    Ok(y)
}

/// ∂P(a, x)/∂x = exp(-x + (a-1)·log x - lgamma(a)), the density of Gamma(a, 1).
fn igamma_grad_x(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let a_minus_1 = sub(a, &a.scalar_like(1.0))?;
    let log_density = sub(&sub(&mul(&a_minus_1, &log(x)?)?, x)?, &lgamma(a)?)?;
    exp(&log_density)
}

/// The shared backward of igamma (`sign` 1) and igammac (`sign` -1 : Q = 1 - P).
fn igamma_backward(
    a: &Tensor,
    x: &Tensor,
    sign: f64,
) -> impl Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static {
    let (a1, x1, a2, x2) = (a.clone(), x.clone(), a.clone(), x.clone());
    binary_backward(
        a.shape().into(),
        x.shape().into(),
        move |g| mul(g, &mul(&g.scalar_like(sign), &igamma_grad_a(&a1, &x1)?)?),
        move |g| mul(g, &mul(&g.scalar_like(sign), &igamma_grad_x(&a2, &x2)?)?),
    )
}

/// P(a, x) = γ(a, x)/Γ(a), the regularized lower incomplete gamma function (NaN for a <= 0
/// or x < 0); d/dx = x^(a-1)·e^-x/Γ(a), d/da = `IgammaGradA` (whose own derivative TensorFlow
/// leaves undefined).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.igamma([1.0, 2.0], [1.0, 1.0]).numpy().round(4)
/// array([0.6321, 0.2642], dtype=float32)
/// ```
pub fn igamma(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Igamma, a, x)?;
    record("Igamma", &[a, x], &[&y], || igamma_backward(a, x, 1.0));
    Ok(y)
}

/// Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function; the derivatives
/// are those of igamma negated.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.igammac([1.0, 2.0], [1.0, 1.0]).numpy().round(4)
/// array([0.3679, 0.7358], dtype=float32)
/// ```
pub fn igammac(a: &Tensor, x: &Tensor) -> Result<Tensor> {
    let y = binary_kernel(BinaryOp::Igammac, a, x)?;
    record("Igammac", &[a, x], &[&y], || igamma_backward(a, x, -1.0));
    Ok(y)
}

/// c·log(v), but 0 where c is 0 (TensorFlow's xlogy, which keeps betainc's derivative finite
/// at x = 0 when a = 1); `log_v` is log(v) already taken.
fn x_times_log(c: &Tensor, log_v: &Tensor) -> Result<Tensor> {
    let zero = compare(CompareOp::Equal, c, &c.scalar_like(0.0))?;
    let product = mul(c, log_v)?;
    where_(&zero, &zeros_like(&product)?, &product)
}

/// I_x(a, b), the regularized incomplete beta function (NaN for a <= 0, b <= 0 or x outside
/// [0, 1]); d/dx = x^(a-1)(1-x)^(b-1)/B(a, b); no gradient for `a` or `b` (None, as
/// TensorFlow). The three operands broadcast together.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.betainc([1.0, 2.0], [1.0, 3.0], [0.3, 0.4]).numpy().round(4)
/// array([0.3   , 0.5248], dtype=float32)
/// ```
pub fn betainc(a: &Tensor, b: &Tensor, x: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::betainc(a.value(), b.value(), x.value())?);
    crate::trace::node1("Betainc", &[a, b, x], &y, || {
        |t: &[Tensor]| betainc(&t[0], &t[1], &t[2])
    });
    record("Betainc", &[a, b, x], &[&y], || {
        let (a, b, x) = (a.clone(), b.clone(), x.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            if !needs[2] {
                return Ok(vec![None, None, None]);
            }
            let one = x.scalar_like(1.0);
            let log_beta = sub(&add(&lgamma(&a)?, &lgamma(&b)?)?, &lgamma(&add(&a, &b)?)?)?;
            let left = x_times_log(&sub(&b, &one)?, &log1p(&neg(&x)?)?)?;
            let right = x_times_log(&sub(&a, &one)?, &log(&x)?)?;
            let partial = exp(&sub(&add(&left, &right)?, &log_beta)?)?;
            let gx = unbroadcast(&mul(&gs[0], &partial)?, x.shape())?;
            Ok(vec![None, None, Some(gx)])
        }
    });
    Ok(y)
}

/// I₀(x), the modified Bessel function of the first kind of order 0; d/dx = I₁(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.bessel_i0([0.0, 1.0]).numpy().round(4)
/// array([1.    , 1.2661], dtype=float32)
/// ```
pub fn bessel_i0(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselI0, x)?;
    record_vectorizable(
        "BesselI0",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &bessel_i1(x)?)?),
    );
    Ok(y)
}

/// e^-|x|·I₀(x); d/dx = i1e(x) - sign(x)·i0e(x), with the output saved.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.bessel_i0e([0.0, 1.0]).numpy().round(4)
/// array([1.    , 0.4658], dtype=float32)
/// ```
pub fn bessel_i0e(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselI0e, x)?;
    record_vectorizable(
        "BesselI0e",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&bessel_i1e(x)?, &mul(&sign(x)?, y)?)?)?),
    );
    Ok(y)
}

/// I₁(x), the modified Bessel function of the first kind of order 1;
/// d/dx = I₀(x) - I₁(x)/x (1/2 at x = 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.bessel_i1([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.5652], dtype=float32)
/// ```
pub fn bessel_i1(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselI1, x)?;
    record_vectorizable(
        "BesselI1",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&bessel_i0(x)?, &div_at_zero(y, x, 0.5)?)?)?),
    );
    Ok(y)
}

/// e^-|x|·I₁(x); d/dx = i0e(x) - i1e(x)·(sign(x) + 1/x) (1/2 at x = 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.bessel_i1e([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.2079], dtype=float32)
/// ```
pub fn bessel_i1e(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselI1e, x)?;
    record_vectorizable(
        "BesselI1e",
        &[x],
        &[&y],
        grad!(|g; x, y| {
            let decay = add(&mul(y, &sign(x)?)?, &div_at_zero(y, x, 0.5)?)?;
            mul(g, &sub(&bessel_i0e(x)?, &decay)?)?
        }),
    );
    Ok(y)
}

/// y/x, taking `at_zero` where x = 0 (the limit of I₁(x)/x and J₁(x)/x there), written so that
/// its own derivative is finite too: x is replaced by 1 where it is 0 before dividing.
fn div_at_zero(y: &Tensor, x: &Tensor, at_zero: f64) -> Result<Tensor> {
    let zero = compare(CompareOp::Equal, x, &x.scalar_like(0.0))?;
    let safe_x = where_(&zero, &super::ones_like(x)?, x)?;
    let limit = full_like(y, at_zero)?;
    where_(&zero, &limit, &div(y, &safe_x)?)
}

/// J₀(x), the Bessel function of the first kind of order 0; d/dx = -J₁(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_j0([0.0, 1.0]).numpy().round(4)
/// array([1.    , 0.7652], dtype=float32)
/// ```
pub fn bessel_j0(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselJ0, x)?;
    record_vectorizable(
        "BesselJ0",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &neg(&bessel_j1(x)?)?)?),
    );
    Ok(y)
}

/// J₁(x), the Bessel function of the first kind of order 1; d/dx = J₀(x) - J₁(x)/x
/// (1/2 at x = 0).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_j1([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.4401], dtype=float32)
/// ```
pub fn bessel_j1(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselJ1, x)?;
    record_vectorizable(
        "BesselJ1",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&bessel_j0(x)?, &div_at_zero(y, x, 0.5)?)?)?),
    );
    Ok(y)
}

/// Y₀(x), the Bessel function of the second kind of order 0 (-inf at 0, NaN below);
/// d/dx = -Y₁(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_y0([1.0, 2.0]).numpy().round(4)
/// array([0.0883, 0.5104], dtype=float32)
/// ```
pub fn bessel_y0(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselY0, x)?;
    record_vectorizable(
        "BesselY0",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &neg(&bessel_y1(x)?)?)?),
    );
    Ok(y)
}

/// Y₁(x), the Bessel function of the second kind of order 1 (-inf at 0, NaN below);
/// d/dx = Y₀(x) - Y₁(x)/x.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_y1([1.0, 2.0]).numpy().round(4)
/// array([-0.7812, -0.107 ], dtype=float32)
/// ```
pub fn bessel_y1(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselY1, x)?;
    record_vectorizable(
        "BesselY1",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&bessel_y0(x)?, &div(y, x)?)?)?),
    );
    Ok(y)
}

/// K₀(x), the modified Bessel function of the second kind of order 0 (+inf at 0, NaN
/// below); d/dx = -K₁(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_k0([0.5, 2.0]).numpy().round(4)
/// array([0.9244, 0.1139], dtype=float32)
/// ```
pub fn bessel_k0(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselK0, x)?;
    record_vectorizable(
        "BesselK0",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &neg(&bessel_k1(x)?)?)?),
    );
    Ok(y)
}

/// e^x·K₀(x); d/dx = k0e(x) - k1e(x), with the output saved.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_k0e([0.5, 2.0]).numpy().round(4)
/// array([1.5241, 0.8416], dtype=float32)
/// ```
pub fn bessel_k0e(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselK0e, x)?;
    record_vectorizable(
        "BesselK0e",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(y, &bessel_k1e(x)?)?)?),
    );
    Ok(y)
}

/// K₁(x), the modified Bessel function of the second kind of order 1 (+inf at 0, NaN
/// below); d/dx = -K₀(x) - K₁(x)/x.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_k1([0.5, 2.0]).numpy().round(4)
/// array([1.6564, 0.1399], dtype=float32)
/// ```
pub fn bessel_k1(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselK1, x)?;
    record_vectorizable(
        "BesselK1",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &neg(&add(&bessel_k0(x)?, &div(y, x)?)?)?)?),
    );
    Ok(y)
}

/// e^x·K₁(x); d/dx = k1e(x)·(1 - 1/x) - k0e(x), with the output saved.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.bessel_k1e([0.5, 2.0]).numpy().round(4)
/// array([2.731 , 1.0335], dtype=float32)
/// ```
pub fn bessel_k1e(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::BesselK1e, x)?;
    record_vectorizable(
        "BesselK1e",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&sub(y, &div(y, x)?)?, &bessel_k0e(x)?)?)?),
    );
    Ok(y)
}

/// Dawson's integral F(x) = e^(-x²)·∫₀ˣ e^(t²) dt; d/dx = 1 - 2x·F(x), with the output
/// saved.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.dawsn([0.5, 1.0]).numpy().round(4)
/// array([0.4244, 0.5381], dtype=float32)
/// ```
pub fn dawsn(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Dawsn, x)?;
    record_vectorizable(
        "Dawsn",
        &[x],
        &[&y],
        grad!(|g; x, y| mul(g, &sub(&x.scalar_like(1.0), &mul(&x.scalar_like(2.0), &mul(x, y)?)?)?)?),
    );
    Ok(y)
}

/// The exponential integral Ei(x) for x > 0 (-inf at 0; NaN for x < 0, as TensorFlow);
/// d/dx = eˣ/x.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.expint([0.5, 1.0]).numpy().round(4)
/// array([0.4542, 1.8951], dtype=float32)
/// ```
pub fn expint(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Expint, x)?;
    record_vectorizable(
        "Expint",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &div(&exp(x)?, x)?)?),
    );
    Ok(y)
}

/// The Fresnel cosine integral C(x) = ∫₀ˣ cos(πt²/2) dt; d/dx = cos(πx²/2).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.fresnel_cos([0.5, 1.0]).numpy().round(4)
/// array([0.4923, 0.7799], dtype=float32)
/// ```
pub fn fresnel_cos(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::FresnelCos, x)?;
    record_vectorizable(
        "FresnelCos",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &super::cos(&mul(&x.scalar_like(PI / 2.0), &square(x)?)?)?)?),
    );
    Ok(y)
}

/// The Fresnel sine integral S(x) = ∫₀ˣ sin(πt²/2) dt; d/dx = sin(πx²/2).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.fresnel_sin([0.5, 1.0]).numpy().round(4)
/// array([0.0647, 0.4383], dtype=float32)
/// ```
pub fn fresnel_sin(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::FresnelSin, x)?;
    record_vectorizable(
        "FresnelSin",
        &[x],
        &[&y],
        grad!(|g; x| mul(g, &super::sin(&mul(&x.scalar_like(PI / 2.0), &square(x)?)?)?)?),
    );
    Ok(y)
}

/// Spence's function ∫₁ˣ ln t/(1-t) dt = Li₂(1 - x) (NaN below 0); d/dx = ln x/(1 - x),
/// -1 at x = 1 (its limit).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.math.special.spence([0.0, 1.0, 2.0]).numpy().round(4)
/// array([ 1.6449,  0.    , -0.8225], dtype=float32)
/// ```
pub fn spence(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Spence, x)?;
    record_vectorizable(
        "Spence",
        &[x],
        &[&y],
        grad!(|g; x| {
            let one = x.scalar_like(1.0);
        let at_one = compare(CompareOp::Equal, x, &one)?;
        let safe = where_(&at_one, &x.scalar_like(2.0), x)?;
        let partial = div(&log(&safe)?, &sub(&one, &safe)?)?;
        mul(g, &where_(&at_one, &full_like(x, -1.0)?, &partial)?)?
        }),
    );
    Ok(y)
}

/// A tensor of `t`'s shape and dtype filled with `value` (a constant: no gradient).
fn full_like(t: &Tensor, value: f64) -> Result<Tensor> {
    let y = Tensor::new(ferrotape_core::Array::full(
        "FullLike",
        t.dtype(),
        t.shape(),
        value,
    )?);
    // A trace's shapes are fixed, so the filled tensor is a constant of it (as `zeros_like`).
    crate::trace::constant(&y);
    Ok(y)
}
