//! Forward mode: the engine of `tf.autodiff.ForwardAccumulator`.
//!
//! An [`Accumulator`] maps tensor ids to tangents. It starts with the primals it is given; while
//! it is active, every op that [`record`](super::record::record)s and has an input with a
//! tangent gets the tangents of its outputs, the Jacobian-vector product `J t`.
//!
//! Design choice: no op declares a jvp. Each op's `J t` comes from its backward (its vjp,
//! `u -> Jᵀu`) by TensorFlow's "double vjp": the vjp is linear in its cotangent `u`, so running
//! it on a watched `u` under a private tape and differentiating `<Jᵀu, t>` with respect to `u`
//! gives `J t`. Backward closures are written with differentiable ops (that is what gives
//! higher-order gradients), so every op with a derivative has a jvp, checked by the same table.
//! It costs one backward and one sweep of it per op, which is why it runs only while an
//! accumulator is active and holds a tangent of an input: the recording hook is one
//! thread-local read (shared with the tapes' check) when no accumulator is active.
//!
//! The hook lives in Rust, in `record`, rather than in Python: every op, the Keras layers' fused
//! ones and the backward passes of tapes included, already goes through it, and an
//! accumulator then sees a tape's backward sweep (forward-over-reverse Hessian-vector products)
//! with no Python per op.
//!
//! Nesting follows TensorFlow: accumulators process an op in the order they were entered, and
//! each computes its tangents with itself, the accumulators entered after it and the tapes
//! entered after it hidden. So a tape outside an accumulator records the jvp computation
//! (`tape.gradient(acc.jvp(y), x)` is a Hessian-vector product), an accumulator outside another
//! sees the inner one's jvps (`outer.jvp(inner.jvp(y))` is a second derivative), and what is
//! nested inside an accumulator ignores its products.
//!
//! A backward that fails while computing a tangent (an op without a derivative) cannot raise
//! from the op that ran: the accumulator keeps the first such error and [`Accumulator::jvp`]
//! returns it.

use std::sync::Arc;

use ferrotape_core::{Error, Result};
use parking_lot::Mutex;
use rustc_hash::FxHashMap;

use super::backprop::Source;
use super::record::{pop_accumulator, push_accumulator, Entry, Jvp, Tape};
use crate::ops;
use crate::tensor::{Tensor, TensorId, WeakTensor};
use crate::variable::Variable;

/// Ops whose jvp is the tangent of their one input, unchanged (as TensorFlow special-cases
/// them): no backward needs to run.
const IDENTITIES: &[&str] = &["ReadVariableOp", "Identity"];

/// A forward-mode accumulator: the tangents of the tensors (and variables) it has seen.
///
/// A tangent lives as long as its tensor (TensorFlow deletes a jvp with its primal): each is
/// stored with a weak handle on its tensor, and those of dead tensors are dropped whenever the
/// map has doubled since the last sweep, so a long loop under an accumulator does not grow
/// without bound. A variable's tangent lives as long as the accumulator.
#[derive(Default)]
pub struct Accumulator {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    tangents: FxHashMap<TensorId, Tangent>,
    /// The size at which dead tensors' tangents are dropped next.
    prune_at: usize,
    /// The first failure of a tangent computation, returned by `jvp`.
    error: Option<Error>,
}

struct Tangent {
    /// The tensor it belongs to; `None` for a variable's.
    of: Option<WeakTensor>,
    value: Tensor,
}

impl State {
    fn insert(&mut self, id: TensorId, of: Option<WeakTensor>, value: Tensor) {
        self.tangents.insert(id, Tangent { of, value });
        if self.tangents.len() >= self.prune_at {
            self.tangents
                .retain(|_, t| t.of.as_ref().is_none_or(WeakTensor::is_alive));
            self.prune_at = (2 * self.tangents.len()).max(64);
        }
    }
}

impl Accumulator {
    pub fn new() -> Arc<Accumulator> {
        Arc::new(Accumulator::default())
    }

