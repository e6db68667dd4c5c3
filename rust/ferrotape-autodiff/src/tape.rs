//! The gradient tape.
//!
//! Design choice (hard to undo): a tape is a plain list of [`Entry`]s in execution order, each
//! `(input ids, output ids, backward closure)`, plus the set of tensor ids it tracks (watched
//! tensors and variables, and every output of a recorded op). Every op calls [`record`] after its
//! forward kernel; `record` consults the thread-local stack of active tapes (TensorFlow's tapes
//! are per thread too), and costs one thread-local read when no tape is active. Backward
//! closures are written with ferrotape's own ops, so when an outer tape is active during a
//! sweep it records the backward pass: nested tapes give higher derivatives with no extra
//! machinery. Gradients are accumulated in a map keyed by tensor id, never written on tensors.

use std::cell::RefCell;
use std::sync::Arc;

use ferrotape_core::{DType, Error, Result, Shape};
use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::ops;
use crate::tensor::{Tensor, TensorId};
use crate::variable::Variable;

/// The derivative of one recorded op: given the gradients of its outputs (zeros where an
/// output did not reach the target) and which inputs need a gradient, the gradients of its
/// inputs (`None` for those not needed or not differentiable).
pub type BackwardFn = dyn Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync;

/// What a host language attaches to a user-defined derivative: the objects (a Python callable)
/// its garbage collector must be able to see through the tape that keeps them alive.
pub type HostObject = Arc<dyn std::any::Any + Send + Sync>;

/// One recorded op.
pub struct Entry {
    op: &'static str,
    inputs: SmallVec<[TensorId; 2]>,
    outputs: SmallVec<[(TensorId, Shape, DType); 1]>,
    backward: Box<BackwardFn>,
    /// Set for `record_custom` entries only; each entry, and so each tape, has its own.
    host: Option<HostObject>,
}

#[derive(Default)]
struct State {
    paused: bool,
    used: bool,
    tracked: FxHashSet<TensorId>,
    entries: Vec<Arc<Entry>>,
    watched_variables: Vec<Variable>,
}

/// A gradient tape (`tf.GradientTape`'s engine; the Python class adds nests and the `with`).
pub struct Tape {
    persistent: bool,
    watch_accessed_variables: bool,
    state: Mutex<State>,
}

thread_local! {
    static ACTIVE: RefCell<Vec<Arc<Tape>>> = const { RefCell::new(Vec::new()) };
    /// Open variable watchers (`custom_gradient` collects the variables its function reads).
    static VARIABLE_WATCHERS: RefCell<Vec<Vec<Variable>>> = const { RefCell::new(Vec::new()) };
}

/// Starts collecting the variables read on this thread (nestable).
pub fn push_variable_watcher() {
    VARIABLE_WATCHERS.with(|w| w.borrow_mut().push(Vec::new()));
}

/// Stops the innermost watcher and returns the variables it saw, in first-read order.
pub fn pop_variable_watcher() -> Vec<Variable> {
    VARIABLE_WATCHERS.with(|w| w.borrow_mut().pop().unwrap_or_default())
}

/// Runs `f` over the active tapes without copying the stack (the hot path of every op).
fn with_active_tapes(f: impl FnOnce(&[Arc<Tape>])) {
    ACTIVE.with(|a| {
        let a = a.borrow();
        if !a.is_empty() {
            f(&a);
        }
    });
}

/// Whether an op on these inputs would be recorded now: some active, unpaused tape tracks one
/// of them. A backward pass that finds nothing would record its own ops may compute with a
/// fused kernel instead of differentiable ops (the results are the same values; only an
/// outer tape, for higher derivatives, needs the ops).
pub fn would_record(inputs: &[&Tensor]) -> bool {
    let mut recording = false;
    with_active_tapes(|tapes| {
        recording = tapes.iter().any(|tape| {
            let st = tape.state.lock();
            !st.paused && inputs.iter().any(|t| st.tracked.contains(&t.id()))
        });
    });
    recording
}

