//! Recording: the tape as a data structure, and the primitive every op calls.
//!
//! Design choice (hard to undo): a tape is a plain list of [`Entry`]s in execution order, each
//! `(input ids, output ids, backward closure)`, plus the set of tensor ids it tracks (watched
//! tensors and variables, and every output of a recorded op). Every op calls [`record`] after its
//! forward kernel; `record` consults the thread-local stack of active tapes (TensorFlow's tapes
//! are per thread too), and costs one thread-local read when no tape is active.
//!
//! The same stack holds the active forward accumulators (`forward`), seen through the [`Jvp`]
//! trait: `record` hands them each op after the tapes have recorded it, so the one read above is
//! still the whole cost when neither is active.
//!
//! This file imports no op: ops depend on it, so it is the bottom of the crate's dependency
//! order, and the sweep and the tangents, written with ops, live in `backprop` and `forward`
//! above it.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use ferrotape_core::{DType, Result, Shape};
use parking_lot::Mutex;
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

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
    pub(super) op: &'static str,
    pub(super) inputs: SmallVec<[TensorId; 2]>,
    pub(super) outputs: SmallVec<[(TensorId, Shape, DType); 1]>,
    pub(super) backward: Box<BackwardFn>,
    /// Whether `backward` also takes output gradients with leading batch axes (see
    /// [`batch_axes`]); set by [`record_vectorizable`]. The vectorized Jacobians read it.
    pub(super) vectorizable: bool,
    /// Set for `record_custom` entries only; each entry, and so each tape, has its own.
    host: Option<HostObject>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) paused: bool,
    /// Set when a non-persistent tape has been differentiated (see `backprop`).
    pub(super) used: bool,
    pub(super) tracked: FxHashSet<TensorId>,
    pub(super) entries: Vec<Arc<Entry>>,
    watched_variables: Vec<Variable>,
}

/// A gradient tape (`tf.GradientTape`'s engine; the Python class adds nests and the `with`).
pub struct Tape {
    pub(super) persistent: bool,
    watch_accessed_variables: bool,
    pub(super) state: Mutex<State>,
}

/// A forward-mode accumulator as the recording primitive sees it. The accumulator itself
/// (`forward::Accumulator`) computes tangents with ops, so it lives above this file; the trait
/// keeps this file free of ops.
pub trait Jvp: Send + Sync {
    /// Whether some of these ids (an op's inputs) carry a tangent.
    fn has_tangent(&self, ids: &[TensorId]) -> bool;
    /// Computes and keeps the tangents of `entry`'s outputs (`outputs`, the tensors). Runs with
    /// this accumulator, those entered after it and the tapes entered after it hidden (see
    /// [`record`]).
    fn push_tangents(&self, entry: &Entry, outputs: &[&Tensor]);
}

/// What is active on a thread: tapes and forward accumulators, each with the sequence number
/// of its entry, so that an accumulator's own computations can be hidden from everything
/// entered after it (TensorFlow's strict nesting).
struct Active {
    tapes: Vec<Arc<Tape>>,
    tape_seqs: Vec<u64>,
    accumulators: Vec<(u64, Arc<dyn Jvp>)>,
    next_seq: u64,
}

thread_local! {
    static ACTIVE: RefCell<Active> = const {
        RefCell::new(Active {
            tapes: Vec::new(),
            tape_seqs: Vec::new(),
            accumulators: Vec::new(),
            next_seq: 0,
        })
    };
    /// Open variable watchers (`custom_gradient` collects the variables its function reads).
    static VARIABLE_WATCHERS: RefCell<Vec<Vec<Variable>>> = const { RefCell::new(Vec::new()) };
    /// See [`batch_axes`].
    static BATCH_AXES: Cell<usize> = const { Cell::new(0) };
}

