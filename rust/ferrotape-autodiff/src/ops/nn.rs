//! Activations, softmax and the cross-entropy losses of `tf.nn`.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

use ferrotape_core::kernels::{self, axes_mask, BinaryOp, CompareOp, ReduceOp, UnaryOp};
use ferrotape_core::{Error, Result};

use super::math::{masked, positive};
use super::{
    add, arith::unary_kernel, cast, compare, erf, exp, log1p, mul, neg, one_hot, reduce_sum,
    sigmoid, sub, tanh, where_, zeros_like,
};
use crate::tape::{record, record_vectorizable};
use crate::tensor::Tensor;
use crate::trace;

/// max(x, 0); d/dx = 1 where x > 0, else 0 (0 at the kink, as TensorFlow).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.nn.relu([-1.0, 2.0]).numpy()
/// array([0., 2.], dtype=float32)
/// ```
pub fn relu(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Relu, x)?;
    record_vectorizable("Relu", &[x], &[&y], grad!(|g; y| relu_grad(g, y)?));
    Ok(y)
}

/// `g` where `y > 0`, else 0 (relu's backward, one fused pass). Linear in `g`:
/// d/dg = relu_grad(gg, y); `y` only selects, so it has no gradient.
fn relu_grad(g: &Tensor, y: &Tensor) -> Result<Tensor> {
    let dx = Tensor::new(kernels::relu_grad(g.value(), y.value())?);
    trace::node1("ReluGrad", &[g, y], &dx, || {
        |t: &[Tensor]| relu_grad(&t[0], &t[1])
    });
    record_vectorizable("ReluGrad", &[g], &[&dx], grad!(|gg; y| relu_grad(gg, y)?));
    Ok(dx)
}

/// min(max(x, 0), 6); d/dx = 1 on (0, 6), else 0.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.nn.relu6([-1.0, 3.0, 8.0]).numpy()
/// array([0., 3., 6.], dtype=float32)
/// ```
pub fn relu6(x: &Tensor) -> Result<Tensor> {
    let relu = kernels::unary(UnaryOp::Relu, x.value())?;
    let y = Tensor::new(kernels::binary(
        BinaryOp::Minimum,
        &relu,
        x.scalar_like(6.0).value(),
    )?);
    trace::node1("Relu6", &[x], &y, || |t: &[Tensor]| relu6(&t[0]));
    record_vectorizable(
        "Relu6",
        &[x],
        &[&y],
        grad!(|g; x| {
            let inside = super::logical(
                kernels::LogicalOp::And,
                &positive(x)?,
                &compare(CompareOp::Less, x, &x.scalar_like(6.0))?,
            )?;
            masked(&inside, g)?
        }),
    );
    Ok(y)
}

/// x if x > 0 else alpha·x; d/dx = 1 or alpha.
pub fn leaky_relu(x: &Tensor, alpha: f64) -> Result<Tensor> {
    let pos = positive(x)?;
    let y = where_(&pos, x, &mul(x, &x.scalar_like(alpha))?)?;
    Ok(y)
}

/// `x` where `linear` is false, else 0: exp() is then only evaluated on the negative side, so
/// a large positive `x` cannot overflow it (and a NaN from there cannot leak into the gradient).
fn negative_side(x: &Tensor, linear: &Tensor) -> Result<Tensor> {
    where_(linear, &zeros_like(x)?, x)
}

/// x if x > 0 else exp(x) - 1; d/dx = 1 or y + 1.
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.nn.elu([-1.0, 2.0]).numpy().round(4)
/// array([-0.6321,  2.    ], dtype=float32)
/// ```
pub fn elu(x: &Tensor) -> Result<Tensor> {
    let pos = positive(x)?;
    where_(&pos, x, &super::expm1(&negative_side(x, &pos)?)?)
}