    /// Gives `tensor` the tangent `tangent`; watching a tensor twice sums its tangents
    /// (TensorFlow's `_watch`).
    pub fn watch_tensor(&self, tensor: &Tensor, tangent: Tensor) -> Result<()> {
        self.watch(tensor.id(), Some(tensor.downgrade()), tangent)
    }

    /// Gives the variable `var` the tangent `tangent`, read by every read of it.
    pub fn watch_variable(&self, var: &Variable, tangent: Tensor) -> Result<()> {
        self.watch(var.id(), None, tangent)
    }

    fn watch(&self, id: TensorId, of: Option<WeakTensor>, tangent: Tensor) -> Result<()> {
        let mut st = self.state.lock();
        let summed = match st.tangents.get(&id) {
            Some(old) => ops::add(&old.value, &tangent)?,
            None => tangent,
        };
        st.insert(id, of, summed);
        Ok(())
    }

    /// Makes the accumulator active on this thread (entering its `with` block).
    pub fn push(self: &Arc<Accumulator>) {
        push_accumulator(self.clone());
    }

    /// Removes it from this thread's stack; false if it was not active.
    pub fn pop(self: &Arc<Accumulator>) -> bool {
        let me: Arc<dyn Jvp> = self.clone();
        pop_accumulator(&me)
    }

    /// The tangent computed for the tensor or variable `id`, `None` if it has none; the first
    /// tangent computation that failed, if one did.
    pub fn jvp(&self, id: TensorId) -> Result<Option<Tensor>> {
        let st = self.state.lock();
        if let Some(err) = &st.error {
            return Err(err.clone());
        }
        Ok(st.tangents.get(&id).map(|t| t.value.clone()))
    }

    fn output_tangents(&self, entry: &Entry) -> Result<Vec<Option<Tensor>>> {
        let tangents: Vec<Option<Tensor>> = {
            let st = self.state.lock();
            let of = |i: &TensorId| st.tangents.get(i).map(|t| t.value.clone());
            entry.inputs.iter().map(of).collect()
        };
        if IDENTITIES.contains(&entry.op) && tangents.len() == 1 {
            return Ok(tangents);
        }
        jvp_by_double_vjp(entry, &tangents)
    }
}

impl Jvp for Accumulator {
    fn has_tangent(&self, ids: &[TensorId]) -> bool {
        let st = self.state.lock();
        ids.iter().any(|i| st.tangents.contains_key(i))
    }

    fn push_tangents(&self, entry: &Entry, outputs: &[&Tensor]) {
        if self.state.lock().error.is_some() {
            return;
        }
        // Computed without holding the lock: it runs ops, and a custom gradient's Python.
        let computed = self.output_tangents(entry);
        let mut st = self.state.lock();
        match computed {
            Ok(tangents) => {
                for (out, t) in outputs.iter().zip(tangents) {
                    if let Some(t) = t {
                        st.insert(out.id(), Some(out.downgrade()), t);
                    }
                }
            }
            Err(err) => st.error = Some(err),
        }
    }
}

