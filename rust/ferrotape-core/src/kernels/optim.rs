//! The optimizer rules (SGD, Adam, RMSprop, Adagrad): the CPU's only copy of each, applied in
//! place to a variable and its slots in one pass. A variable on a device is updated there by
//! its backend's kernel when it has one (the wgpu backend's follows these formulas), which
//! returns new arrays instead: device arrays are never written in place.
//!
//! Keras's rules written as separate ops read and write every variable-sized array several
//! times per step (Adam: eight full-size temporaries per variable). Here each element of the
//! variable, its gradient and its slots is loaded once and stored once. float32 and float64
//! compute in their own type; float16 and bfloat16 compute each element in f32 and round once
//! when it is stored (no half-precision rounding inside the formula).
//!
//! [`OptimizerStep::new`] reads a rule's hyperparameters by name and computes its per-step
//! scalars (Adam's bias correction); [`apply_optimizer_step`] checks the arrays and runs the
//! rule. Each rule's element loop is a plain loop over zipped slices (so it vectorises), split
//! across threads above [`PARALLEL_THRESHOLD`] by [`zip_chunks`]. Keras's decoupled weight
//! decay ([`decay_weights`]) and the moving averages of `use_ema` ([`update_moving_average`])
//! are in-place passes of the same kind, so that a step with them is native calls only.

use half::{bf16, f16};
use num_traits::Float;
use rayon::prelude::*;

use super::PARALLEL_THRESHOLD;
use crate::{simd, Array, Buffer, DType, Device, Element, Error, Result};

/// One step of one rule, with its scalars. The slots each rule updates, in order (the order
/// the Keras optimizers create them in):
/// - `Sgd`: `[velocity]` when `momentum` is set, none otherwise;
/// - `Adam`: `[m, v]`, then `v_hat` with `amsgrad`;
/// - `RmsProp`: `[velocity]`, then the momentum slot when `momentum` is set, then the average
///   gradient when `centered`;
/// - `Adagrad`: `[accumulator]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptimizerStep {
    /// `velocity = momentum·velocity - lr·g; w += velocity` (`nesterov`:
    /// `w += momentum·velocity - lr·g`); without momentum `w -= lr·g`.
    Sgd {
        learning_rate: f64,
        momentum: Option<f64>,
        nesterov: bool,
    },
    /// `m += (g - m)(1 - β1); v += (g² - v)(1 - β2); v_hat = max(v_hat, v)` (amsgrad, which
    /// then uses `v_hat` for `v`); `w -= alpha·m / (sqrt(v) + ε)`, where
    /// `alpha = lr·sqrt(1 - β2^t) / (1 - β1^t)`.
    Adam {
        alpha: f64,
        one_minus_beta_1: f64,
        one_minus_beta_2: f64,
        epsilon: f64,
        amsgrad: bool,
    },
    /// `velocity = ρ·velocity + (1 - ρ)g²`; centered: `average = ρ·average + (1 - ρ)g` and
    /// `denominator = velocity - average² + ε`, else `velocity + ε`;
    /// `increment = lr·g / sqrt(denominator)`; with momentum `mom = momentum·mom + increment;
    /// w -= mom`, else `w -= increment`.
    RmsProp {
        learning_rate: f64,
        rho: f64,
        momentum: Option<f64>,
        epsilon: f64,
        centered: bool,
    },
    /// `accumulator += g²; w -= lr·g / sqrt(accumulator + ε)`.
    Adagrad { learning_rate: f64, epsilon: f64 },
}