/// How many leading batch axes the output gradients handed to backward closures carry: 0,
/// except inside a vectorized Jacobian's sweep, where one sweep carries every row of the
/// Jacobian at once (TensorFlow's pfor). A vectorizable backward keeps those axes in front of
/// each input gradient: broadcasting does that for element-wise formulas, and the shape
/// helpers that are not element-wise (`ops::unbroadcast`, `ops::with_batch_axes_of`) read this.
pub fn batch_axes() -> usize {
    BATCH_AXES.with(Cell::get)
}

/// Runs `f` with [`batch_axes`] set to `axes`, restoring the previous value afterwards (also
/// when `f` fails or unwinds).
pub(super) fn with_batch_axes<T>(axes: usize, f: impl FnOnce() -> T) -> T {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            BATCH_AXES.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BATCH_AXES.with(|b| b.replace(axes)));
    f()
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
        if !a.tapes.is_empty() {
            f(&a.tapes);
        }
    });
}

/// Whether some active tape on this thread is recording (not paused).
pub fn any_recording() -> bool {
    let mut recording = false;
    with_active_tapes(|tapes| recording = tapes.iter().any(|t| !t.state.lock().paused));
    recording
}

/// Whether an op on these inputs would be recorded now: some active, unpaused tape tracks one
/// of them, or some active accumulator holds a tangent of one. A backward pass that finds
/// nothing would record its own ops may compute with a fused kernel instead of differentiable
/// ops (the results are the same values; only an outer tape, for higher derivatives, or an
/// accumulator, for forward over reverse, needs the ops).
pub fn would_record(inputs: &[&Tensor]) -> bool {
    ACTIVE.with(|a| {
        let a = a.borrow();
        let taped = a.tapes.iter().any(|tape| {
            let st = tape.state.lock();
            !st.paused && inputs.iter().any(|t| st.tracked.contains(&t.id()))
        });
        let ids: SmallVec<[TensorId; 4]> = inputs.iter().map(|t| t.id()).collect();
        taped || a.accumulators.iter().any(|(_, acc)| acc.has_tangent(&ids))
    })
}

/// Records an op on every active tape that tracks one of its inputs, then lets every active
/// forward accumulator that holds a tangent of one of them compute its outputs' tangents.
/// `make_backward` runs only when a tape records or an accumulator needs it, so ops pay for
/// saving tensors only then; with neither active the cost is one thread-local read.
pub fn record<F>(
    op: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
{
    record_flagged(op, inputs, outputs, make_backward, false);
}

/// [`record`] for an op whose backward closure also serves output gradients with leading batch
/// axes ([`batch_axes`]), returning input gradients with the same leading axes. That holds for
/// formulas made of broadcasting element-wise ops, matrix products and `ops::unbroadcast`, and
/// for shape work done through `ops::with_batch_axes_of`; an axis counted from the front or a
/// fixed target shape breaks it. Vectorized Jacobians run one batched sweep when every entry
/// they visit was recorded this way, and one sweep per row otherwise.
pub fn record_vectorizable<F>(
    op: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
{
    record_flagged(op, inputs, outputs, make_backward, true);
}

fn record_flagged<F>(
    op: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> F,
    vectorizable: bool,
) where
    F: Fn(&[Tensor], &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static,
{
    // Integer and bool results carry no gradient; with nothing active there is no one to tell.
    if outputs.iter().all(|t| !t.dtype().is_differentiable()) || idle() {
        return;
    }
    let ids = inputs.iter().map(|t| t.id()).collect();
    let make = move || (Box::new(make_backward()) as Box<BackwardFn>, None);
    record_ids(op, ids, outputs, make, Scope::All, vectorizable);
}

/// Whether neither a tape nor an accumulator is active on this thread (the common case).
pub(super) fn idle() -> bool {
    ACTIVE.with(|a| {
        let a = a.borrow();
        a.tapes.is_empty() && a.accumulators.is_empty()
    })
}

/// Which of the active tapes and accumulators [`record_ids`] serves.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    All,
    /// One tape (by position), no accumulator.
    Tape(usize),
    Accumulators,
}

/// One op's entry, built on first need: a tape records it or an accumulator uses it.
struct Pending<'a, M> {
    op: &'static str,
    vectorizable: bool,
    inputs: SmallVec<[TensorId; 2]>,
    outputs: &'a [&'a Tensor],
    make: Option<M>,
    entry: Option<Arc<Entry>>,
}