/// Records an op on every active tape that tracks one of its inputs. `make_backward` runs only
/// when some tape records, so ops pay for saving tensors only under a tape.
pub fn record<F>(
    op: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
{
    if outputs.iter().all(|t| !t.dtype().is_float()) {
        return; // Integer and bool results carry no gradient.
    }
    with_active_tapes(|tapes| {
        let ids: SmallVec<[TensorId; 2]> = inputs.iter().map(|t| t.id()).collect();
        record_ids(op, tapes, ids, outputs, move || {
            (Box::new(make_backward()), None)
        });
    });
}

fn record_ids(
    op: &'static str,
    tapes: &[Arc<Tape>],
    inputs: SmallVec<[TensorId; 2]>,
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> (Box<BackwardFn>, Option<HostObject>),
) {
    let mut make = Some(make_backward);
    let mut entry: Option<Arc<Entry>> = None;
    let mut inputs = Some(inputs);
    for tape in tapes {
        let mut st = tape.state.lock();
        let ids = inputs
            .as_ref()
            .unwrap_or_else(|| &entry.as_ref().unwrap().inputs);
        if st.paused || !ids.iter().any(|i| st.tracked.contains(i)) {
            continue;
        }
        let e = entry.get_or_insert_with(|| {
            let (backward, host) = (make.take().unwrap())();
            Arc::new(Entry {
                op,
                inputs: inputs.take().unwrap(),
                outputs: outputs
                    .iter()
                    .map(|t| (t.id(), Shape::from(t.shape()), t.dtype()))
                    .collect(),
                backward,
                host,
            })
        });
        st.tracked.extend(outputs.iter().map(|t| t.id()));
        st.entries.push(e.clone());
    }
}

/// Records the read of a variable: active tapes that watch accessed variables start watching a
/// trainable one, and tapes that watch it record `out` as its identity.
pub(crate) fn note_variable_read(var: &Variable, out: &Tensor) {
    VARIABLE_WATCHERS.with(|w| {
        for seen in w.borrow_mut().iter_mut() {
            if !seen.contains(var) {
                seen.push(var.clone());
            }
        }
    });
    with_active_tapes(|tapes| {
        for tape in tapes {
            if tape.watch_accessed_variables && var.trainable() && !tape.state.lock().paused {
                tape.watch_variable(var);
            }
        }
        let ids = SmallVec::from_slice(&[var.id()]);
        record_ids("ReadVariableOp", tapes, ids, &[out], || {
            let identity = |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].clone())]);
            (Box::new(identity), None)
        });
    });
}

/// Records a user-defined derivative (`custom_gradient`) for `outputs` as a function of `inputs`.
///
/// `make` is called once per recording tape, so that each tape's entry holds its own host
/// object: a garbage collector walking from one tape then counts each reference exactly once
/// (a shared one would be counted by every tape holding it).
pub fn record_custom(
    op: &'static str,
    inputs: &[TensorId],
    outputs: &[&Tensor],
    mut make: impl FnMut() -> (Box<BackwardFn>, HostObject),
) {
    with_active_tapes(|tapes| {
        for tape in tapes {
            let ids = SmallVec::from_slice(inputs);
            let tape = std::slice::from_ref(tape);
            record_ids(op, tape, ids, outputs, || {
                let (backward, host) = make();
                (backward, Some(host))
            });
        }
    });
}

/// A gradient source: what `gradient()` differentiates with respect to.
#[derive(Clone, Debug)]
pub struct Source {
    pub id: TensorId,
    pub shape: Shape,
    pub dtype: DType,
}

impl Source {
    pub fn of_tensor(t: &Tensor) -> Source {
        Source {
            id: t.id(),
            shape: t.shape().into(),
            dtype: t.dtype(),
        }
    }