impl OptimizerStep {
    /// The step of rule `rule` ("sgd", "adam", "rmsprop", "adagrad") at `step` (counted from
    /// 1), with `learning_rate` and the hyperparameters `hyper` gives by name (Keras's
    /// argument names; flags are 0 or 1; a momentum of 0 or less means no momentum slot, as
    /// in Keras).
    pub fn new(
        rule: &str,
        learning_rate: f64,
        step: u64,
        hyper: impl Fn(&str) -> Option<f64>,
    ) -> Result<OptimizerStep> {
        let get = |name: &'static str| {
            hyper(name).ok_or_else(|| {
                Error::invalid(
                    "ApplyOptimizerStep",
                    format!("the {rule} rule needs the hyperparameter `{name}`"),
                )
            })
        };
        let optional_momentum = |m: f64| (m > 0.0).then_some(m);
        Ok(match rule {
            "sgd" => OptimizerStep::Sgd {
                learning_rate,
                momentum: optional_momentum(get("momentum")?),
                nesterov: get("nesterov")? != 0.0,
            },
            "adam" => {
                let (beta_1, beta_2) = (get("beta_1")?, get("beta_2")?);
                let t = step as f64;
                OptimizerStep::Adam {
                    alpha: learning_rate * (1.0 - beta_2.powf(t)).sqrt() / (1.0 - beta_1.powf(t)),
                    one_minus_beta_1: 1.0 - beta_1,
                    one_minus_beta_2: 1.0 - beta_2,
                    epsilon: get("epsilon")?,
                    amsgrad: get("amsgrad")? != 0.0,
                }
            }
            "rmsprop" => OptimizerStep::RmsProp {
                learning_rate,
                rho: get("rho")?,
                momentum: optional_momentum(get("momentum")?),
                epsilon: get("epsilon")?,
                centered: get("centered")? != 0.0,
            },
            "adagrad" => OptimizerStep::Adagrad {
                learning_rate,
                epsilon: get("epsilon")?,
            },
            _ => {
                return Err(Error::invalid(
                    "ApplyOptimizerStep",
                    format!(
                        "unknown rule {rule:?}; expected \"sgd\", \"adam\", \"rmsprop\" or \
                         \"adagrad\""
                    ),
                ))
            }
        })
    }

    /// TensorFlow's name for the op, used in errors.
    pub fn op(&self) -> &'static str {
        match self {
            OptimizerStep::Sgd { .. } => "ResourceApplyGradientDescent",
            OptimizerStep::Adam { .. } => "ResourceApplyAdam",
            OptimizerStep::RmsProp { .. } => "ResourceApplyRMSProp",
            OptimizerStep::Adagrad { .. } => "ResourceApplyAdagrad",
        }
    }

    /// How many slots the step updates (see the type's doc for which).
    pub fn slot_count(&self) -> usize {
        match *self {
            OptimizerStep::Sgd { momentum, .. } => usize::from(momentum.is_some()),
            OptimizerStep::Adam { amsgrad, .. } => 2 + usize::from(amsgrad),
            OptimizerStep::RmsProp {
                momentum, centered, ..
            } => 1 + usize::from(momentum.is_some()) + usize::from(centered),
            OptimizerStep::Adagrad { .. } => 1,
        }
    }
}

/// A variable's element type and the type its update is computed in.
pub trait Stored: Element {
    type Compute: Float + Send + Sync;
    fn load(self) -> Self::Compute;
    fn store(x: Self::Compute) -> Self;
}

impl Stored for f32 {
    type Compute = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    #[inline(always)]
    fn store(x: f32) -> f32 {
        x
    }
}

impl Stored for f64 {
    type Compute = f64;
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(x: f64) -> f64 {
        x
    }
}

impl Stored for f16 {
    type Compute = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(x: f32) -> f16 {
        f16::from_f32(x)
    }
}

impl Stored for bf16 {
    type Compute = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(x: f32) -> bf16 {
        bf16::from_f32(x)
    }
}

/// Applies one step of `step` to `param` and its `slots` (in the order [`OptimizerStep`]
/// lists) from `grad`. Every array must have the variable's float dtype and shape. The step
/// runs on the device `param` lives on (see the module docs).
pub fn apply_optimizer_step(
    step: &OptimizerStep,
    param: &mut Array,
    slots: &mut [&mut Array],
    grad: &Array,
) -> Result<()> {
    let op = step.op();
    if slots.len() != step.slot_count() {
        return Err(Error::invalid(
            op,
            format!(
                "expected {} optimizer slots for this step, received {}",
                step.slot_count(),
                slots.len()
            ),
        ));
    }
    let others = slots.iter().map(|s| &**s).chain([grad]);
    check(op, param, others)?;
    let inputs: Vec<&Array> = [&*param]
        .into_iter()
        .chain(slots.iter().map(|s| &**s))
        .chain([grad])
        .collect();
    let on_device = crate::device::dispatch_on_first(&inputs, |d, arrays| {
        let (param, rest) = arrays.split_first().expect("the variable");
        let (grad, slot_values) = rest.split_last().expect("the gradient");
        d.optimizer_step(step, param, slot_values, grad)
    });
    if let Some(r) = on_device {
        // Device arrays are immutable: the variable and its slots take the new values.
        let mut updated = r?.into_iter();
        for a in [param]
            .into_iter()
            .chain(slots.iter_mut().map(|s| &mut **s))
        {
            *a = updated
                .next()
                .expect("the backend returns every updated array");
        }
        return Ok(());
    }
    let grad = grad.contiguous();
    // Without a device kernel (soft placement) the update runs on the host; values that lived
    // on a device go back there, so a variable keeps its placement across steps.
    let devices: Vec<Device> = [&*param]
        .into_iter()
        .chain(slots.iter().map(|s| &**s))
        .map(Array::device)
        .collect();
    match param.dtype() {
        DType::F16 => run::<f16>(step, param, slots, &grad),
        DType::BF16 => run::<bf16>(step, param, slots, &grad),
        DType::F32 => run::<f32>(step, param, slots, &grad),
        DType::F64 => run::<f64>(step, param, slots, &grad),
        other => return Err(Error::unsupported(op, other, "a floating-point variable")),
    }
    for (a, &device) in [param]
        .into_iter()
        .chain(slots.iter_mut().map(|s| &mut **s))
        .zip(&devices)
    {
        if device != Device::Cpu {
            *a = a.to_device(device)?;
        }
    }
    Ok(())
}