impl Entry {
    /// Whether the backward calls into the host (a `custom_gradient`'s Python function).
    pub(super) fn calls_host(&self) -> bool {
        self.host.is_some()
    }
}

impl<M: FnOnce() -> (Box<BackwardFn>, Option<HostObject>)> Pending<'_, M> {
    fn get(&mut self) -> Arc<Entry> {
        let Pending {
            op,
            vectorizable,
            inputs,
            outputs,
            make,
            entry,
        } = self;
        entry
            .get_or_insert_with(|| {
                let (backward, host) = (make.take().expect("built once"))();
                Arc::new(Entry {
                    op,
                    inputs: std::mem::take(inputs),
                    outputs: outputs
                        .iter()
                        .map(|t| (t.id(), Shape::from(t.shape()), t.dtype()))
                        .collect(),
                    backward,
                    vectorizable: *vectorizable,
                    host,
                })
            })
            .clone()
    }

    fn inputs(&self) -> &[TensorId] {
        self.entry.as_ref().map_or(&self.inputs, |e| &e.inputs)
    }
}

fn record_ids(
    op: &'static str,
    inputs: SmallVec<[TensorId; 2]>,
    outputs: &[&Tensor],
    make_backward: impl FnOnce() -> (Box<BackwardFn>, Option<HostObject>),
    scope: Scope,
    vectorizable: bool,
) {
    let mut pending = Pending {
        op,
        vectorizable,
        inputs,
        outputs,
        make: Some(make_backward),
        entry: None,
    };
    let accumulators = ACTIVE.with(|a| {
        let a = a.borrow();
        for (i, tape) in a.tapes.iter().enumerate() {
            if !matches!(scope, Scope::All) && scope != Scope::Tape(i) {
                continue;
            }
            let mut st = tape.state.lock();
            if st.paused || !pending.inputs().iter().any(|i| st.tracked.contains(i)) {
                continue;
            }
            st.tracked.extend(outputs.iter().map(|t| t.id()));
            st.entries.push(pending.get());
        }
        // Copied out: computing tangents runs ops, which use the stack.
        let wanted = matches!(scope, Scope::All | Scope::Accumulators);
        (wanted && !a.accumulators.is_empty()).then(|| a.accumulators.clone())
    });
    for (seq, acc) in accumulators.into_iter().flatten() {
        if acc.has_tangent(pending.inputs()) {
            let entry = pending.get();
            hidden_from(seq, || acc.push_tangents(&entry, outputs));
        }
    }
}

/// Runs `f` with the tapes and accumulators entered at or after `seq` taken off the stack, as
/// TensorFlow hides an accumulator's own jvp computation from itself and from what is nested
/// inside it (what was entered before it still sees that computation: a tape outside an
/// accumulator differentiates its jvps).
fn hidden_from<T>(seq: u64, f: impl FnOnce() -> T) -> T {
    let (tapes, seqs, accs) = ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let cut = a.tape_seqs.partition_point(|&s| s < seq);
        let acc_cut = a.accumulators.partition_point(|(s, _)| *s < seq);
        (
            a.tapes.split_off(cut),
            a.tape_seqs.split_off(cut),
            a.accumulators.split_off(acc_cut),
        )
    });
    let out = f();
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        a.tapes.extend(tapes);
        a.tape_seqs.extend(seqs);
        a.accumulators.extend(accs);
    });
    out
}

/// Makes a forward accumulator active on this thread (entering its `with` block).
pub fn push_accumulator(acc: Arc<dyn Jvp>) {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let seq = a.next_seq;
        a.next_seq += 1;
        a.accumulators.push((seq, acc));
    });
}