    pub fn of_variable(v: &Variable) -> Source {
        Source {
            id: v.id(),
            shape: v.shape().into(),
            dtype: v.dtype(),
        }
    }
}

impl Tape {
    /// Calls `f` with the host objects of the entries this tape holds (see `record_custom`).
    /// Returns false, having called nothing, when another thread holds the tape: a garbage
    /// collector must not wait here (that thread may be waiting for the collector's lock), and
    /// missing edges only make it keep objects longer.
    pub fn try_for_each_host_object(&self, mut f: impl FnMut(&HostObject)) -> bool {
        let Some(state) = self.state.try_lock() else {
            return false;
        };
        for entry in &state.entries {
            if let Some(host) = &entry.host {
                f(host);
            }
        }
        true
    }

    pub fn new(persistent: bool, watch_accessed_variables: bool) -> Arc<Tape> {
        // Room for a typical small step up front: growing the set op by op showed up as
        // rehashing in profiles of the tape's hot path.
        let state = State {
            tracked: FxHashSet::with_capacity_and_hasher(32, Default::default()),
            entries: Vec::with_capacity(16),
            ..State::default()
        };
        Arc::new(Tape {
            persistent,
            watch_accessed_variables,
            state: Mutex::new(state),
        })
    }

    pub fn persistent(&self) -> bool {
        self.persistent
    }