/// Keras's decoupled weight decay, applied before a step: `w -= w·weight_decay·lr` in place,
/// in Keras's order of operations (`w·weight_decay` first) and the variable's compute type (f32
/// for half types, rounded once, as the rules do). A variable on a device is decayed on the
/// host and goes back there, as a step without a device kernel is.
pub fn decay_weights(param: &mut Array, weight_decay: f64, learning_rate: f64) -> Result<()> {
    check("ApplyWeightDecay", param, std::iter::empty())?;
    let device = param.device();
    match param.dtype() {
        DType::F16 => decay::<f16>(param, weight_decay, learning_rate),
        DType::BF16 => decay::<bf16>(param, weight_decay, learning_rate),
        DType::F32 => decay::<f32>(param, weight_decay, learning_rate),
        DType::F64 => decay::<f64>(param, weight_decay, learning_rate),
        other => {
            return Err(Error::unsupported(
                "ApplyWeightDecay",
                other,
                "a floating-point variable",
            ))
        }
    }
    if device != Device::Cpu {
        *param = param.to_device(device)?;
    }
    Ok(())
}

fn decay<S: Stored>(param: &mut Array, weight_decay: f64, learning_rate: f64) {
    let (wd, lr) = (
        coefficient::<S::Compute>(weight_decay),
        coefficient::<S::Compute>(learning_rate),
    );
    let run = |p: &mut [S]| {
        simd::dispatch(
            #[inline(always)]
            || {
                for x in p.iter_mut() {
                    let w = x.load();
                    *x = S::store(w - w * wd * lr);
                }
            },
        )
    };
    let p = typed_mut::<S>(param);
    if p.len() < PARALLEL_THRESHOLD {
        run(p);
    } else {
        p.par_chunks_mut(CHUNK).for_each(run);
    }
}

/// Keras's moving average of a variable (`use_ema`), in place:
/// `average = momentum·average + (1 - momentum)·value`, in the compute type (f32 for half
/// types, rounded once). An average on a device is updated on the host and goes back there.
pub fn update_moving_average(average: &mut Array, value: &Array, momentum: f64) -> Result<()> {
    check("UpdateMovingAverage", average, std::iter::once(value))?;
    let device = average.device();
    let value = value.contiguous();
    match average.dtype() {
        DType::F16 => moving_average::<f16>(average, &value, momentum),
        DType::BF16 => moving_average::<bf16>(average, &value, momentum),
        DType::F32 => moving_average::<f32>(average, &value, momentum),
        DType::F64 => moving_average::<f64>(average, &value, momentum),
        other => {
            return Err(Error::unsupported(
                "UpdateMovingAverage",
                other,
                "a floating-point variable",
            ))
        }
    }
    if device != Device::Cpu {
        *average = average.to_device(device)?;
    }
    Ok(())
}

fn moving_average<S: Stored>(average: &mut Array, value: &Array, momentum: f64) {
    let m = coefficient::<S::Compute>(momentum);
    let rest = <S::Compute as num_traits::One>::one() - m;
    let v = value
        .contiguous_slice::<S>()
        .expect("dtype checked, contiguous");
    zip_chunks(typed_mut::<S>(average), [], v, |a, [], v| {
        for (a, &v) in a.iter_mut().zip(v) {
            *a = S::store(m * a.load() + rest * v.load());
        }
    });
}

