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
use crate::tensor::{Tensor, TensorId};

/// Ops whose jvp is the tangent of their one input, unchanged (as TensorFlow special-cases
/// them): no backward needs to run.
const IDENTITIES: &[&str] = &["ReadVariableOp", "Identity"];

/// A forward-mode accumulator: the tangents of the tensors (and variables) it has seen.
#[derive(Default)]
pub struct Accumulator {
    tangents: Mutex<FxHashMap<TensorId, Tensor>>,
    /// The first failure of a tangent computation, returned by `jvp`.
    error: Mutex<Option<Error>>,
}

impl Accumulator {
    pub fn new() -> Arc<Accumulator> {
        Arc::new(Accumulator::default())
    }

    /// Gives the tensor or variable `id` the tangent `tangent`; watching an id twice sums its
    /// tangents (TensorFlow's `_watch`).
    pub fn watch(&self, id: TensorId, tangent: Tensor) -> Result<()> {
        let mut tangents = self.tangents.lock();
        let summed = match tangents.get(&id) {
            Some(old) => ops::add(old, &tangent)?,
            None => tangent,
        };
        tangents.insert(id, summed);
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

    /// The tangent computed for `id`, `None` if it has none; the first tangent computation that
    /// failed, if one did.
    pub fn jvp(&self, id: TensorId) -> Result<Option<Tensor>> {
        if let Some(err) = self.error.lock().clone() {
            return Err(err);
        }
        Ok(self.tangents.lock().get(&id).cloned())
    }

    fn output_tangents(&self, entry: &Entry) -> Result<Vec<Option<Tensor>>> {
        let tangents: Vec<Option<Tensor>> = {
            let known = self.tangents.lock();
            entry.inputs.iter().map(|i| known.get(i).cloned()).collect()
        };
        if IDENTITIES.contains(&entry.op) && tangents.len() == 1 {
            return Ok(tangents);
        }
        jvp_by_double_vjp(entry, &tangents)
    }
}

impl Jvp for Accumulator {
    fn has_tangent(&self, ids: &[TensorId]) -> bool {
        let known = self.tangents.lock();
        ids.iter().any(|i| known.contains_key(i))
    }

    fn push_tangents(&self, entry: &Entry) {
        if self.error.lock().is_some() {
            return;
        }
        match self.output_tangents(entry) {
            Ok(outs) => {
                let mut known = self.tangents.lock();
                for ((id, _, _), t) in entry.outputs.iter().zip(outs) {
                    if let Some(t) = t {
                        known.insert(*id, t);
                    }
                }
            }
            Err(err) => *self.error.lock() = Some(err),
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