/// Removes an accumulator from this thread's stack; false if it was not there.
pub fn pop_accumulator(acc: &Arc<dyn Jvp>) -> bool {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        match a
            .accumulators
            .iter()
            .rposition(|(_, x)| Arc::ptr_eq(x, acc))
        {
            Some(i) => {
                a.accumulators.remove(i);
                true
            }
            None => false,
        }
    })
}

/// Whether a forward accumulator is active on this thread.
pub fn any_accumulating() -> bool {
    ACTIVE.with(|a| !a.borrow().accumulators.is_empty())
}

/// Records the read of a variable: active tapes that watch accessed variables start watching a
/// trainable one, tapes that watch it record `out` as its identity, and accumulators give `out`
/// the variable's tangent.
pub(crate) fn note_variable_read(var: &Variable, out: &Tensor) {
    VARIABLE_WATCHERS.with(|w| {
        for seen in w.borrow_mut().iter_mut() {
            if !seen.contains(var) {
                seen.push(var.clone());
            }
        }
    });
    if idle() {
        return;
    }
    with_active_tapes(|tapes| {
        for tape in tapes {
            if tape.watch_accessed_variables && var.trainable() && !tape.state.lock().paused {
                tape.watch_variable(var);
            }
        }
    });
    let make = || {
        let identity = |g: &[Tensor], _: &[bool]| Ok(vec![Some(g[0].clone())]);
        (Box::new(identity) as Box<BackwardFn>, None)
    };
    let ids = SmallVec::from_slice(&[var.id()]);
    // The identity passes batched gradients through unchanged.
    record_ids("ReadVariableOp", ids, &[out], make, Scope::All, true);
}

/// Records a user-defined derivative (`custom_gradient`) for `outputs` as a function of `inputs`.
///
/// `make` is called once per recording tape (and once more for the accumulators), so that each
/// tape's entry holds its own host object: a garbage collector walking from one tape then
/// counts each reference exactly once (a shared one would be counted by every tape holding it).
pub fn record_custom(
    op: &'static str,
    inputs: &[TensorId],
    outputs: &[&Tensor],
    mut make: impl FnMut() -> (Box<BackwardFn>, HostObject),
) {
    let tapes = ACTIVE.with(|a| a.borrow().tapes.len());
    let scopes = (0..tapes).map(Scope::Tape).chain([Scope::Accumulators]);
    for scope in scopes {
        let ids = SmallVec::from_slice(inputs);
        let make = || {
            let (backward, host) = make();
            (backward, Some(host))
        };
        // A user's derivative is Python code that sees one gradient of the output's shape.
        record_ids(op, ids, outputs, make, scope, false);
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
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            let seq = a.next_seq;
            a.next_seq += 1;
            a.tapes.push(self.clone());
            a.tape_seqs.push(seq);
        });
    }

    /// Removes this tape from the current thread's active stack; false if it was not there.
    pub fn pop(self: &Arc<Tape>) -> bool {
        ACTIVE.with(|a| {
            let mut a = a.borrow_mut();
            match a.tapes.iter().rposition(|t| Arc::ptr_eq(t, self)) {
                Some(i) => {
                    a.tapes.remove(i);
                    a.tape_seqs.remove(i);
                    true
                }
                None => false,
            }
        })
    }

    pub fn is_active(self: &Arc<Tape>) -> bool {
        ACTIVE.with(|a| a.borrow().tapes.iter().any(|t| Arc::ptr_eq(t, self)))
    }

    pub fn set_paused(&self, paused: bool) -> bool {
        std::mem::replace(&mut self.state.lock().paused, paused)
    }

    /// Watches a tensor; only floating tensors can carry gradients (returns false otherwise).
    pub fn watch_tensor(&self, t: &Tensor) -> bool {
        if !t.dtype().is_differentiable() {
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
}