fn check<'a>(
    op: &'static str,
    param: &Array,
    others: impl Iterator<Item = &'a Array>,
) -> Result<()> {
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

/// Makes `a` uniquely owned and contiguous (copying if a tensor still shares its buffer).
fn unique(a: &mut Array) -> &mut Buffer {
    if a.buffer_mut().is_none() {
        let shape = a.shape().to_vec();
        *a = Array::from_buffer(a.clone().into_buffer(), &shape).expect("same size");
    }
    a.buffer_mut().expect("uniquely owned and contiguous")
}

fn typed_mut<S: Stored>(a: &mut Array) -> &mut [S] {
    S::slice_mut(unique(a)).expect("dtype checked")
}

fn run<S: Stored>(step: &OptimizerStep, param: &mut Array, slots: &mut [&mut Array], g: &Array) {
    let g = g
        .contiguous_slice::<S>()
        .expect("dtype checked, contiguous");
    let p = typed_mut::<S>(param);
    let mut slots: Vec<&mut [S]> = slots.iter_mut().map(|a| typed_mut::<S>(a)).collect();
    rule(step, p, &mut slots, g);
}

fn coefficient<C: Float>(x: f64) -> C {
    C::from(x).expect("a float coefficient")
}

/// The rules, one arm per combination of slots.
fn rule<S: Stored>(step: &OptimizerStep, p: &mut [S], slots: &mut [&mut [S]], g: &[S]) {
    let c = coefficient::<S::Compute>;
    match (*step, slots) {
        (OptimizerStep::Sgd { learning_rate, .. }, []) => {
            let lr = c(learning_rate);
            zip_chunks(p, [], g, |p, [], g| {
                for (p, &g) in p.iter_mut().zip(g) {
                    *p = S::store(p.load() - g.load() * lr);
                }
            })
        }
        (
            OptimizerStep::Sgd {
                learning_rate,
                momentum,
                nesterov,
            },
            [velocity],
        ) => {
            let (lr, momentum) = (c(learning_rate), c(momentum.unwrap_or(0.0)));
            zip_chunks(p, [&mut **velocity], g, |p, [velocity], g| {
                for ((p, vel), &g) in p.iter_mut().zip(velocity).zip(g) {
                    let step = g.load() * lr;
                    let v = vel.load() * momentum - step;
                    let delta = if nesterov { v * momentum - step } else { v };
                    *vel = S::store(v);
                    *p = S::store(p.load() + delta);
                }
            })
        }
        (OptimizerStep::Adam { .. }, [m, v]) => {
            let adam = Adam::<S::Compute>::new(step);
            zip_chunks(p, [&mut **m, &mut **v], g, |p, [m, v], g| {
                for (((p, m), v), &g) in p.iter_mut().zip(m).zip(v).zip(g) {
                    let (m1, v1) = adam.moments(m.load(), v.load(), g.load());
                    (*m, *v) = (S::store(m1), S::store(v1));
                    *p = S::store(p.load() - adam.delta(m1, v1));
                }
            })
        }
        (OptimizerStep::Adam { .. }, [m, v, v_hat]) => {
            let adam = Adam::<S::Compute>::new(step);
            zip_chunks(
                p,
                [&mut **m, &mut **v, &mut **v_hat],
                g,
                |p, [m, v, v_hat], g| {
                    for ((((p, m), v), v_hat), &g) in p.iter_mut().zip(m).zip(v).zip(v_hat).zip(g) {
                        let (m1, v1) = adam.moments(m.load(), v.load(), g.load());
                        let v_max = v_hat.load().max(v1);
                        (*m, *v, *v_hat) = (S::store(m1), S::store(v1), S::store(v_max));
                        *p = S::store(p.load() - adam.delta(m1, v_max));
                    }
                },
            )
        }
        (OptimizerStep::RmsProp { momentum, .. }, slots) => {
            let rms = RmsProp::<S::Compute>::new(step);
            match (momentum.is_some(), slots) {
                (_, [velocity]) => zip_chunks(p, [&mut **velocity], g, |p, [velocity], g| {
                    for ((p, vel), &g) in p.iter_mut().zip(velocity).zip(g) {
                        let g = g.load();
                        let v = rms.velocity(vel.load(), g);
                        *vel = S::store(v);
                        *p = S::store(p.load() - rms.increment(g, v + rms.eps));
                    }
                }),
                (true, [velocity, mom]) => zip_chunks(
                    p,
                    [&mut **velocity, &mut **mom],
                    g,
                    |p, [velocity, mom], g| {
                        for (((p, vel), mom), &g) in p.iter_mut().zip(velocity).zip(mom).zip(g) {
                            let g = g.load();
                            let v = rms.velocity(vel.load(), g);
                            let m = mom.load() * rms.momentum + rms.increment(g, v + rms.eps);
                            (*vel, *mom) = (S::store(v), S::store(m));
                            *p = S::store(p.load() - m);
                        }
                    },
                ),
                (false, [velocity, avg]) => zip_chunks(
                    p,
                    [&mut **velocity, &mut **avg],
                    g,
                    |p, [velocity, avg], g| {
                        for (((p, vel), avg), &g) in p.iter_mut().zip(velocity).zip(avg).zip(g) {
                            let g = g.load();
                            let (v, a) = (rms.velocity(vel.load(), g), rms.average(avg.load(), g));
                            (*vel, *avg) = (S::store(v), S::store(a));
                            *p = S::store(p.load() - rms.increment(g, v - a * a + rms.eps));
                        }
                    },
                ),
                (_, [velocity, mom, avg]) => zip_chunks(
                    p,
                    [&mut **velocity, &mut **mom, &mut **avg],
                    g,
                    |p, [velocity, mom, avg], g| {
                        let slots = velocity.iter_mut().zip(mom).zip(avg);
                        for ((p, ((vel, mom), avg)), &g) in p.iter_mut().zip(slots).zip(g) {
                            let g = g.load();
                            let (v, a) = (rms.velocity(vel.load(), g), rms.average(avg.load(), g));
                            let increment = rms.increment(g, v - a * a + rms.eps);
                            let m = mom.load() * rms.momentum + increment;
                            (*vel, *mom, *avg) = (S::store(v), S::store(m), S::store(a));
                            *p = S::store(p.load() - m);
                        }
                    },
                ),
                _ => unreachable!("slot count checked"),
            }
        }
        (
            OptimizerStep::Adagrad {
                learning_rate,
                epsilon,
            },
            [accumulator],
        ) => {
            let (lr, eps) = (c(learning_rate), c(epsilon));
            zip_chunks(p, [&mut **accumulator], g, |p, [accumulator], g| {
                for ((p, acc), &g) in p.iter_mut().zip(accumulator).zip(g) {
                    let g = g.load();
                    let a = acc.load() + g * g;
                    *acc = S::store(a);
                    *p = S::store(p.load() - g * lr / (a + eps).sqrt());
                }
            })
        }
        _ => unreachable!("slot count checked"),
    }
}

/// Adam's scalars in the compute type.
struct Adam<C> {
    alpha: C,
    one_minus_beta_1: C,
    one_minus_beta_2: C,
    eps: C,
}

impl<C: Float> Adam<C> {
    fn new(step: &OptimizerStep) -> Self {
        let OptimizerStep::Adam {
            alpha,
            one_minus_beta_1,
            one_minus_beta_2,
            epsilon,
            ..
        } = *step
        else {
            unreachable!("an Adam step")
        };
        Adam {
            alpha: coefficient(alpha),
            one_minus_beta_1: coefficient(one_minus_beta_1),
            one_minus_beta_2: coefficient(one_minus_beta_2),
            eps: coefficient(epsilon),
        }
    }

    #[inline(always)]
    fn moments(&self, m: C, v: C, g: C) -> (C, C) {
        (
            m + (g - m) * self.one_minus_beta_1,
            v + (g * g - v) * self.one_minus_beta_2,
        )
    }

    #[inline(always)]
    fn delta(&self, m: C, v: C) -> C {
        m * self.alpha / (v.sqrt() + self.eps)
    }
}

/// RMSprop's scalars in the compute type.
struct RmsProp<C> {
    lr: C,
    rho: C,
    one_minus_rho: C,
    momentum: C,
    eps: C,
}

impl<C: Float> RmsProp<C> {
    fn new(step: &OptimizerStep) -> Self {
        let OptimizerStep::RmsProp {
            learning_rate,
            rho,
            momentum,
            epsilon,
            ..
        } = *step
        else {
            unreachable!("an RMSprop step")
        };
        RmsProp {
            lr: coefficient(learning_rate),
            rho: coefficient(rho),
            one_minus_rho: coefficient(1.0 - rho),
            momentum: coefficient(momentum.unwrap_or(0.0)),
            eps: coefficient(epsilon),
        }
    }

    #[inline(always)]
    fn velocity(&self, v: C, g: C) -> C {
        v * self.rho + g * g * self.one_minus_rho
    }

    #[inline(always)]
    fn average(&self, a: C, g: C) -> C {
        a * self.rho + g * self.one_minus_rho
    }

    #[inline(always)]
    fn increment(&self, g: C, denominator: C) -> C {
        g * self.lr / denominator.sqrt()
    }
}

/// Elements per task when a large variable is split across threads.
const CHUNK: usize = 16 * 1024;

/// Runs `f` on the variable, its `N` slots and the gradient (all of one length): on the whole
/// slices below [`PARALLEL_THRESHOLD`], else on matching chunks in parallel; each call compiled
/// for the widest SIMD level in force (the update's square root and division are its cost).
fn zip_chunks<S: Send + Sync, const N: usize>(
    p: &mut [S],
    slots: [&mut [S]; N],
    g: &[S],
    f: impl Fn(&mut [S], [&mut [S]; N], &[S]) + Sync,
) {
    let run = |p: &mut [S], slots: [&mut [S]; N], g: &[S]| {
        simd::dispatch(
            #[inline(always)]
            || f(p, slots, g),
        )
    };
    if p.len() < PARALLEL_THRESHOLD {
        return run(p, slots, g);
    }
    let mut slot_chunks = slots.map(|s| s.chunks_mut(CHUNK));
    let tasks: Vec<_> = p
        .chunks_mut(CHUNK)
        .zip(g.chunks(CHUNK))
        .map(|(p, g)| {
            let slots = slot_chunks
                .each_mut()
                .map(|c| c.next().expect("slots as long as the variable"));
            (p, slots, g)
        })
        .collect();
    tasks
        .into_par_iter()
        .for_each(|(p, slots, g)| run(p, slots, g));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr<T: Element>(v: Vec<T>) -> Array {
        let n = v.len();
        Array::from_vec(v, &[n]).unwrap()
    }

    fn step(rule: &str, lr: f64, t: u64, hyper: &[(&str, f64)]) -> OptimizerStep {
        OptimizerStep::new(rule, lr, t, |name| {
            hyper.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
        })
        .unwrap()
    }

    /// Runs `steps` steps on f64 arrays; returns the variable and the slots.
    fn run_f64(s: OptimizerStep, w: &[f64], g: &[f64], slots: usize, steps: u64) -> Vec<Vec<f64>> {
        let mut p = arr(w.to_vec());
        let mut slot_arrays: Vec<Array> = (0..slots).map(|_| arr(vec![0.0f64; w.len()])).collect();
        for _ in 0..steps {
            let mut refs: Vec<&mut Array> = slot_arrays.iter_mut().collect();
            apply_optimizer_step(&s, &mut p, &mut refs, &arr(g.to_vec())).unwrap();
        }
        std::iter::once(&p)
            .chain(&slot_arrays)
            .map(|a| a.to_vec::<f64>())
            .collect()
    }

    #[test]
    fn adam_matches_the_rule_and_copies_a_shared_buffer_first() {
        let mut p = arr(vec![1.0f64, -2.0]);
        let shared = p.clone();
        let mut m = arr(vec![0.0f64; 2]);
        let mut v = arr(vec![0.0f64; 2]);
        let hyper = [
            ("beta_1", 0.9),
            ("beta_2", 0.999),
            ("epsilon", 1e-7),
            ("amsgrad", 0.0),
        ];
        let s = step("adam", 0.1, 1, &hyper);
        let g = arr(vec![0.5f64, 4.0]);
        apply_optimizer_step(&s, &mut p, &mut [&mut m, &mut v], &g).unwrap();
        let alpha = 0.1 * (1.0f64 - 0.999).sqrt() / (1.0 - 0.9);
        let (m1, v1) = (0.5 * (1.0 - 0.9), 0.25 * (1.0 - 0.999));
        let want = 1.0 - m1 * alpha / (f64::sqrt(v1) + 1e-7);
        assert!((p.to_vec::<f64>()[0] - want).abs() < 1e-15);
        assert_eq!(
            shared.to_vec::<f64>(),
            vec![1.0, -2.0],
            "a tensor read earlier keeps its value"
        );
        assert!((m.to_vec::<f64>()[1] - 0.4).abs() < 1e-15);
    }

    #[test]
    fn amsgrad_keeps_the_running_maximum_of_v() {
        let hyper = [
            ("beta_1", 0.9),
            ("beta_2", 0.5),
            ("epsilon", 1e-7),
            ("amsgrad", 1.0),
        ];
        let (mut p, mut m, mut v, mut v_hat) = (
            arr(vec![1.0f64]),
            arr(vec![0.0f64]),
            arr(vec![0.0f64]),
            arr(vec![0.0f64]),
        );
        let mut want_w = 1.0;
        let (mut want_m, mut want_v, mut want_v_hat) = (0.0f64, 0.0f64, 0.0f64);
        // A large gradient then small ones: v falls below its maximum, which v_hat keeps.
        for (t, g) in [(1u64, 3.0f64), (2, 0.1), (3, 0.1)] {
            let s = step("adam", 0.01, t, &hyper);
            let mut slots = [&mut m, &mut v, &mut v_hat];
            apply_optimizer_step(&s, &mut p, &mut slots, &arr(vec![g])).unwrap();
            want_m += (g - want_m) * 0.1;
            want_v += (g * g - want_v) * 0.5;
            want_v_hat = want_v_hat.max(want_v);
            let alpha = 0.01 * (1.0 - 0.5f64.powi(t as i32)).sqrt() / (1.0 - 0.9f64.powi(t as i32));
            want_w -= alpha * want_m / (want_v_hat.sqrt() + 1e-7);
        }
        assert!(want_v < want_v_hat);
        assert!((v_hat.to_vec::<f64>()[0] - want_v_hat).abs() < 1e-15);
        assert!((p.to_vec::<f64>()[0] - want_w).abs() < 1e-14);
    }

    #[test]
    fn sgd_with_and_without_momentum() {
        let plain = step("sgd", 0.5, 1, &[("momentum", 0.0), ("nesterov", 0.0)]);
        assert_eq!(plain.slot_count(), 0);
        let out = run_f64(plain, &[0.0, 0.0], &[1.0, 2.0], 0, 1);
        assert_eq!(out[0], vec![-0.5, -1.0]);
        let nesterov = step("sgd", 0.5, 1, &[("momentum", 0.9), ("nesterov", 1.0)]);
        let out = run_f64(nesterov, &[0.0], &[1.0], 1, 2);
        // v1 = -0.5, w1 = 0.9·v1 - 0.5; v2 = 0.9·v1 - 0.5, w2 = w1 + 0.9·v2 - 0.5.
        let (v1, v2) = (-0.5, 0.9 * -0.5 - 0.5);
        let w2 = (0.9 * v1 - 0.5) + (0.9 * v2 - 0.5);
        assert!((out[1][0] - v2).abs() < 1e-15 && (out[0][0] - w2).abs() < 1e-15);
        let mut p = arr(vec![0.0f32; 2]);
        let wrong_shape = Array::zeros("test", DType::F32, &[3]).unwrap();
        assert!(apply_optimizer_step(&plain, &mut p, &mut [], &wrong_shape).is_err());
    }

    #[test]
    fn centered_rmsprop_with_and_without_momentum() {
        let (rho, lr, eps, g) = (0.8, 0.1, 1e-7, 2.0f64);
        let (v, a) = ((1.0 - rho) * g * g, (1.0 - rho) * g);
        let increment = lr * g / (v - a * a + eps).sqrt();
        let centered = [
            ("rho", rho),
            ("momentum", 0.0),
            ("epsilon", eps),
            ("centered", 1.0),
        ];
        let out = run_f64(step("rmsprop", lr, 1, &centered), &[1.0], &[g], 2, 1);
        assert!((out[0][0] - (1.0 - increment)).abs() < 1e-14);
        assert!((out[2][0] - a).abs() < 1e-15, "the average gradient slot");
        let both = [
            ("rho", rho),
            ("momentum", 0.5),
            ("epsilon", eps),
            ("centered", 1.0),
        ];
        let out = run_f64(step("rmsprop", lr, 1, &both), &[1.0], &[g], 3, 1);
        assert!((out[2][0] - increment).abs() < 1e-14, "the momentum slot");
        assert!(
            (out[3][0] - a).abs() < 1e-15,
            "the average gradient slot, last"
        );
    }

    #[test]
    fn half_types_compute_in_f32_and_round_once() {
        let hyper = [
            ("beta_1", 0.9),
            ("beta_2", 0.999),
            ("epsilon", 1e-7),
            ("amsgrad", 0.0),
        ];
        let s = step("adam", 0.1, 1, &hyper);
        let (w, g) = (0.3f32, 0.7f32);
        let mut want = (arr(vec![w]), arr(vec![0.0f32]), arr(vec![0.0f32]));
        let (p, m, v) = (&mut want.0, &mut want.1, &mut want.2);
        apply_optimizer_step(&s, p, &mut [m, v], &arr(vec![g])).unwrap();
        let want = want.0.to_vec::<f32>()[0];
        let mut p = arr(vec![bf16::from_f32(w)]);
        let mut m = arr(vec![bf16::ZERO]);
        let mut v = arr(vec![bf16::ZERO]);
        let g16 = arr(vec![bf16::from_f32(g)]);
        apply_optimizer_step(&s, &mut p, &mut [&mut m, &mut v], &g16).unwrap();
        let got = p.to_vec::<bf16>()[0].to_f32();
        assert!((got - want).abs() <= 0.3 * 2f32.powi(-8), "{got} vs {want}");
        let mut p = arr(vec![f16::from_f32(w); 40_000]); // split across threads
        let mut acc = arr(vec![f16::from_f32(0.1); 40_000]);
        let s = step("adagrad", 0.1, 1, &[("epsilon", 1e-7)]);
        let g = arr(vec![f16::from_f32(g); 40_000]);
        apply_optimizer_step(&s, &mut p, &mut [&mut acc], &g).unwrap();
        let a = 0.1f32 + 0.7 * 0.7;
        let want = f16::from_f32(0.3 - 0.7 * 0.1 / (a + 1e-7).sqrt());
        assert!(p.to_vec::<f16>().iter().all(|&x| x == want));
    }

    #[test]
    fn weight_decay_follows_keras_order_in_place_and_across_threads() {
        // Keras: w - w·wd·lr, in the variable's dtype, (w·wd) rounded first.
        let (wd, lr) = (0.004f64, 0.001f64);
        let w: Vec<f32> = (0..40_000).map(|i| (i as f32 - 20_000.0) * 1e-3).collect();
        let mut p = arr(w.clone());
        let shared = p.clone();
        decay_weights(&mut p, wd, lr).unwrap();
        let want: Vec<f32> = w.iter().map(|&x| x - x * wd as f32 * lr as f32).collect();
        assert_eq!(p.to_vec::<f32>(), want);
        assert_eq!(
            shared.to_vec::<f32>(),
            w,
            "a tensor read earlier keeps its value"
        );
        let mut h = arr(vec![f16::from_f32(0.3)]);
        decay_weights(&mut h, 0.5, 0.1).unwrap();
        let w16 = f16::from_f32(0.3).to_f32(); // computed in f32, rounded once
        assert_eq!(h.to_vec::<f16>()[0], f16::from_f32(w16 - w16 * 0.5 * 0.1));
        assert!(decay_weights(&mut arr(vec![1i32]), 0.1, 0.1).is_err());
    }

    #[test]
    fn moving_averages_follow_keras_in_place_and_across_threads() {
        let a0: Vec<f32> = (0..40_000).map(|i| i as f32 * 1e-3).collect();
        let v: Vec<f32> = (0..40_000).map(|i| 1.0 - i as f32 * 1e-4).collect();
        let mut a = arr(a0.clone());
        let shared = a.clone();
        update_moving_average(&mut a, &arr(v.clone()), 0.99).unwrap();
        let (m, rest) = (0.99f32, 1.0f32 - 0.99f32);
        let want: Vec<f32> = a0.iter().zip(&v).map(|(&a, &v)| m * a + rest * v).collect();
        assert_eq!(a.to_vec::<f32>(), want);
        assert_eq!(
            shared.to_vec::<f32>(),
            a0,
            "a tensor read earlier keeps its value"
        );
        update_moving_average(&mut a, &arr(v.clone()), 0.0).unwrap(); // the first step copies
        assert_eq!(a.to_vec::<f32>(), v);
        assert!(update_moving_average(&mut a, &arr(vec![1.0f32]), 0.5).is_err());
    }

    #[test]
    fn bad_rules_slots_and_dtypes_are_errors() {
        let no_hyper = |_: &str| None;
        assert!(OptimizerStep::new("adamx", 0.1, 1, no_hyper).is_err());
        assert!(OptimizerStep::new("adam", 0.1, 1, no_hyper).is_err());
        let s = step("adagrad", 0.1, 1, &[("epsilon", 1e-7)]);
        let mut p = arr(vec![1.0f32]);
        assert!(apply_optimizer_step(&s, &mut p, &mut [], &arr(vec![1.0f32])).is_err());
        let mut p = arr(vec![1i32]);
        let mut acc = arr(vec![1i32]);
        assert!(apply_optimizer_step(&s, &mut p, &mut [&mut acc], &arr(vec![1i32])).is_err());
    }
}
