//! Optimizer updates (Adam, SGD, RMSprop, Adagrad), applied in place to a parameter and its slots in one pass.
//!
//! Keras's rules written as separate ops read and write every parameter-sized array several
//! times per step (Adam: eight full-size temporaries per variable). Here each element of the
//! parameter, its gradient and its slots is loaded once and stored once, and the arithmetic is
//! done in the parameter's own dtype in the same order as the op-by-op form, so both paths give
//! bit-identical results.

use num_traits::Float;
use rayon::prelude::*;

use super::PARALLEL_THRESHOLD;
use crate::{Array, Buffer, Error, Result};

/// Adam's per-step scalars: `alpha = lr·sqrt(1 - β2^t) / (1 - β1^t)`, `1 - β1`, `1 - β2`, ε.
#[derive(Clone, Copy, Debug)]
pub struct AdamStep {
    pub alpha: f64,
    pub one_minus_beta_1: f64,
    pub one_minus_beta_2: f64,
    pub epsilon: f64,
}

/// SGD's per-step scalars.
#[derive(Clone, Copy, Debug)]
pub struct SgdStep {
    pub learning_rate: f64,
    pub momentum: f64,
    pub nesterov: bool,
}

/// RMSprop's per-step scalars (the uncentred form).
#[derive(Clone, Copy, Debug)]
pub struct RmsPropStep {
    pub learning_rate: f64,
    pub rho: f64,
    pub one_minus_rho: f64,
    pub momentum: f64,
    pub epsilon: f64,
}

/// Adagrad's per-step scalars.
#[derive(Clone, Copy, Debug)]
pub struct AdagradStep {
    pub learning_rate: f64,
    pub epsilon: f64,
}

/// Makes `a` uniquely owned and contiguous (copying if a tensor still shares its buffer).
fn unique(a: &mut Array) -> &mut Buffer {
    if a.buffer_mut().is_none() {
        let shape = a.shape().to_vec();
        *a = Array::from_buffer(a.clone().into_buffer(), &shape).expect("same size");
    }
    a.buffer_mut().expect("uniquely owned and contiguous")
}

fn check(op: &'static str, param: &Array, others: &[&Array]) -> Result<()> {
    if !param.dtype().is_float() {
        return Err(Error::unsupported(
            op,
            param.dtype(),
            "a floating-point variable",
        ));
    }
    for other in others {
        if other.shape() != param.shape() || other.dtype() != param.dtype() {
            return Err(Error::invalid(
                op,
                format!(
                    "expected {} {:?} like the variable, received {} {:?}",
                    param.dtype(),
                    param.shape(),
                    other.dtype(),
                    other.shape()
                ),
            ));
        }
    }
    Ok(())
}

fn coefficient<T: Float>(x: f64) -> T {
    T::from(x).expect("a float coefficient")
}

fn adam_typed<T: Float + Send + Sync>(p: &mut [T], m: &mut [T], v: &mut [T], g: &[T], s: AdamStep) {
    let alpha = coefficient::<T>(s.alpha);
    let (b1, b2, eps) = (
        coefficient::<T>(s.one_minus_beta_1),
        coefficient::<T>(s.one_minus_beta_2),
        coefficient::<T>(s.epsilon),
    );
    let update = |((p, m), v): ((&mut T, &mut T), &mut T), &g: &T| {
        *m = *m + (g - *m) * b1;
        *v = *v + (g * g - *v) * b2;
        *p = *p - *m * alpha / (v.sqrt() + eps);
    };
    if p.len() >= PARALLEL_THRESHOLD {
        p.par_iter_mut()
            .zip(m.par_iter_mut())
            .zip(v.par_iter_mut())
            .zip(g.par_iter())
            .for_each(|(pmv, g)| update(pmv, g));
    } else {
        p.iter_mut()
            .zip(m.iter_mut())
            .zip(v.iter_mut())
            .zip(g.iter())
            .for_each(|(pmv, g)| update(pmv, g));
    }
}

fn sgd_typed<T: Float + Send + Sync>(p: &mut [T], velocity: Option<&mut [T]>, g: &[T], s: SgdStep) {
    let lr = coefficient::<T>(s.learning_rate);
    let momentum = coefficient::<T>(s.momentum);
    let parallel = p.len() >= PARALLEL_THRESHOLD;
    match velocity {
        None => {
            let update = |(p, &g): (&mut T, &T)| *p = *p - g * lr;
            if parallel {
                p.par_iter_mut().zip(g.par_iter()).for_each(update);
            } else {
                p.iter_mut().zip(g.iter()).for_each(update);
            }
        }
        Some(vel) => {
            let update = |((p, vel), &g): ((&mut T, &mut T), &T)| {
                let step = g * lr;
                *vel = *vel * momentum - step;
                *p = if s.nesterov {
                    *p + (*vel * momentum - step)
                } else {
                    *p + *vel
                };
            };
            if parallel {
                p.par_iter_mut()
                    .zip(vel.par_iter_mut())
                    .zip(g.par_iter())
                    .for_each(update);
            } else {
                p.iter_mut()
                    .zip(vel.iter_mut())
                    .zip(g.iter())
                    .for_each(update);
            }
        }
    }
}