/// scale·(x if x > 0 else alpha·(exp(x) - 1)) with TensorFlow's constants; d/dx = scale for
/// x ≥ 0, else scale·alpha·exp(x) (composed of differentiable ops).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.nn.selu([-1.0, 1.0]).numpy().round(4)
/// array([-1.1113,  1.0507], dtype=float32)
/// ```
pub fn selu(x: &Tensor) -> Result<Tensor> {
    const ALPHA: f64 = 1.673_263_242_354_377_3;
    const SCALE: f64 = 1.050_700_987_355_480_5;
    // TensorFlow's SeluGrad takes the linear branch at 0 (its test is `x < 0`).
    let nonneg = compare(CompareOp::GreaterEqual, x, &x.scalar_like(0.0))?;
    let exp_side = super::expm1(&negative_side(x, &nonneg)?)?;
    let negative = mul(&x.scalar_like(ALPHA), &exp_side)?;
    mul(&x.scalar_like(SCALE), &where_(&nonneg, x, &negative)?)
}

/// 0.5·x·(1 + erf(x/√2)), or the tanh approximation when `approximate`; the derivative
/// follows from the composition (d/dx = Φ(x) + x·φ(x) for the exact form).
pub fn gelu(x: &Tensor, approximate: bool) -> Result<Tensor> {
    let half_x = mul(x, &x.scalar_like(0.5))?;
    let inner = if approximate {
        let cube = mul(&mul(x, x)?, x)?;
        let arg = mul(
            &x.scalar_like((2.0 / PI).sqrt()),
            &add(x, &mul(&x.scalar_like(0.044715), &cube)?)?,
        )?;
        tanh(&arg)?
    } else {
        erf(&mul(x, &x.scalar_like(FRAC_1_SQRT_2))?)?
    };
    mul(&half_x, &add(&x.scalar_like(1.0), &inner)?)
}

/// log(1 + exp(x)), computed stably; d/dx = sigmoid(x).
///
/// For example:
///
/// ```python
/// >>> import ferrotape as ft
/// >>> ft.nn.softplus([0.0, 1.0]).numpy().round(4)
/// array([0.6931, 1.3133], dtype=float32)
/// ```
pub fn softplus(x: &Tensor) -> Result<Tensor> {
    let y = unary_kernel(UnaryOp::Softplus, x)?;
    record_vectorizable("Softplus", &[x], &[&y], grad!(|g; x| mul(g, &sigmoid(x)?)?));
    Ok(y)
}

/// x·sigmoid(x) (also called silu); d/dx = s + x·s·(1 - s) with s = sigmoid(x).
pub fn swish(x: &Tensor) -> Result<Tensor> {
    mul(x, &sigmoid(x)?)
}

/// `tf.nn.silu(x, beta)`: x·sigmoid(beta·x); d/dx = s + beta·x·s·(1 - s), s = sigmoid(beta·x)
/// (through the ops it is built from). beta = 1 is [`swish`].
pub fn silu(x: &Tensor, beta: f64) -> Result<Tensor> {
    if beta == 1.0 {
        return swish(x);
    }
    mul(x, &sigmoid(&mul(x, &x.scalar_like(beta))?)?)
}

fn axis_mask(op: &'static str, x: &Tensor, axis: i64) -> Result<Vec<bool>> {
    if x.rank() == 0 {
        return Err(Error::invalid(
            op,
            "expected a tensor of rank >= 1, received a scalar",
        ));
    }
    axes_mask(op, x.rank(), Some(&[axis]))
}

/// The shifted exponentials exp(x - max) and their sum along the axis, from the kernels.
fn shifted_exp(
    x: &Tensor,
    mask: &[bool],
) -> Result<(
    ferrotape_core::Array,
    ferrotape_core::Array,
    ferrotape_core::Array,
)> {
    let max = kernels::reduce(ReduceOp::Max, x.value(), mask, true)?;
    let shifted = kernels::binary(BinaryOp::Sub, x.value(), &max)?;
    let e = kernels::unary(UnaryOp::Exp, &shifted)?;
    let sum = kernels::reduce(ReduceOp::Sum, &e, mask, true)?;
    Ok((shifted, e, sum))
}

/// exp(x) / Σ exp(x) along `axis`; d/dx = y·(g - Σ g·y).
pub fn softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
    let mask = axis_mask("Softmax", x, axis)?;
    let (_, e, sum) = shifted_exp(x, &mask)?;
    let y = Tensor::new(kernels::binary(BinaryOp::Div, &e, &sum)?);
    trace::node1("Softmax", &[x], &y, || {
        move |t: &[Tensor]| softmax(&t[0], axis)
    });
    record("Softmax", &[x], &[&y], || {
        let y = y.clone();
        move |gs: &[Tensor], _: &[bool]| {
            let gy = mul(&gs[0], &y)?;
            let total = reduce_sum(&gy, Some(&[axis]), true)?;
            Ok(vec![Some(sub(&gy, &mul(&y, &total)?)?)])
        }
    });
    Ok(y)
}