    /// The number of recorded entries.
    pub fn len(&self) -> usize {
        self.state.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes this tape active on the current thread (entering the `with` block).
    pub fn push(self: &Arc<Tape>) {
        ACTIVE.with(|a| a.borrow_mut().push(self.clone()));
    }

    /// Removes this tape from the current thread's active stack; false if it was not there.
    pub fn pop(self: &Arc<Tape>) -> bool {
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            match a.iter().rposition(|t| Arc::ptr_eq(t, self)) {
                Some(i) => {
                    a.remove(i);
                    true
                }
                None => false,
            }
        })
    }

    pub fn is_active(self: &Arc<Tape>) -> bool {
        ACTIVE.with(|a| a.borrow().iter().any(|t| Arc::ptr_eq(t, self)))
    }

    pub fn set_paused(&self, paused: bool) -> bool {
        std::mem::replace(&mut self.state.lock().paused, paused)
    }

    /// Watches a tensor; only floating tensors can carry gradients (returns false otherwise).
    pub fn watch_tensor(&self, t: &Tensor) -> bool {
        if !t.dtype().is_float() {
            return false;
        }
        self.state.lock().tracked.insert(t.id());
        true
    }

    pub fn watch_variable(&self, v: &Variable) {
        let mut st = self.state.lock();
        if st.tracked.insert(v.id()) {
            st.watched_variables.push(v.clone());
        }
    }

    /// Watched variables in creation order.
    pub fn watched_variables(&self) -> Vec<Variable> {
        let mut vars = self.state.lock().watched_variables.clone();
        vars.sort_by_key(|v| v.order());
        vars
    }

    /// The names of the ops recorded so far, in order (the gradient-check inventory reads them).
    pub fn recorded_ops(&self) -> Vec<&'static str> {
        self.state.lock().entries.iter().map(|e| e.op).collect()
    }

    /// Forgets everything recorded and watched (`tape.reset()`).
    pub fn reset(&self) {
        let mut st = self.state.lock();
        let paused = st.paused;
        *st = State {
            paused,
            ..State::default()
        };
    }

    /// The recorded entries for one differentiation: shared for a persistent tape, taken (and
    /// the tape marked used) for a non-persistent one.
    fn entries_for_sweep(&self, op: &'static str) -> Result<Vec<Arc<Entry>>> {
        let mut st = self.state.lock();
        if st.used {
            return Err(Error::runtime(
                op,
                "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)",
            ));
        }
        if self.persistent {
            return Ok(st.entries.clone());
        }
        st.used = true;
        st.paused = true;
        Ok(std::mem::take(&mut st.entries))
    }

    fn tracked_sources(&self, sources: &[Source]) -> FxHashSet<TensorId> {
        let st = self.state.lock();
        sources
            .iter()
            .filter(|s| s.dtype.is_float() && st.tracked.contains(&s.id))
            .map(|s| s.id)
            .collect()
    }

    /// d(sum of targets, weighted by `output_gradients`)/d(sources). `None` marks a source the
    /// targets do not depend on (or a non-float one).
    pub fn gradient(
        &self,
        targets: &[Tensor],
        sources: &[Source],
        output_gradients: Option<&[Tensor]>,
    ) -> Result<Vec<Option<Tensor>>> {
        let entries = self.entries_for_sweep("GradientTape.gradient")?;
        let reach = self.tracked_sources(sources);
        let mut seeds = Vec::with_capacity(targets.len());
        for (i, t) in targets.iter().enumerate() {
            if !t.dtype().is_float() {
                continue;
            }
            let seed = match output_gradients.and_then(|g| g.get(i)) {
                Some(g) => ops::broadcast_to(&ops::cast(g, t.dtype())?, t.shape())?,
                None => ops::ones_like(t)?,
            };
            seeds.push((t.id(), seed));
        }
        let grads = sweep(entries, reach, seeds, !self.persistent)?;
        Ok(sources.iter().map(|s| grads.get(&s.id).cloned()).collect())
    }

    /// The full Jacobian of `target` with respect to each source: shape `target + source`.
    pub fn jacobian(&self, target: &Tensor, sources: &[Source]) -> Result<Vec<Option<Tensor>>> {
        let entries = self.entries_for_sweep("GradientTape.jacobian")?;
        let reach = self.tracked_sources(sources);
        let n = target.len();
        let mut rows: Vec<Vec<Option<Tensor>>> = vec![Vec::with_capacity(n); sources.len()];
        for i in 0..n {
            let seed = ops::one_hot_seed(target, &[i])?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
            )?;
            for (k, s) in sources.iter().enumerate() {
                rows[k].push(grads.get(&s.id).cloned());
            }
        }
        sources
            .iter()
            .zip(rows)
            .map(|(s, r)| stack_rows(r, target.shape(), s))
            .collect()
    }

    /// Per-example Jacobians: shape `(batch,) + target[1:] + source[1:]`; zeros when unconnected.
    pub fn batch_jacobian(&self, target: &Tensor, source: &Source) -> Result<Tensor> {
        const OP: &str = "GradientTape.batch_jacobian";
        let entries = self.entries_for_sweep(OP)?;
        if target.rank() == 0 || source.shape.is_empty() || target.shape()[0] != source.shape[0] {
            return Err(Error::invalid(
                OP,
                format!(
                    "target and source must have the same (non-scalar) batch dimension, received shapes {:?} and {:?}",
                    target.shape(),
                    source.shape
                ),
            ));
        }
        let reach = self.tracked_sources(std::slice::from_ref(source));
        let batch = target.shape()[0];
        let per = target.len() / batch.max(1);
        let mut cols = Vec::with_capacity(per);
        for j in 0..per {
            let hot: Vec<usize> = (0..batch).map(|b| b * per + j).collect();
            let seed = ops::one_hot_seed(target, &hot)?;
            let grads = sweep(
                entries.clone(),
                reach.clone(),
                vec![(target.id(), seed)],
                false,
            )?;
            cols.push(grads.get(&source.id).cloned());
        }
        let per_source: Shape = source.shape[1..].into();
        let mut out_shape: Shape = target.shape().into();
        out_shape.extend_from_slice(&per_source);
        let flat_src = source.shape.iter().product::<usize>() / batch.max(1);
        let cols = cols
            .into_iter()
            .map(|c| match c {
                Some(g) => ops::reshape(&g, &[batch, flat_src]),
                None => ops::zeros(source.dtype, &[batch, flat_src]),
            })
            .collect::<Result<Vec<_>>>()?;
        if cols.is_empty() {
            return ops::zeros(source.dtype, &out_shape);
        }
        ops::reshape(&ops::stack(&cols, 1)?, &out_shape)
    }
}