/// One Adam step on `param` with slots `m` (first moment) and `v` (second moment).
pub fn adam_update(
    param: &mut Array,
    m: &mut Array,
    v: &mut Array,
    grad: &Array,
    step: AdamStep,
) -> Result<()> {
    const OP: &str = "ResourceApplyAdam";
    check(OP, param, &[m, v, grad])?;
    let grad = grad.contiguous();
    match (unique(param), unique(m), unique(v), grad.buffer()) {
        (Buffer::F32(p), Buffer::F32(m), Buffer::F32(v), Buffer::F32(_)) => {
            adam_typed(p, m, v, grad.contiguous_slice().expect("contiguous"), step)
        }
        (Buffer::F64(p), Buffer::F64(m), Buffer::F64(v), Buffer::F64(_)) => {
            adam_typed(p, m, v, grad.contiguous_slice().expect("contiguous"), step)
        }
        _ => return Err(Error::unsupported(OP, grad.dtype(), "float32 or float64")),
    }
    Ok(())
}

/// One SGD step on `param`, with a velocity slot when momentum is used.
pub fn sgd_update(
    param: &mut Array,
    velocity: Option<&mut Array>,
    grad: &Array,
    step: SgdStep,
) -> Result<()> {
    const OP: &str = "ResourceApplyGradientDescent";
    match &velocity {
        Some(vel) => check(OP, param, &[vel, grad])?,
        None => check(OP, param, &[grad])?,
    }
    let grad = grad.contiguous();
    let velocity = velocity.map(unique);
    match (unique(param), velocity, grad.buffer()) {
        (Buffer::F32(p), None, Buffer::F32(_)) => {
            sgd_typed(p, None, grad.contiguous_slice().expect("contiguous"), step)
        }
        (Buffer::F64(p), None, Buffer::F64(_)) => {
            sgd_typed(p, None, grad.contiguous_slice().expect("contiguous"), step)
        }
        (Buffer::F32(p), Some(Buffer::F32(v)), Buffer::F32(_)) => sgd_typed(
            p,
            Some(v),
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        (Buffer::F64(p), Some(Buffer::F64(v)), Buffer::F64(_)) => sgd_typed(
            p,
            Some(v),
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        _ => return Err(Error::unsupported(OP, grad.dtype(), "float32 or float64")),
    }
    Ok(())
}

fn rmsprop_typed<T: Float + Send + Sync>(
    p: &mut [T],
    v: &mut [T],
    momentum: Option<&mut [T]>,
    g: &[T],
    s: RmsPropStep,
) {
    let (lr, rho, omr) = (
        coefficient::<T>(s.learning_rate),
        coefficient::<T>(s.rho),
        coefficient::<T>(s.one_minus_rho),
    );
    let (mom, eps) = (coefficient::<T>(s.momentum), coefficient::<T>(s.epsilon));
    let increment = |v: &mut T, g: T| {
        *v = *v * rho + g * g * omr;
        g * lr / (*v + eps).sqrt()
    };
    let parallel = p.len() >= PARALLEL_THRESHOLD;
    match momentum {
        Some(m) => {
            let update = |(((p, v), m), &g): (((&mut T, &mut T), &mut T), &T)| {
                *m = *m * mom + increment(v, g);
                *p = *p - *m;
            };
            if parallel {
                p.par_iter_mut()
                    .zip(v.par_iter_mut())
                    .zip(m.par_iter_mut())
                    .zip(g.par_iter())
                    .for_each(update);
            } else {
                p.iter_mut()
                    .zip(v.iter_mut())
                    .zip(m.iter_mut())
                    .zip(g.iter())
                    .for_each(update);
            }
        }
        None => {
            let update = |((p, v), &g): ((&mut T, &mut T), &T)| *p = *p - increment(v, g);
            if parallel {
                p.par_iter_mut()
                    .zip(v.par_iter_mut())
                    .zip(g.par_iter())
                    .for_each(update);
            } else {
                p.iter_mut()
                    .zip(v.iter_mut())
                    .zip(g.iter())
                    .for_each(update);
            }
        }
    }
}

fn adagrad_typed<T: Float + Send + Sync>(p: &mut [T], acc: &mut [T], g: &[T], s: AdagradStep) {
    let (lr, eps) = (
        coefficient::<T>(s.learning_rate),
        coefficient::<T>(s.epsilon),
    );
    let update = |((p, a), &g): ((&mut T, &mut T), &T)| {
        *a = *a + g * g;
        *p = *p - g * lr / (*a + eps).sqrt();
    };
    if p.len() >= PARALLEL_THRESHOLD {
        p.par_iter_mut()
            .zip(acc.par_iter_mut())
            .zip(g.par_iter())
            .for_each(update);
    } else {
        p.iter_mut()
            .zip(acc.iter_mut())
            .zip(g.iter())
            .for_each(update);
    }
}

/// One (uncentred) RMSprop step, with the momentum slot when momentum is used.
pub fn rmsprop_update(
    param: &mut Array,
    velocity: &mut Array,
    momentum: Option<&mut Array>,
    grad: &Array,
    step: RmsPropStep,
) -> Result<()> {
    const OP: &str = "ResourceApplyRMSProp";
    match &momentum {
        Some(m) => check(OP, param, &[velocity, m, grad])?,
        None => check(OP, param, &[velocity, grad])?,
    }
    let grad = grad.contiguous();
    let momentum = momentum.map(unique);
    match (unique(param), unique(velocity), momentum, grad.buffer()) {
        (Buffer::F32(p), Buffer::F32(v), None, Buffer::F32(_)) => rmsprop_typed(
            p,
            v,
            None,
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        (Buffer::F64(p), Buffer::F64(v), None, Buffer::F64(_)) => rmsprop_typed(
            p,
            v,
            None,
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        (Buffer::F32(p), Buffer::F32(v), Some(Buffer::F32(m)), Buffer::F32(_)) => rmsprop_typed(
            p,
            v,
            Some(m),
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        (Buffer::F64(p), Buffer::F64(v), Some(Buffer::F64(m)), Buffer::F64(_)) => rmsprop_typed(
            p,
            v,
            Some(m),
            grad.contiguous_slice().expect("contiguous"),
            step,
        ),
        _ => return Err(Error::unsupported(OP, grad.dtype(), "float32 or float64")),
    }
    Ok(())
}

/// One Adagrad step.
pub fn adagrad_update(
    param: &mut Array,
    accumulator: &mut Array,
    grad: &Array,
    step: AdagradStep,
) -> Result<()> {
    const OP: &str = "ResourceApplyAdagrad";
    check(OP, param, &[accumulator, grad])?;
    let grad = grad.contiguous();
    match (unique(param), unique(accumulator), grad.buffer()) {
        (Buffer::F32(p), Buffer::F32(a), Buffer::F32(_)) => {
            adagrad_typed(p, a, grad.contiguous_slice().expect("contiguous"), step)
        }
        (Buffer::F64(p), Buffer::F64(a), Buffer::F64(_)) => {
            adagrad_typed(p, a, grad.contiguous_slice().expect("contiguous"), step)
        }
        _ => return Err(Error::unsupported(OP, grad.dtype(), "float32 or float64")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_matches_the_rule_and_copies_a_shared_buffer_first() {
        let mut p = Array::from_vec(vec![1.0f64, -2.0], &[2]).unwrap();
        let shared = p.clone();
        let mut m = Array::zeros("test", crate::DType::F64, &[2]).unwrap();
        let mut v = Array::zeros("test", crate::DType::F64, &[2]).unwrap();
        let g = Array::from_vec(vec![0.5f64, 4.0], &[2]).unwrap();
        let step = AdamStep {
            alpha: 0.1,
            one_minus_beta_1: 0.1,
            one_minus_beta_2: 0.001,
            epsilon: 1e-7,
        };
        adam_update(&mut p, &mut m, &mut v, &g, step).unwrap();
        let (m1, v1) = (0.05, 0.00025);
        let want = 1.0 - m1 * 0.1 / (f64::sqrt(v1) + 1e-7);
        assert!((p.to_vec::<f64>()[0] - want).abs() < 1e-15);
        assert_eq!(
            shared.to_vec::<f64>(),
            vec![1.0, -2.0],
            "a tensor read earlier keeps its value"
        );
        assert_eq!(m.to_vec::<f64>()[1], 0.4);
    }

    #[test]
    fn sgd_with_and_without_momentum() {
        let g = Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let mut p = Array::from_vec(vec![0.0f32, 0.0], &[2]).unwrap();
        let plain = SgdStep {
            learning_rate: 0.5,
            momentum: 0.0,
            nesterov: false,
        };
        sgd_update(&mut p, None, &g, plain).unwrap();
        assert_eq!(p.to_vec::<f32>(), vec![-0.5, -1.0]);
        let mut vel = Array::from_vec(vec![1.0f32, 1.0], &[2]).unwrap();
        let nesterov = SgdStep {
            learning_rate: 0.5,
            momentum: 0.9,
            nesterov: true,
        };
        sgd_update(&mut p, Some(&mut vel), &g, nesterov).unwrap();
        // f32 arithmetic in the rule's order: v = 0.9·1 - 0.5·g, w += 0.9·v - 0.5·g.
        let v: Vec<f32> = [1.0f32, 2.0]
            .iter()
            .map(|g| 0.9f32 * 1.0 - g * 0.5)
            .collect();
        assert_eq!(vel.to_vec::<f32>(), v);
        let w: Vec<f32> = [(-0.5f32, 1.0f32), (-1.0, 2.0)]
            .iter()
            .zip(&v)
            .map(|((w, g), v)| w + (v * 0.9 - g * 0.5))
            .collect();
        assert_eq!(p.to_vec::<f32>(), w);
        assert!(sgd_update(
            &mut p,
            None,
            &Array::zeros("test", crate::DType::F32, &[3]).unwrap(),
            plain
        )
        .is_err());
    }
}