/// x - log Σ exp(x) along `axis`; d/dx = g - exp(y)·Σ g.
pub fn log_softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
    let mask = axis_mask("LogSoftmax", x, axis)?;
    let (shifted, _, sum) = shifted_exp(x, &mask)?;
    let y = Tensor::new(kernels::binary(
        BinaryOp::Sub,
        &shifted,
        &kernels::unary(UnaryOp::Log, &sum)?,
    )?);
    trace::node1("LogSoftmax", &[x], &y, || {
        move |t: &[Tensor]| log_softmax(&t[0], axis)
    });
    record("LogSoftmax", &[x], &[&y], || {
        let y = y.clone();
        move |gs: &[Tensor], _: &[bool]| {
            let total = reduce_sum(&gs[0], Some(&[axis]), true)?;
            Ok(vec![Some(sub(&gs[0], &mul(&exp(&y)?, &total)?)?)])
        }
    });
    Ok(y)
}

/// -Σ labels·log_softmax(logits) along `axis`: `tf.nn.softmax_cross_entropy_with_logits`.
pub fn softmax_cross_entropy_with_logits(
    labels: &Tensor,
    logits: &Tensor,
    axis: i64,
) -> Result<Tensor> {
    if labels.shape() != logits.shape() {
        return Err(Error::invalid(
            "SoftmaxCrossEntropyWithLogits",
            format!(
                "labels and logits must have the same shape, received {:?} and {:?}",
                labels.shape(),
                logits.shape()
            ),
        ));
    }
    let lsm = log_softmax(logits, axis)?;
    neg(&reduce_sum(&mul(labels, &lsm)?, Some(&[axis]), false)?)
}

/// The same loss with integer class labels (shape: logits without the last axis).
pub fn sparse_softmax_cross_entropy_with_logits(
    labels: &Tensor,
    logits: &Tensor,
) -> Result<Tensor> {
    const OP: &str = "SparseSoftmaxCrossEntropyWithLogits";
    if logits.rank() == 0 || labels.shape() != &logits.shape()[..logits.rank() - 1] {
        return Err(Error::invalid(
            OP,
            format!("labels must have the shape of logits without the last axis, received {:?} and {:?}", labels.shape(), logits.shape()),
        ));
    }
    let depth = logits.shape()[logits.rank() - 1];
    let classes = kernels::index_values(OP, labels.value())?;
    if let Some(bad) = classes.iter().find(|&&c| c < 0 || c as usize >= depth) {
        return Err(Error::invalid(
            OP,
            format!(
                "received a label value of {bad} which is outside the valid range of [0, {depth})"
            ),
        ));
    }
    let hot = one_hot(labels, depth as i64, 1.0, 0.0, -1, logits.dtype())?;
    softmax_cross_entropy_with_logits(&hot, logits, -1)
}

/// max(x, 0) - x·z + log(1 + exp(-|x|)), TensorFlow's stable composition.
pub fn sigmoid_cross_entropy_with_logits(labels: &Tensor, logits: &Tensor) -> Result<Tensor> {
    if labels.shape() != logits.shape() {
        return Err(Error::invalid(
            "SigmoidCrossEntropyWithLogits",
            format!(
                "labels and logits must have the same shape, received {:?} and {:?}",
                labels.shape(),
                logits.shape()
            ),
        ));
    }
    let labels = cast(labels, logits.dtype())?;
    let nonneg = compare(CompareOp::GreaterEqual, logits, &logits.scalar_like(0.0))?;
    let relu_logits = where_(&nonneg, logits, &zeros_like(logits)?)?;
    let neg_abs = where_(&nonneg, &neg(logits)?, logits)?;
    add(
        &sub(&relu_logits, &mul(logits, &labels)?)?,
        &log1p(&exp(&neg_abs)?)?,
    )
}