/// Stacks per-target-element gradients into a Jacobian; `None` if no element reached the source.
fn stack_rows(
    rows: Vec<Option<Tensor>>,
    target_shape: &[usize],
    s: &Source,
) -> Result<Option<Tensor>> {
    if rows.iter().all(|r| r.is_none()) {
        return Ok(None);
    }
    let rows = rows
        .into_iter()
        .map(|r| r.map_or_else(|| ops::zeros(s.dtype, &s.shape), Ok))
        .collect::<Result<Vec<_>>>()?;
    let mut shape: Shape = target_shape.into();
    shape.extend_from_slice(&s.shape);
    Ok(Some(ops::reshape(&ops::stack(&rows, 0)?, &shape)?))
}

/// The backward sweep. `reach` starts as the tracked sources and grows forward over the entries
/// to every id that depends on them; entries are then visited in reverse, each with the
/// gradients of its outputs. With `consume`, entries (and what they saved) drop as they are used.
fn sweep(
    mut entries: Vec<Arc<Entry>>,
    mut reach: FxHashSet<TensorId>,
    seeds: Vec<(TensorId, Tensor)>,
    consume: bool,
) -> Result<FxHashMap<TensorId, Tensor>> {
    // Sources are few: a small list beats a second hash set here.
    let sources: SmallVec<[TensorId; 8]> = reach.iter().copied().collect();
    reach.reserve(entries.len() * 2);
    for e in &entries {
        if e.inputs.iter().any(|i| reach.contains(i)) {
            reach.extend(e.outputs.iter().map(|o| o.0));
        }
    }
    let mut grads: FxHashMap<TensorId, Tensor> =
        FxHashMap::with_capacity_and_hasher(entries.len() * 2, Default::default());
    for (id, g) in seeds {
        if reach.contains(&id) {
            accumulate(&mut grads, id, g)?;
        }
    }
    if grads.is_empty() {
        return Ok(grads);
    }
    let visit = |e: &Entry, grads: &mut FxHashMap<TensorId, Tensor>| -> Result<()> {
        let needs: SmallVec<[bool; 2]> = e.inputs.iter().map(|i| reach.contains(i)).collect();
        if !needs.contains(&true) || !e.outputs.iter().any(|o| grads.contains_key(&o.0)) {
            return Ok(());
        }
        let out_grads: SmallVec<[Tensor; 1]> = e
            .outputs
            .iter()
            .map(|(id, shape, dtype)| {
                let g = if sources.contains(id) {
                    grads.get(id).cloned()
                } else {
                    grads.remove(id)
                };
                g.map_or_else(|| ops::zeros(*dtype, shape), Ok)
            })
            .collect::<Result<_>>()?;
        let in_grads = (e.backward)(&out_grads, &needs)?;
        for ((&id, need), g) in e.inputs.iter().zip(needs).zip(in_grads) {
            if let (true, Some(g)) = (need, g) {
                accumulate(grads, id, g)?;
            }
        }
        Ok(())
    };
    if consume {
        while let Some(e) = entries.pop() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            visit(&e, &mut grads).map_err(|err| name_backward(err, e.op))?;
        }
    } else {
        for e in entries.iter().rev() {
            ferrotape_core::interrupt::check("GradientTape.gradient")?;
            visit(e, &mut grads).map_err(|err| name_backward(err, e.op))?;
        }
    }
    Ok(grads)
}

fn name_backward(err: Error, op: &'static str) -> Error {
    match err {
        Error::Unimplemented { msg, .. } => Error::unimplemented(op, msg),
        other => other,
    }
}