/// `J t` for one recorded op, from its backward: with `u` watched (its value never matters,
/// the vjp being linear in it; ones, as TensorFlow's aids), `v = Jᵀu`, then
/// `d<v, t>/du = J t`. `None` for an output no tangent reaches.
pub(crate) fn jvp_by_double_vjp(
    entry: &Entry,
    tangents: &[Option<Tensor>],
) -> Result<Vec<Option<Tensor>>> {
    let aids = entry
        .outputs
        .iter()
        .map(|(_, shape, dtype)| ops::ones(*dtype, shape))
        .collect::<Result<Vec<_>>>()?;
    let transpose = Tape::new(false, false);
    for aid in &aids {
        transpose.watch_tensor(aid);
    }
    let needs: Vec<bool> = tangents.iter().map(Option::is_some).collect();
    transpose.push();
    let vjps = (entry.backward)(&aids, &needs);
    transpose.pop();
    let (targets, seeds): (Vec<Tensor>, Vec<Tensor>) = vjps?
        .into_iter()
        .zip(tangents)
        .filter_map(|(v, t)| Some((v?, t.clone()?)))
        .unzip();
    if targets.is_empty() {
        return Ok(vec![None; aids.len()]);
    }
    let sources: Vec<Source> = aids.iter().map(Source::of_tensor).collect();
    transpose.gradient(&targets, &sources, Some(&seeds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotape_core::Array;

    fn scalar(v: f64) -> Tensor {
        Tensor::new(Array::scalar(v))
    }

    fn value(t: &Tensor) -> f64 {
        t.value().to_vec::<f64>()[0]
    }

    /// `f(x)` under an accumulator giving `x` the tangent 1; the accumulator and `f(x)`.
    fn forward(x: &Tensor, f: impl FnOnce(&Tensor) -> Tensor) -> (Arc<Accumulator>, Tensor) {
        let acc = Accumulator::new();
        acc.watch_tensor(x, scalar(1.0)).unwrap();
        acc.push();
        let y = f(x);
        assert!(acc.pop());
        (acc, y)
    }

    #[test]
    fn jvp_of_a_product_rule_expression() {
        let x = scalar(3.0);
        let (acc, y) = forward(&x, |x| ops::mul(&ops::exp(x).unwrap(), x).unwrap());
        // d/dx x·e^x = e^x (1 + x)
        let jvp = acc.jvp(y.id()).unwrap().unwrap();
        assert!((value(&jvp) - 3f64.exp() * 4.0).abs() < 1e-9);
        assert_eq!(value(&acc.jvp(x.id()).unwrap().unwrap()), 1.0);
    }

    #[test]
    fn values_outside_the_block_have_no_tangent() {
        let x = scalar(3.0);
        let before = ops::mul(&x, &x).unwrap();
        let (acc, _) = forward(&x, |x| ops::neg(x).unwrap());
        let after = ops::mul(&x, &x).unwrap();
        assert!(acc.jvp(before.id()).unwrap().is_none());
        assert!(acc.jvp(after.id()).unwrap().is_none());
    }

    #[test]
    fn a_tape_inside_ignores_the_jvp_computation_and_one_outside_records_it() {
        let x = scalar(2.0);
        let outside = Tape::new(false, false);
        outside.push();
        outside.watch_tensor(&x);
        let acc = Accumulator::new();
        acc.watch_tensor(&x, scalar(1.0)).unwrap();
        acc.push();
        let inside = Tape::new(false, false);
        inside.push();
        inside.watch_tensor(&x);
        let y = ops::mul(&ops::mul(&x, &x).unwrap(), &x).unwrap();
        inside.pop();
        acc.pop();
        outside.pop();
        assert_eq!(inside.recorded_ops(), ["Mul", "Mul"]);
        // d/dx of the jvp 3x² is 6x.
        let jvp = acc.jvp(y.id()).unwrap().unwrap();
        let g = outside
            .gradient(&[jvp], &[Source::of_tensor(&x)], None)
            .unwrap();
        assert_eq!(value(g[0].as_ref().unwrap()), 12.0);
    }

    #[test]
    fn dead_tensors_lose_their_tangents() {
        let x = scalar(1.5);
        let (acc, y) = forward(&x, |x| {
            let mut y = x.clone();
            for _ in 0..1000 {
                y = ops::mul(&y, &x.scalar_like(1.0)).unwrap();
            }
            y
        });
        // x, y and the survivors of the last sweep; not the 999 intermediates.
        assert!(acc.state.lock().tangents.len() < 200);
        assert_eq!(value(&acc.jvp(y.id()).unwrap().unwrap()), 1.0);
    }

    #[test]
    fn a_failed_tangent_is_reported_by_jvp() {
        let (a, x) = (scalar(1.5), scalar(0.7));
        let outer = Accumulator::new();
        outer.watch_tensor(&a, scalar(1.0)).unwrap();
        outer.push();
        let (inner, y) = forward(&a, |a| ops::igamma(a, &x).unwrap());
        outer.pop();
        let inner_jvp = inner.jvp(y.id()).unwrap().unwrap();
        let err = outer.jvp(inner_jvp.id()).unwrap_err();
        assert!(err.to_string().contains("IgammaGradA"), "{err}");
    }
}