fn accumulate(grads: &mut FxHashMap<TensorId, Tensor>, id: TensorId, g: Tensor) -> Result<()> {
    use std::collections::hash_map::Entry as Slot;
    match grads.entry(id) {
        Slot::Occupied(mut slot) => {
            let sum = ops::add(slot.get(), &g)?;
            slot.insert(sum);
        }
        Slot::Vacant(slot) => {
            slot.insert(g);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrotape_core::Array;

    fn scalar(v: f64) -> Tensor {
        Tensor::new(Array::scalar(v))
    }

    fn value(t: &Tensor) -> f64 {
        t.value().scalar_f64().unwrap()
    }

    /// Records `f(x)` on a fresh tape watching `x`.
    fn taped(
        persistent: bool,
        x: &Tensor,
        f: impl FnOnce(&Tensor) -> Tensor,
    ) -> (Arc<Tape>, Tensor) {
        let tape = Tape::new(persistent, true);
        tape.push();
        tape.watch_tensor(x);
        let y = f(x);
        tape.pop();
        (tape, y)
    }

    #[test]
    fn gradient_of_a_product_rule_expression() {
        let x = scalar(3.0);
        let (tape, y) = taped(false, &x, |x| ops::mul(&ops::exp(x).unwrap(), x).unwrap());
        let g = tape.gradient(&[y], &[Source::of_tensor(&x)], None).unwrap();
        // d/dx x·e^x = e^x (1 + x)
        assert!((value(g[0].as_ref().unwrap()) - 3f64.exp() * 4.0).abs() < 1e-9);
    }

    #[test]
    fn nested_tapes_give_the_second_derivative() {
        let x = scalar(2.0);
        let outer = Tape::new(false, true);
        outer.push();
        outer.watch_tensor(&x);
        let (inner, y) = taped(false, &x, |x| {
            ops::mul(&ops::mul(x, x).unwrap(), x).unwrap()
        });
        let dy = inner
            .gradient(&[y], &[Source::of_tensor(&x)], None)
            .unwrap()[0]
            .clone()
            .unwrap();
        outer.pop();
        let d2y = outer
            .gradient(std::slice::from_ref(&dy), &[Source::of_tensor(&x)], None)
            .unwrap();
        assert_eq!(value(&dy), 12.0); // 3x²
        assert_eq!(value(d2y[0].as_ref().unwrap()), 12.0); // 6x
    }

    #[test]
    fn unconnected_sources_get_none_and_a_second_sweep_is_refused() {
        let (x, z) = (scalar(1.0), scalar(5.0));
        let (tape, y) = taped(false, &x, |x| ops::sin(x).unwrap());
        let g = tape
            .gradient(std::slice::from_ref(&y), &[Source::of_tensor(&z)], None)
            .unwrap();
        assert!(g[0].is_none());
        assert!(matches!(
            tape.gradient(&[y], &[Source::of_tensor(&x)], None),
            Err(Error::Runtime { .. })
        ));
    }

    #[test]
    fn a_non_persistent_sweep_frees_saved_tensors_and_a_persistent_tape_keeps_them() {
        for persistent in [false, true] {
            let x = scalar(0.5);
            let mut weak = None;
            let (tape, target) = taped(persistent, &x, |x| {
                let saved = ops::exp(x).unwrap(); // Exp saves its output for the backward pass
                weak = Some(saved.downgrade());
                ops::reduce_sum(&saved, None, false).unwrap()
            });
            let weak = weak.unwrap();
            assert!(
                weak.upgrade().is_some(),
                "the tape keeps what backward needs"
            );
            tape.gradient(&[target], &[Source::of_tensor(&x)], None)
                .unwrap();
            assert_eq!(weak.upgrade().is_some(), persistent);
            drop(tape);
            assert!(
                weak.upgrade().is_none(),
                "dropping the tape frees everything"
            );
        }
    }
}
