//! Tracing: the kernels a function runs, recorded once and replayed from Rust (`ft.function`).
//!
//! Design choice (hard to undo): a trace records **kernel calls**, not Python and not tape
//! entries. While a trace is active on a thread, every place that makes a tensor with a kernel
//! calls [`node`] with a replay closure (the same kernel call, its attributes captured, its
//! tensor inputs given as slots); variable reads and writes, optimizer steps and other effects
//! call [`effect`]; tensors made from host values (Python numbers and arrays) are
//! [`constant`]s. Replaying runs that list of kernel calls in order: no Python, no tape
//! bookkeeping, dead results removed, each intermediate freed after its last use. The backward
//! pass of a tape inside the function is kernel calls too, so it is recorded and replayed like
//! the forward pass.
//!
//! Soundness rests on one rule: a tensor an op receives during a trace must be known to the
//! trace (an input of the function, a recorded result, a constant, or a tensor that existed
//! before the trace began, captured as a constant as TensorFlow captures eager tensors). A
//! tensor made after the trace began by a path that records nothing is unknown, and the trace
//! is then refused ([`Recording::invalid`]), so the caller runs the function eagerly instead of
//! replaying something wrong. Reading a traced value into the host (`.numpy()`, `bool(t)`,
//! `float(t)`) also refuses the trace: the host decided something from a value that a replay
//! would not recompute.
//!
//! Shapes are part of a trace: the caller keys traces by the shapes and dtypes of the inputs,
//! and a replayed kernel whose result shape differs from the traced one is an error (it can
//! only mean a value-dependent shape slipped through), never a silent difference.
//!
//! Branches on tensor values (a Python `if` or `while` on a tensor, `tf.cond`, `tf.while_loop`)
//! are handled with **guards**, as tracing JITs do, rather than by recording both branches:
//! reading a small integer or bool tensor into the host records a [`guard`] holding the value
//! seen. A replay checks each guard when it reaches it; on another value it stops there
//! ([`Replay::Diverged`]) and the caller replays or records the trace of that other path, so
//! each trace is only ever replayed along the path it recorded. A replay stopped by a guard
//! must leave no trace of itself (random draws before the guard aside: the generator has moved
//! on, as if those numbers had been drawn and not used): while a guard may still stop it, a
//! replay journals its variable writes (optimizer steps included) to undo them
//! ([`crate::variable::Journal`]), and it holds back host callbacks that only write output
//! (`tf.print`) until it has passed every guard. Floating-point values are not guarded: a
//! branch on one would rarely take the same path twice, so reading one still refuses the trace.

use std::cell::RefCell;
use std::sync::Arc;

use ferrotape_core::{DType, Error, Result, Shape};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::tensor::{next_id, Tensor, TensorId};

mod fusion;
mod sizes;
pub use fusion::Elementwise;
pub use sizes::SizeModel;

/// A recorded kernel call: the tensors of its input slots in, its results out.
pub type ReplayFn = dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;

/// A recorded kernel call that also reads the shapes of other values (see
/// [`node1_shaped_like`]): its input slots' tensors and those shapes in, its results out.
pub type ShapedReplayFn = dyn Fn(&[Tensor], &[&[usize]]) -> Result<Vec<Tensor>> + Send + Sync;

/// A recorded effect (a variable write, an optimizer step): its input slots' tensors in.
pub type EffectFn = dyn Fn(&[Tensor]) -> Result<()> + Send + Sync;

enum Work {
    Kernel(Box<ReplayFn>),
    /// A kernel call reading the shapes of the values in these slots (not the values: a
    /// replay need not keep them alive for it, see [`node1_shaped_like`]).
    ShapedKernel(Box<ShapedReplayFn>, SmallVec<[usize; 1]>),
    /// An element-wise kernel, which a plan may fuse with its neighbours (see `fusion`).
    Elementwise(Elementwise),
    /// A chain of element-wise kernels fused by the plan.
    Fused(fusion::Chain),
    Effect(Box<EffectFn>),
    /// An effect that calls back into the host (see [`host_effect`]); `output_only` when all
    /// it does is write output (`tf.print`), which a replay with guards holds back.
    HostEffect {
        effect: Box<EffectFn>,
        output_only: bool,
    },
    /// A value the host branched on while tracing (see [`guard`]): the guard's ordinal among
    /// the trace's guards, the value seen, and where the host read it (for messages).
    Guard {
        ordinal: usize,
        expected: Vec<i64>,
        place: String,
    },
    /// A kernel call whose attributes were read from tensor values while tracing: a replay
    /// would reuse them stale, so a trace that still needs it after its callers had their
    /// say (see [`opaque`]) is refused.
    Opaque,
}

impl Work {
    /// Whether the node changes state outside its results (kept even if nothing reads it).
    fn is_effect(&self) -> bool {
        matches!(self, Work::Effect(_) | Work::HostEffect { .. })
    }

    /// The slots whose shapes (not values) the node reads.
    fn shapes_read(&self) -> &[usize] {
        match self {
            Work::ShapedKernel(_, slots) => slots,
            _ => &[],
        }
    }
}

struct Node {
    name: &'static str,
    work: Work,
    /// Whether the kernel computes everything from its inputs' shapes at replay, so that it
    /// may replay on inputs of other sizes (see `sizes`).
    follows: bool,
    inputs: SmallVec<[usize; 2]>,
    /// Result slots with the shapes and dtypes seen while tracing.
    outputs: SmallVec<[(usize, Shape, DType); 1]>,
}

/// The trace being recorded on this thread.
pub struct Recording {
    /// Ids below this existed before the trace began: captured as constants when used.
    first_id: TensorId,
    slots: FxHashMap<TensorId, usize>,
    constants: Vec<(usize, Tensor)>,
    inputs: Vec<usize>,
    /// The shapes and dtypes of the function's tensor arguments, in the order of `inputs`.
    input_kinds: Vec<(Shape, DType)>,
    nodes: Vec<Node>,
    slot_count: usize,
    /// Whether some effect calls back into the host (see [`host_effect`]).
    calls_host: bool,
    /// The number of guards recorded.
    guards: usize,
    /// The number of variables created while recording (see [`variable_created`]).
    variables_created: usize,
    /// The slots whose shape the host read (see [`shape_read`]): each with its shape and the
    /// axes read.
    shape_reads: Vec<ShapeRead>,
    /// The slots of the constants made while recording (see [`constant`]).
    made_constants: Vec<usize>,
    /// For input slots, the axes whose sizes the host does not see (see [`hide_sizes`]).
    hidden: FxHashMap<usize, SmallVec<[usize; 2]>>,
    /// The result slots of [`opaque`] kernel calls.
    opaque_slots: rustc_hash::FxHashSet<usize>,
    /// Why this trace cannot be replayed (the first reason found).
    pub invalid: Option<String>,
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
    /// Recordings set aside by [`pause`], innermost last.
    static PAUSED: RefCell<Vec<Option<Recording>>> = const { RefCell::new(Vec::new()) };
}

/// Sets the trace being recorded on this thread (if any) aside until [`resume`]: the host
/// computes something the trace must not record (its replays redo it through a host effect).
pub fn pause() {
    let rec = RECORDING.with(|r| r.borrow_mut().take());
    PAUSED.with(|p| p.borrow_mut().push(rec));
}

/// Puts back the recording the last [`pause`] set aside. Returns false when none was paused.
pub fn resume() -> bool {
    match PAUSED.with(|p| p.borrow_mut().pop()) {
        Some(rec) => {
            RECORDING.with(|r| *r.borrow_mut() = rec);
            true
        }
        None => false,
    }
}

/// Whether a trace is being recorded on this thread (one thread-local read).
pub fn is_tracing() -> bool {
    RECORDING.with(|r| r.borrow().is_some())
}

impl Recording {
    fn new_slot(&mut self) -> usize {
        self.slot_count += 1;
        self.slot_count - 1
    }

    /// The slot of an input tensor: known, or captured from before the trace, or unknown
    /// (which refuses the trace).
    fn slot_of(&mut self, t: &Tensor, user: &'static str) -> usize {
        if let Some(&s) = self.slots.get(&t.id()) {
            return s;
        }
        let s = self.new_slot();
        self.slots.insert(t.id(), s);
        self.constants.push((s, t.clone()));
        if t.id() >= self.first_id && self.invalid.is_none() {
            self.invalid = Some(format!(
                "{user} received a tensor made by an operation that cannot be traced yet"
            ));
        }
        s
    }

    fn push(&mut self, name: &'static str, work: Work, inputs: &[&Tensor], outputs: &[&Tensor]) {
        let inputs = inputs.iter().map(|t| self.slot_of(t, name)).collect();
        let outputs = outputs
            .iter()
            .map(|t| {
                let s = self.new_slot();
                self.slots.insert(t.id(), s);
                (s, Shape::from(t.shape()), t.dtype())
            })
            .collect();
        let follows = match &work {
            Work::Elementwise(_) | Work::Fused(_) => true,
            Work::Kernel(_) | Work::ShapedKernel(..) => FOLLOWS_INPUT_SHAPES.contains(&name),
            _ => false,
        };
        self.nodes.push(Node {
            name,
            work,
            follows,
            inputs,
            outputs,
        });
    }
}

/// The kernels whose replay computes every shape and count from its inputs' shapes (no
/// attribute derived from the traced sizes), so that a trace may replay them on inputs of
/// other sizes (see `sizes`). Every recording site of each name must keep to that; a kernel
/// not listed stops a trace from serving other sizes only if it receives a value whose shape
/// moves with them.
const FOLLOWS_INPUT_SHAPES: &[&str] = &[
    "Sum",
    "Prod",
    "Max",
    "Min",
    "Any",
    "All",
    "ArgMax",
    "ArgMin",
    "CountOf",
    "ShapeOf",
    "SizeOf",
    "ZerosLike",
    "OnesLike",
    "FillLike",
    "ReshapeLike",
    "BroadcastToLike",
    "ReshapeRequest",
    "StridedSlice",
    "StridedSliceGradLike",
    "Relu6",
    "ReluGrad",
    "Softmax",
    "LogSoftmax",
    "Compare",
    "Cast",
    "BatchMatMulV2",
    "Conv2D",
    "Conv2DBackpropFilter",
    "MaxPool",
    "MaxPoolGrad",
    "MaxPoolGradGrad",
    "AvgPool",
    "AvgPoolGrad",
    "Conv2DBackpropInput",
    "Transpose",
    "Identity",
    "StopGradient",
    "SelectV2",
    "Logical",
    "LogicalNot",
    "OneHot",
    "ConcatV2",
    "FusedBatchNormV3",
    "FusedBatchNormGradV3",
    "DropoutMask",
    "RandomShuffle",
];

thread_local! {
    /// Whether this thread is replaying a trace to probe its sizes (see `sizes`).
    static PROBING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the replay running on this thread is a probe of a trace's sizes (see `sizes`): a
/// random draw then gives zeros of its shape instead, so that probing draws nothing.
pub fn probing() -> bool {
    PROBING.with(std::cell::Cell::get)
}

/// Records a kernel call while tracing: `outputs` were computed from `inputs`, and
/// `make_replay()` gives the closure that recomputes them from new input tensors. Costs one
/// thread-local read when no trace is active (`make_replay` is not called).
pub fn node<F>(
    name: &'static str,
    inputs: &[&Tensor],
    outputs: &[&Tensor],
    make_replay: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.push(name, Work::Kernel(Box::new(make_replay())), inputs, outputs);
        }
    });
}

/// [`node`] for the common one-result kernel.
pub fn node1<F>(
    name: &'static str,
    inputs: &[&Tensor],
    output: &Tensor,
    make_replay: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
{
    node(name, inputs, &[output], || {
        let f = make_replay();
        move |x: &[Tensor]| Ok(vec![f(x)?])
    });
}

/// Records an element-wise kernel call while tracing (`output` = `op` of `inputs`): a plan
/// may fuse it with the element-wise calls around it.
pub fn elementwise(op: Elementwise, inputs: &[&Tensor], output: &Tensor) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.push(op.name(), Work::Elementwise(op), inputs, &[output]);
        }
    });
}

/// Records a kernel call that cannot be replayed as it is (host attributes read from tensor
/// values, such as gather's positions). A caller that can recompute it from tensors records
/// its own [`node`] for the same result afterwards, which replaces this one (the later record
/// of a tensor wins); if none does and the result is needed, the trace is refused.
pub fn opaque(name: &'static str, inputs: &[&Tensor], outputs: &[&Tensor]) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.push(name, Work::Opaque, inputs, outputs);
            let slots: SmallVec<[usize; 2]> = outputs.iter().map(|t| rec.slots[&t.id()]).collect();
            rec.opaque_slots.extend(slots);
        }
    });
}

/// Records an effect while tracing (kept by replays even though it makes no tensor).
pub fn effect<F>(name: &'static str, inputs: &[&Tensor], make_effect: impl FnOnce() -> F)
where
    F: Fn(&[Tensor]) -> Result<()> + Send + Sync + 'static,
{
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.push(name, Work::Effect(Box::new(make_effect())), inputs, &[]);
        }
    });
}

/// [`effect`] for an effect that calls back into the host language (`tf.print`'s Python
/// callback, a refill of a variable from host values). A replay holding one runs on the
/// calling thread rather than on the compute pool: the callback needs the host's lock
/// (Python's GIL), and a host thread holding that lock may itself be waiting for the pool.
/// `output_only` says the callback only writes output (`tf.print`): a replay that may still
/// stop at a guard holds it back until it has passed them all, whereas other callbacks run in
/// order (their variable writes are undone with the replay's, see the module docs).
pub fn host_effect<F>(
    name: &'static str,
    inputs: &[&Tensor],
    output_only: bool,
    make_effect: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor]) -> Result<()> + Send + Sync + 'static,
{
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.calls_host = true;
            let work = Work::HostEffect {
                effect: Box::new(make_effect()),
                output_only,
            };
            rec.push(name, work, inputs, &[]);
        }
    });
}

/// The most elements a guarded value may have: a branch decides on a scalar or a few values,
/// and comparing more on every replay would cost more than it saves.
pub const GUARD_MAX_ELEMENTS: usize = 64;

/// The values a guard compares, or `None` for a tensor that cannot be guarded (floating-point,
/// complex, or more than [`GUARD_MAX_ELEMENTS`] elements).
fn guard_values(t: &Tensor) -> Option<Vec<i64>> {
    let dtype = t.dtype();
    if !(dtype.is_int() || dtype == DType::Bool) || t.len() > GUARD_MAX_ELEMENTS {
        return None;
    }
    let values = ferrotape_core::kernels::cast(t.value(), DType::I64).ok()?;
    Some(values.to_vec::<i64>())
}

/// While tracing, records that the host read `t`'s value (at `place`, for messages) to decide
/// something: replays are valid only where `t` has the same value (see the module docs).
/// Returns false, recording nothing, when `t` cannot be guarded (see [`GUARD_MAX_ELEMENTS`]);
/// the caller then refuses the trace.
pub fn guard(t: &Tensor, place: impl FnOnce() -> String) -> bool {
    let Some(expected) = guard_values(t) else {
        return false;
    };
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            let ordinal = rec.guards;
            rec.guards += 1;
            let work = Work::Guard {
                ordinal,
                expected,
                place: place(),
            };
            rec.push("Guard", work, &[t], &[]);
        }
    });
    true
}

/// Hides the sizes of some axes of the function's tensor arguments from the host while this
/// trace records (`axes[i]` for input `i`): [`host_shape`] gives `None` for them, as
/// TensorFlow's trace of an `input_signature` with `None` shows `None`, so the host cannot
/// compute with them and the trace may serve every size of them (see `sizes`).
pub fn hide_sizes(axes: &[Vec<usize>]) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            for (&slot, axes) in rec.inputs.iter().zip(axes) {
                if !axes.is_empty() {
                    rec.hidden.insert(slot, axes.iter().copied().collect());
                }
            }
        }
    });
}

/// The shape of `t` as the host sees it while a trace records: `None` where [`hide_sizes`]
/// hid an axis of an argument, the sizes it does see noted as read (see [`shape_read`]).
/// Outside a trace, every size.
pub fn host_shape(t: &Tensor, place: impl FnOnce() -> String) -> SmallVec<[Option<usize>; 4]> {
    let hidden = RECORDING.with(|r| {
        let r = r.borrow();
        let rec = r.as_ref()?;
        let slot = rec.slots.get(&t.id())?;
        Some(rec.hidden.get(slot).cloned().unwrap_or_default())
    });
    let Some(hidden) = hidden else {
        return t.shape().iter().map(|&d| Some(d)).collect();
    };
    let seen: SmallVec<[usize; 4]> = (0..t.rank()).filter(|a| !hidden.contains(a)).collect();
    shape_read_axes(t, &seen, place);
    t.shape()
        .iter()
        .enumerate()
        .map(|(a, &d)| (!hidden.contains(&a)).then_some(d))
        .collect()
}

/// A host read of a traced value's shape: its slot, its shape then, the axes read, and where
/// the host read it (` at FILE:LINE`, or empty).
type ShapeRead = (usize, Shape, SmallVec<[usize; 4]>, String);

/// While tracing, notes that the host read `t`'s shape (Python's `t.shape`, at `place`): a
/// trace whose replays give `t` another shape cannot serve them, as the host may have
/// computed with it.
pub fn shape_read(t: &Tensor, place: impl FnOnce() -> String) {
    shape_read_axes(t, &(0..t.rank()).collect::<SmallVec<[usize; 4]>>(), place);
}

/// [`shape_read`] of some axes of `t` only (library code reading the sizes it uses).
pub fn shape_read_axes(t: &Tensor, axes: &[usize], place: impl FnOnce() -> String) {
    let Some(slot) = RECORDING.with(|r| r.borrow().as_ref()?.slots.get(&t.id()).copied()) else {
        return;
    };
    // Where, found with no borrow held (it may call into the host).
    let place = place();
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            let axes = axes.iter().copied().collect();
            rec.shape_reads
                .push((slot, Shape::from(t.shape()), axes, place));
        }
    });
}

/// Re-records the kernel that made `output` (the later record of a tensor wins, see
/// [`opaque`]) as also reading, at replay, the shape of the value that had id `like`: for a
/// gradient shaped like a forward value it no longer holds. The replay passes that shape, not
/// the value, so it is not kept alive for it. When `like` is not a value of the trace (or is an
/// [`opaque`] result), `output` is a constant of the trace if `inputs` is empty, else the
/// earlier record stands; nothing is recorded when `output` is one of `inputs`.
pub fn node1_shaped_like<F>(
    name: &'static str,
    inputs: &[&Tensor],
    like: TensorId,
    output: &Tensor,
    make_replay: impl FnOnce() -> F,
) where
    F: Fn(&[Tensor], &[usize]) -> Result<Tensor> + Send + Sync + 'static,
{
    if inputs.iter().any(|t| t.id() == output.id()) {
        return;
    }
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            // An opaque result as the shape's source would keep it alive: keep the record
            // with the traced shape instead.
            let Some(&like_slot) = rec
                .slots
                .get(&like)
                .filter(|s| !rec.opaque_slots.contains(s))
            else {
                if inputs.is_empty() {
                    // Made from the shape of a value from outside the trace: a constant of it.
                    let s = rec.new_slot();
                    rec.slots.insert(output.id(), s);
                    rec.constants.push((s, output.clone()));
                }
                return;
            };
            let f = make_replay();
            let replay = move |x: &[Tensor], shapes: &[&[usize]]| Ok(vec![f(x, shapes[0])?]);
            let work = Work::ShapedKernel(Box::new(replay), smallvec::smallvec![like_slot]);
            rec.push(name, work, inputs, &[output]);
        }
    });
}

/// Marks a tensor made from host values as a constant of the trace.
pub fn constant(t: &Tensor) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            let s = rec.new_slot();
            rec.slots.insert(t.id(), s);
            rec.constants.push((s, t.clone()));
            rec.made_constants.push(s);
        }
    });
}

/// Refuses the trace being recorded, if any, for `reason` (the first reason is kept).
pub fn refuse(reason: impl FnOnce() -> String) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            if rec.invalid.is_none() {
                rec.invalid = Some(reason());
            }
        }
    });
}

/// Notes that the host created a variable; counted if a trace is being recorded (TensorFlow
/// lets a traced function create variables on its first trace only, a rule its host half
/// enforces).
pub fn variable_created() {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.variables_created += 1;
        }
    });
}

/// The number of variables created so far in the trace being recorded (0 if none is).
pub fn variables_created() -> usize {
    RECORDING.with(|r| r.borrow().as_ref().map_or(0, |rec| rec.variables_created))
}

/// Whether `t` is a value that differs from one replay of the trace being recorded to the
/// next: one of the function's tensor arguments, or a value computed from them inside it (so
/// reading it into the host makes the trace depend on a value a replay would not see). Only
/// captured constants are the same at every replay.
pub fn is_traced_value(t: &Tensor) -> bool {
    RECORDING.with(|r| {
        r.borrow().as_ref().is_some_and(|rec| {
            rec.slots
                .get(&t.id())
                .is_some_and(|s| !rec.constants.iter().any(|(c, _)| c == s))
        })
    })
}

/// Starts recording on this thread, with `inputs` as the function's tensor arguments.
pub fn begin(inputs: &[Tensor]) -> Result<()> {
    RECORDING.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_some() {
            return Err(Error::invalid(
                "function",
                "a trace is already being recorded on this thread",
            ));
        }
        let mut rec = Recording {
            first_id: next_id(),
            slots: FxHashMap::default(),
            constants: Vec::new(),
            inputs: Vec::new(),
            input_kinds: Vec::new(),
            nodes: Vec::new(),
            slot_count: 0,
            calls_host: false,
            guards: 0,
            variables_created: 0,
            shape_reads: Vec::new(),
            made_constants: Vec::new(),
            hidden: FxHashMap::default(),
            opaque_slots: Default::default(),
            invalid: None,
        };
        for t in inputs {
            let s = rec.new_slot();
            rec.slots.insert(t.id(), s);
            rec.inputs.push(s);
            rec.input_kinds.push((Shape::from(t.shape()), t.dtype()));
        }
        *r = Some(rec);
        Ok(())
    })
}

/// Stops recording and returns the graph producing `outputs`, or the reason it cannot be
/// replayed. Always stops the recording, even on error.
pub fn end(outputs: &[Tensor]) -> std::result::Result<Graph, String> {
    let rec = RECORDING.with(|r| r.borrow_mut().take());
    let Some(mut rec) = rec else {
        return Err("no trace was being recorded".into());
    };
    let outs: Vec<usize> = outputs
        .iter()
        .map(|t| rec.slot_of(t, "the result"))
        .collect();
    if let Some(reason) = rec.invalid.take() {
        return Err(reason);
    }
    Graph::plan(rec, outs)
}

/// Abandons the recording on this thread (the traced function raised).
pub fn abandon() {
    RECORDING.with(|r| r.borrow_mut().take());
}

/// What a replay of a [`Graph`] did.
#[derive(Debug)]
pub enum Replay {
    /// It ran to the end: the traced function's outputs.
    Finished(Vec<Tensor>),
    /// The guard with this ordinal saw `value` where the trace saw another: the replay stopped
    /// there, its variable writes undone and nothing called back (see the module docs).
    Diverged { guard: usize, value: Vec<i64> },
}

impl Replay {
    /// The outputs, or an error naming the guard for a replay that took another path.
    pub fn finished(self) -> Result<Vec<Tensor>> {
        match self {
            Replay::Finished(outputs) => Ok(outputs),
            Replay::Diverged { guard, value } => Err(Error::invalid(
                "function",
                format!(
                    "the trace took another branch: guard {guard} saw {value:?}, which this trace \
                     did not record"
                ),
            )),
        }
    }
}

/// A recorded function, ready to replay: its kernel calls and effects in order, with dead
/// kernel calls removed and each slot's last use known.
pub struct Graph {
    nodes: Vec<Node>,
    constants: Vec<(usize, Tensor)>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    slot_count: usize,
    /// For each node, the slots whose last use it is (freed after it runs).
    frees: Vec<SmallVec<[usize; 2]>>,
    /// Whether the replay moves to the compute pool (see `compute_thread`): some result is
    /// large enough for parallel kernels, and no effect calls back into the host.
    on_pool: bool,
    /// The number of elements of the largest value computed.
    largest: usize,
    /// The value each guard expects and where the host read it (` at FILE:LINE`, or empty),
    /// by ordinal.
    guards: Vec<(Vec<i64>, String)>,
    /// The index of the last guard when a variable write comes before it: until the replay
    /// has passed that guard, it journals its writes to undo them if a guard stops it.
    undo_until: Option<usize>,
    /// Each slot's shape in the trace, dead slots' included.
    traced_shapes: Vec<Option<Shape>>,
    /// The slots whose shapes the host read while tracing, with those shapes and the axes.
    shape_reads: Vec<ShapeRead>,
    /// The constants made while tracing (not captured from before), by slot.
    made_constants: Vec<usize>,
    /// How shapes follow the `None` dimensions, once [`Graph::generalize`] has found it.
    sizes: std::sync::OnceLock<SizeModel>,
}

/// How a replay checks its results' shapes.
enum Sizes<'a> {
    /// As traced.
    Traced,
    /// As the size model predicts at these sizes of its symbols.
    At(&'a SizeModel, &'a [usize]),
    /// Recorded, not checked: a probe (see `sizes`), which skips effects and host callbacks
    /// and stops where a kernel not following its inputs' shapes would see a moved one.
    Probe(&'a mut Vec<Option<Shape>>),
}

impl Sizes<'_> {
    fn is_probe(&self) -> bool {
        matches!(self, Sizes::Probe(_))
    }
}

impl Graph {
    fn plan(rec: Recording, outputs: Vec<usize>) -> std::result::Result<Graph, String> {
        // Every slot's traced shape, and whether its shape may follow the function's inputs
        // (it is computed from them and has an axis), before dead code goes.
        let mut traced_shapes: Vec<Option<Shape>> = vec![None; rec.slot_count];
        let mut from_inputs = vec![false; rec.slot_count];
        for (&s, (shape, _)) in rec.inputs.iter().zip(&rec.input_kinds) {
            traced_shapes[s] = Some(shape.clone());
            from_inputs[s] = true;
        }
        for (s, t) in &rec.constants {
            traced_shapes[*s] = Some(Shape::from(t.shape()));
        }
        for n in &rec.nodes {
            let moved = n
                .inputs
                .iter()
                .chain(n.work.shapes_read())
                .any(|&s| from_inputs[s]);
            for (s, shape, _) in &n.outputs {
                traced_shapes[*s] = Some(shape.clone());
                from_inputs[*s] = moved;
            }
        }
        let may_move =
            |s: usize| from_inputs[s] && traced_shapes[s].as_ref().is_some_and(|t| !t.is_empty());
        // Dead code: keep effects, and kernel calls whose results reach an output or a kept node.
        // A value whose shape alone is read stays only if that shape may move (a replay at
        // other sizes reads it from the value's slot); otherwise its traced shape serves.
        let mut live = vec![false; rec.slot_count];
        for &o in &outputs {
            live[o] = true;
        }
        let mut keep = vec![false; rec.nodes.len()];
        for (i, n) in rec.nodes.iter().enumerate().rev() {
            let needed = n.work.is_effect()
                || matches!(n.work, Work::Guard { .. })
                || n.outputs.iter().any(|(s, ..)| live[*s]);
            if needed {
                keep[i] = true;
                for &s in &n.inputs {
                    live[s] = true;
                }
                for &s in n.work.shapes_read() {
                    live[s] |= may_move(s);
                }
            }
        }
        if let Some(n) = rec
            .nodes
            .iter()
            .zip(&keep)
            .find(|(n, k)| **k && matches!(n.work, Work::Opaque))
        {
            return Err(format!(
                "{} reads positions from tensor values, which a replay would not read again",
                n.0.name
            ));
        }
        let nodes: Vec<Node> = rec
            .nodes
            .into_iter()
            .zip(keep)
            .filter_map(|(n, k)| k.then_some(n))
            .collect();
        let (guards, undo_until) = guards_and_undo_span(&nodes);
        let constants: Vec<(usize, Tensor)> = rec
            .constants
            .into_iter()
            .filter(|(s, _)| live[*s])
            .collect();
        let mut kinds: FxHashMap<usize, (Shape, DType)> = FxHashMap::default();
        for (&s, kind) in rec.inputs.iter().zip(&rec.input_kinds) {
            kinds.insert(s, kind.clone());
        }
        for (s, t) in &constants {
            kinds.insert(*s, (Shape::from(t.shape()), t.dtype()));
        }
        let nodes = if fusion_enabled() {
            fuse(nodes, &outputs, kinds)
        } else {
            nodes
        };
        // Last uses: a slot is freed after the last node reading it, unless it is an output.
        let mut last_use: FxHashMap<usize, usize> = FxHashMap::default();
        for (i, n) in nodes.iter().enumerate() {
            for &s in &n.inputs {
                last_use.insert(s, i);
            }
        }
        let largest = nodes
            .iter()
            .flat_map(|n| n.outputs.iter().map(|(_, shape, _)| shape.iter().product()))
            .max()
            .unwrap_or(0);
        let on_pool = !rec.calls_host && crate::compute_thread::worth_moving(largest);

        let mut frees = vec![SmallVec::new(); nodes.len()];
        for (s, i) in last_use {
            if !outputs.contains(&s) {
                frees[i].push(s);
            }
        }
        Ok(Graph {
            nodes,
            constants,
            inputs: rec.inputs,
            outputs,
            slot_count: rec.slot_count,
            frees,
            on_pool,
            largest,
            guards,
            undo_until,
            traced_shapes,
            shape_reads: rec.shape_reads,
            made_constants: rec
                .made_constants
                .into_iter()
                .filter(|&s| live[s])
                .collect(),
            sizes: std::sync::OnceLock::new(),
        })
    }

    /// The value each guard expects, in the order the trace reached them.
    pub fn guard_values(&self) -> Vec<&[i64]> {
        self.guards.iter().map(|(v, _)| &v[..]).collect()
    }

    /// Where the host read the value of each guard (` at FILE:LINE`, or empty), in order.
    pub fn guard_places(&self) -> Vec<&str> {
        self.guards.iter().map(|(_, p)| &p[..]).collect()
    }

    /// Whether a value computed is large enough for a kernel to split its work across the
    /// pool.
    pub fn runs_parallel_kernels(&self) -> bool {
        self.largest >= ferrotape_core::kernels::PARALLEL_THRESHOLD
    }

    /// The number of recorded kernel calls and effects kept after dead-code removal.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The names of the kept nodes, in order (for tests and `pretty_printed_concrete_signature`).
    pub fn node_names(&self) -> Vec<&'static str> {
        self.nodes.iter().map(|n| n.name).collect()
    }

    /// Runs the recorded calls on new inputs (same shapes and dtypes as traced), on a thread
    /// of the compute pool when that pays (see `compute_thread`). A replay records nothing, so
    /// it may leave the caller's thread. It stops at the first guard that sees another value
    /// than the trace did.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Replay> {
        if !self.on_pool {
            return self.run_here(inputs, Sizes::Traced);
        }
        crate::compute_thread::on_compute_thread(|| self.run_here(inputs, Sizes::Traced))
    }

    fn run_here(&self, inputs: &[Tensor], sizes: Sizes<'_>) -> Result<Replay> {
        // A first replay at other sizes keeps an undo journal throughout: a result that shows
        // the size model wrong there stops it, and the caller traces those sizes instead.
        let trial = matches!(&sizes, Sizes::At(model, at) if !model.has_run_at(at));
        let mut journal = crate::variable::Journal::open(
            trial || (self.undo_until.is_some() && !sizes.is_probe()),
        );
        let result = self.run_nodes(inputs, sizes, &mut journal, trial);
        if trial && result.is_err() {
            journal.undo();
        }
        result
    }

    fn run_nodes(
        &self,
        inputs: &[Tensor],
        mut sizes: Sizes<'_>,
        journal: &mut crate::variable::Journal,
        trial: bool,
    ) -> Result<Replay> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::invalid(
                "function",
                format!(
                    "the trace takes {} tensors, received {}",
                    self.inputs.len(),
                    inputs.len()
                ),
            ));
        }
        let mut values: Vec<Option<Tensor>> = vec![None; self.slot_count];
        for (s, t) in &self.constants {
            values[*s] = Some(t.clone());
        }
        for (&s, t) in self.inputs.iter().zip(inputs) {
            values[s] = Some(t.clone());
        }
        let mut args: Vec<Tensor> = Vec::new();
        // With guards, host callbacks wait until every guard has passed (see the module docs).
        let mut held_back: Vec<(&EffectFn, Vec<Tensor>)> = Vec::new();
        for (i, (node, frees)) in self.nodes.iter().zip(&self.frees).enumerate() {
            ferrotape_core::interrupt::check(node.name)?;
            args.clear();
            for &s in &node.inputs {
                args.push(
                    values[s]
                        .clone()
                        .expect("a slot is filled before it is read"),
                );
            }
            match &node.work {
                _ if matches!(sizes, Sizes::Probe(_)) && !self.may_probe(node, &args)? => {}
                Work::Kernel(f) => {
                    let results = f(&args)?;
                    for ((s, shape, dtype), t) in node.outputs.iter().zip(results) {
                        check_result(node.name, &t, *s, shape, *dtype, &mut sizes)?;
                        values[*s] = Some(t);
                    }
                }
                Work::ShapedKernel(f, slots) => {
                    let shapes = slots
                        .iter()
                        .map(|&s| self.shape_of_slot(s, &sizes))
                        .collect::<Result<SmallVec<[Shape; 1]>>>()?;
                    let shapes: SmallVec<[&[usize]; 1]> = shapes.iter().map(|s| &s[..]).collect();
                    let results = f(&args, &shapes)?;
                    for ((s, shape, dtype), t) in node.outputs.iter().zip(results) {
                        check_result(node.name, &t, *s, shape, *dtype, &mut sizes)?;
                        values[*s] = Some(t);
                    }
                }
                Work::Elementwise(_) | Work::Fused(_) => {
                    let (s, shape, dtype) = &node.outputs[0];
                    let t = match &node.work {
                        Work::Elementwise(op) => op.run(&args)?,
                        Work::Fused(chain) => match &sizes {
                            Sizes::Traced => chain.run(&args, shape, *dtype)?,
                            Sizes::At(model, at) => {
                                let shape = model.shape_at(*s, at).ok_or_else(|| {
                                    Error::invalid(node.name, "no size known for this result")
                                })?;
                                chain.run(&args, &shape, *dtype)?
                            }
                            Sizes::Probe(_) => chain.run(&args, &broadcast_of(&args)?, *dtype)?,
                        },
                        _ => unreachable!("matched above"),
                    };
                    check_result(node.name, &t, *s, shape, *dtype, &mut sizes)?;
                    values[*s] = Some(t);
                }
                Work::Effect(f) => f(&args)?,
                Work::HostEffect {
                    effect,
                    output_only: true,
                } if !self.guards.is_empty() => held_back.push((&**effect, args.clone())),
                Work::HostEffect { effect, .. } => effect(&args)?,
                Work::Guard {
                    ordinal, expected, ..
                } => {
                    let value = guard_values(&args[0]).expect("a guarded slot keeps its dtype");
                    if value != *expected && sizes.is_probe() {
                        return Err(Error::invalid(
                            "function",
                            "a branch on a tensor value goes another way at other sizes",
                        ));
                    }
                    if value != *expected {
                        journal.undo();
                        return Ok(Replay::Diverged {
                            guard: *ordinal,
                            value,
                        });
                    }
                    if Some(i) == self.undo_until && !trial {
                        journal.keep();
                    }
                }
                Work::Opaque => unreachable!("refused when planned"),
            }
            for &s in frees {
                values[s] = None;
            }
        }
        for (f, args) in held_back {
            f(&args)?;
        }
        if let Sizes::At(model, at) = sizes {
            if trial {
                model.ran_at(at.to_vec());
            }
        }
        Ok(Replay::Finished(
            self.outputs
                .iter()
                .map(|&s| values[s].clone().expect("an output slot is filled"))
                .collect(),
        ))
    }
}

impl Graph {
    /// The shape the value of `slot` has in this replay (see [`Work::ShapedKernel`]).
    fn shape_of_slot(&self, slot: usize, sizes: &Sizes<'_>) -> Result<Shape> {
        // A value no replay computes has a shape that never moves (see `plan`): its traced one.
        let shape = match sizes {
            Sizes::Traced => None,
            Sizes::At(model, at) => model.shape_at(slot, at),
            Sizes::Probe(shapes) => shapes[slot].clone(),
        };
        shape
            .or_else(|| self.traced_shapes[slot].clone())
            .ok_or_else(|| {
                Error::invalid("function", "a replay read the shape of an unknown value")
            })
    }

    /// In a probe, whether `node` runs (kernels) or is skipped (effects and host callbacks);
    /// an error when it would receive a value whose shape moved but does not follow its
    /// inputs' shapes (see `sizes`).
    fn may_probe(&self, node: &Node, args: &[Tensor]) -> Result<bool> {
        let moved = node
            .inputs
            .iter()
            .zip(args)
            .any(|(&s, t)| self.traced_shapes[s].as_deref() != Some(t.shape()));
        if moved && !node.follows {
            let what = match node.work {
                Work::Effect(_) => "an effect",
                Work::HostEffect { .. } => "a host callback",
                _ => "a kernel not known to follow its inputs' shapes",
            };
            return Err(Error::invalid(
                node.name,
                format!("{what} receives a value whose shape follows a None dimension"),
            ));
        }
        Ok(!node.work.is_effect())
    }

    /// Learns how this trace's shapes follow the sizes of its symbols, so that
    /// [`Graph::run_at`] can replay it at others (see `sizes`). `symbols` lists, for each
    /// symbol, the (input index, axis) pairs it sizes, all of one size in `inputs` (the traced
    /// call's tensors). Returns why it cannot when it cannot; the trace then serves its traced
    /// sizes only.
    pub fn generalize(
        &self,
        inputs: &[Tensor],
        symbols: Vec<Vec<(usize, usize)>>,
    ) -> std::result::Result<(), String> {
        if self.sizes.get().is_some() {
            return Ok(());
        }
        if !self.guards.is_empty() {
            return Err("it branches on tensor values".into());
        }
        let mut traced = Vec::with_capacity(symbols.len());
        for members in &symbols {
            let sizes: Vec<usize> = members
                .iter()
                .map(|&(i, axis)| inputs.get(i).and_then(|t| t.shape().get(axis).copied()))
                .collect::<Option<_>>()
                .ok_or("a None dimension names no axis of the arguments")?;
            match sizes.first() {
                Some(&d) if d >= sizes::MIN_SIZE && sizes.iter().all(|&x| x == d) => traced.push(d),
                Some(&d) if d < sizes::MIN_SIZE => {
                    return Err(format!("a None dimension was traced at size {d}"))
                }
                _ => return Err("a None dimension has no size of its own".into()),
            }
        }
        let probe_at = |sizes: &[usize]| -> std::result::Result<Vec<Option<Shape>>, String> {
            let mut probe_inputs = inputs.to_vec();
            for (members, &n) in symbols.iter().zip(sizes) {
                for &(i, axis) in members {
                    probe_inputs[i] =
                        sizes::resized(&probe_inputs[i], axis, n).map_err(|e| e.to_string())?;
                }
            }
            let mut shapes = vec![None; self.slot_count];
            for (&s, t) in self.inputs.iter().zip(&probe_inputs) {
                shapes[s] = Some(Shape::from(t.shape()));
            }
            for (s, t) in &self.constants {
                shapes[*s] = Some(Shape::from(t.shape()));
            }
            PROBING.with(|p| p.set(true));
            let result = self.run_here(&probe_inputs, Sizes::Probe(&mut shapes));
            PROBING.with(|p| p.set(false));
            result.map_err(|e| e.to_string())?;
            Ok(shapes)
        };
        let mut probes = Vec::with_capacity(symbols.len());
        for k in 0..symbols.len() {
            let mut at = traced.clone();
            at[k] += 1;
            probes.push(probe_at(&at)?);
        }
        let check_sizes: Vec<usize> = traced.iter().map(|&d| d + 3).collect();
        let check = probe_at(&check_sizes)?;
        let name_of = |slot: usize| {
            self.nodes
                .iter()
                .find(|n| n.outputs.iter().any(|(s, ..)| *s == slot))
                .map_or("an input", |n| n.name)
        };
        let dims = sizes::fit(
            &self.traced_shapes,
            &traced,
            &probes,
            &check,
            &check_sizes,
            name_of,
        )?;
        let model = SizeModel::new(symbols, traced, dims);
        for (slot, shape, axes, place) in &self.shape_reads {
            let moves = axes.iter().any(|&axis| match model.is_static(*slot, axis) {
                Some(fixed) => !fixed,
                // A value no replay computes: its shape may have moved if it has a dimension
                // of a symbol's traced size.
                None => model.traced_sizes().contains(&shape[axis]),
            });
            if moves {
                return Err(format!(
                    "Python read the shape {shape:?} of a value whose shape follows a None \
                     dimension{place}"
                ));
            }
        }
        // A constant made inside with a dimension of a symbol's size was most likely made
        // from a shape (zeros for a gradient that does not flow): a replay at other sizes would
        // reuse it as it is.
        for &slot in &self.made_constants {
            let shape = self.traced_shapes[slot].as_deref().unwrap_or(&[]);
            if let Some(d) = shape.iter().find(|d| model.traced_sizes().contains(d)) {
                return Err(format!(
                    "a constant made inside the function has shape {shape:?}, with the size {d} \
                     of a None dimension"
                ));
            }
        }
        let _ = self.sizes.set(model);
        Ok(())
    }

    /// Whether [`Graph::generalize`] has found how this trace's shapes follow its symbols.
    pub fn is_general(&self) -> bool {
        self.sizes.get().is_some()
    }

    /// Replays the trace at the sizes of its symbols in `inputs` (see [`Graph::generalize`]).
    /// `Ok(None)` when it cannot serve these inputs: not generalized, inputs of other shapes
    /// than its symbols allow, or (on the first replay at these sizes) a result of another
    /// shape than the size model predicts, in which case the replay undid its variable writes
    /// and the caller traces these sizes instead.
    pub fn run_at(&self, inputs: &[Tensor]) -> Result<Option<Replay>> {
        let Some(model) = self.sizes.get() else {
            return Ok(None);
        };
        if inputs.len() != self.inputs.len() {
            return Ok(None);
        }
        let Some(at) = model.sizes_of(&self.inputs, inputs) else {
            return Ok(None);
        };
        let trial = !model.has_run_at(&at);
        let run = || self.run_here(inputs, Sizes::At(model, &at));
        let result = if self.on_pool {
            crate::compute_thread::on_compute_thread(run)
        } else {
            run()
        };
        match result {
            Ok(replay) => Ok(Some(replay)),
            Err(_) if trial => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The shape every operand of a fused chain broadcasts to (a probe's chain shape).
fn broadcast_of(args: &[Tensor]) -> Result<Shape> {
    let mut shape = Shape::new();
    for t in args {
        shape = ferrotape_core::broadcast_shapes("FusedElementwise", &shape, t.shape())?;
    }
    Ok(shape)
}

/// Checks a replayed result against the shape and dtype the replay expects of `slot` (see
/// `Sizes`), or records it (a probe).
fn check_result(
    op: &'static str,
    t: &Tensor,
    slot: usize,
    traced: &Shape,
    dtype: DType,
    sizes: &mut Sizes<'_>,
) -> Result<()> {
    let predicted;
    let expected = match sizes {
        Sizes::Traced => traced,
        Sizes::At(model, at) => {
            predicted = model
                .shape_at(slot, at)
                .ok_or_else(|| Error::invalid(op, "no size known for this result"))?;
            &predicted
        }
        Sizes::Probe(shapes) => {
            shapes[slot] = Some(Shape::from(t.shape()));
            return Ok(());
        }
    };
    if t.shape() != &expected[..] || t.dtype() != dtype {
        return Err(shape_changed(op, t, expected, dtype));
    }
    Ok(())
}

/// The values the guards of `nodes` expect and where the host read them, by ordinal; and the
/// index of the last guard if a variable write comes before it (a replay keeps an undo journal
/// until it has passed that guard).
fn guards_and_undo_span(nodes: &[Node]) -> (Vec<(Vec<i64>, String)>, Option<usize>) {
    let mut guards = Vec::new();
    let mut writes_before = false;
    let mut undo_until = None;
    for (i, n) in nodes.iter().enumerate() {
        match &n.work {
            // A host callback other than output refills variables (see `host_effect`).
            Work::Effect(_)
            | Work::HostEffect {
                output_only: false, ..
            } => writes_before = true,
            Work::Guard {
                ordinal,
                expected,
                place,
            } => {
                debug_assert_eq!(*ordinal, guards.len(), "guards are never removed");
                guards.push((expected.clone(), place.clone()));
                if writes_before {
                    undo_until = Some(i);
                }
            }
            _ => {}
        }
    }
    (guards, undo_until)
}

/// The error of a replayed kernel whose result differs in shape or dtype from the traced one.
fn shape_changed(op: &'static str, t: &Tensor, shape: &Shape, dtype: DType) -> Error {
    Error::invalid(
        op,
        format!(
            "a replayed trace made a {} tensor of shape {:?} where the trace made {} of shape {:?}",
            t.dtype(),
            t.shape(),
            dtype,
            shape
        ),
    )
}

/// Whether plans fuse element-wise chains: `FERROTAPE_FUSION=0` turns it off (to compare).
fn fusion_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("FERROTAPE_FUSION").map_or(true, |v| v.trim() != "0"))
}

/// `nodes` with each fusible element-wise chain (see `fusion`) merged into its last node.
/// `kinds` holds the shape and dtype of every slot that no node makes (inputs, constants).
fn fuse(
    nodes: Vec<Node>,
    outputs: &[usize],
    mut kinds: FxHashMap<usize, (Shape, DType)>,
) -> Vec<Node> {
    let mut producer: FxHashMap<usize, usize> = FxHashMap::default();
    let mut users: FxHashMap<usize, SmallVec<[usize; 2]>> = FxHashMap::default();
    let mut effects_before = Vec::with_capacity(nodes.len() + 1);
    let mut effects = 0;
    for (i, n) in nodes.iter().enumerate() {
        effects_before.push(effects);
        effects += usize::from(n.work.is_effect());
        for &s in &n.inputs {
            users.entry(s).or_default().push(i);
        }
        for (s, shape, dtype) in &n.outputs {
            producer.insert(*s, i);
            kinds.insert(*s, (shape.clone(), *dtype));
        }
    }
    effects_before.push(effects);
    let element_wise = |n: &Node| matches!(n.work, Work::Elementwise(_) | Work::Fused(_));
    // Every operand of a chain of `shape`: a tensor of that shape or a single element.
    let operands_fit = |inputs: &[usize], shape: &Shape| {
        inputs.iter().all(|s| {
            kinds
                .get(s)
                .is_some_and(|(k, _)| k == shape || k.iter().product::<usize>() == 1)
        })
    };
    let mut nodes: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    for j in 0..nodes.len() {
        let Some(node) = nodes[j].as_ref() else {
            continue;
        };
        let Work::Elementwise(op) = node.work else {
            continue;
        };
        let (_, shape, dtype) = &node.outputs[0];
        if !fusion::fusible_dtype(*dtype) || shape.iter().product::<usize>() <= 1 {
            continue;
        }
        let fusible_input = node.inputs.iter().copied().find(|s| {
            let Some(&p) = producer.get(s) else {
                return false;
            };
            let Some(prev) = nodes[p].as_ref() else {
                return false;
            };
            element_wise(prev)
                && prev.outputs[0].1 == *shape
                && prev.outputs[0].2 == *dtype
                && !outputs.contains(s)
                && users[s].iter().all(|&u| u == j)
                && effects_before[j] == effects_before[p + 1]
                && operands_fit(&prev.inputs, shape)
                && operands_fit(&node.inputs, shape)
        });
        let Some(s) = fusible_input else {
            continue;
        };
        let p = producer[&s];
        let prev = nodes[p].take().expect("checked above");
        let node = nodes[j].take().expect("checked above");
        let mut chain = match prev.work {
            Work::Fused(chain) => chain,
            Work::Elementwise(prev_op) => fusion::Chain::single(prev_op),
            _ => unreachable!("checked above"),
        };
        let previous: Vec<bool> = node.inputs.iter().map(|&x| x == s).collect();
        chain.then(op, &previous, prev.inputs.len());
        let mut inputs = prev.inputs;
        inputs.extend(node.inputs.iter().copied().filter(|&x| x != s));
        for &x in &inputs {
            let list = users.entry(x).or_default();
            if !list.contains(&j) {
                list.push(j);
            }
        }
        producer.insert(node.outputs[0].0, j);
        nodes[j] = Some(Node {
            name: "FusedElementwise",
            work: Work::Fused(chain),
            follows: true,
            inputs,
            outputs: node.outputs,
        });
    }
    nodes.into_iter().flatten().collect()
}

/// Shares a graph between the host's handles (it is immutable once planned).
pub type SharedGraph = Arc<Graph>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops;
    use crate::Variable;
    use ferrotape_core::Array;

    fn vector(v: &[f32]) -> Tensor {
        Tensor::new(Array::from_vec(v.to_vec(), &[v.len()]).unwrap())
    }

    fn values(t: &Tensor) -> Vec<f32> {
        t.value().to_vec::<f32>()
    }

    fn matrix(rows: usize, cols: usize, seed: f32) -> Tensor {
        let v: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * seed).sin()).collect();
        Tensor::new(Array::from_vec(v, &[rows, cols]).unwrap())
    }

    /// A layer's mean over the batch added to `v` (an effect), and a sum over the batch.
    fn batch_step(x: &Tensor, w: &Tensor, v: &Variable) -> Tensor {
        let h = ops::relu(&ops::matmul(x, w, false, false).unwrap()).unwrap();
        let mean = ops::reduce_mean(&h, Some(&[0]), false).unwrap();
        let update = ops::add(&v.read(), &mean).unwrap();
        effect("AssignVariableOp", &[&update], || {
            let v = v.clone();
            move |t: &[Tensor]| v.assign(t[0].value())
        });
        v.assign(update.value()).unwrap();
        ops::reduce_sum(
            &ops::add(&h, &ops::ones_like(&h).unwrap()).unwrap(),
            None,
            false,
        )
        .unwrap()
    }

    #[test]
    fn a_generalized_trace_replays_at_other_batch_sizes_as_eagerly() {
        let zeros = || Array::zeros("test", DType::F32, &[2]).unwrap();
        let (traced_v, eager_v) = (
            Variable::new(zeros(), true, "v"),
            Variable::new(zeros(), true, "v"),
        );
        let (w, x) = (matrix(3, 2, 0.7), matrix(4, 3, 1.3));
        begin(std::slice::from_ref(&x)).unwrap();
        let loss = batch_step(&x, &w, &traced_v);
        let graph = end(&[loss]).unwrap();
        batch_step(&x, &w, &eager_v);
        graph
            .generalize(std::slice::from_ref(&x), vec![vec![(0, 0)]])
            .unwrap();
        assert!(graph.is_general());
        for n in [2, 7, 4, 9] {
            let x = matrix(n, 3, 0.1 * n as f32);
            let got = graph.run_at(std::slice::from_ref(&x)).unwrap().unwrap();
            let want = batch_step(&x, &w, &eager_v);
            assert_eq!(
                values(&got.finished().unwrap()[0]),
                values(&want),
                "n = {n}"
            );
            assert_eq!(values(&traced_v.read()), values(&eager_v.read()), "n = {n}");
        }
        // Sizes 0 and 1, and another feature count, are not served.
        for x in [matrix(1, 3, 1.0), matrix(0, 3, 1.0), matrix(4, 2, 1.0)] {
            assert!(graph.run_at(&[x]).unwrap().is_none());
        }
    }

    #[test]
    fn a_kernel_replaying_a_traced_size_keeps_the_trace_to_it() {
        let x = matrix(4, 3, 1.0);
        begin(std::slice::from_ref(&x)).unwrap();
        // A reshape to the traced element count (a caller's resolved shape, not a request).
        let y = ops::reduce_sum(&ops::reshape(&x, &[12]).unwrap(), None, false).unwrap();
        let graph = end(&[y]).unwrap();
        let reason = graph
            .generalize(std::slice::from_ref(&x), vec![vec![(0, 0)]])
            .unwrap_err();
        assert!(reason.contains("Reshape"), "{reason}");
        assert!(graph.run_at(&[matrix(5, 3, 1.0)]).unwrap().is_none());

        // A constant made inside from the batch size (a count a replay would reuse): refused
        // too, though every shape would follow.
        begin(std::slice::from_ref(&x)).unwrap();
        let count = ops::reduce_sum(&ops::ones(DType::F32, &[4]).unwrap(), None, false).unwrap();
        let graph = end(&[ops::exp(&x).unwrap(), count]).unwrap();
        let reason = graph
            .generalize(std::slice::from_ref(&x), vec![vec![(0, 0)]])
            .unwrap_err();
        assert!(reason.contains("constant"), "{reason}");

        // The host read the batch size.
        begin(std::slice::from_ref(&x)).unwrap();
        shape_read(&x, String::new);
        let y = ops::exp(&x).unwrap();
        let graph = end(&[y]).unwrap();
        let reason = graph
            .generalize(std::slice::from_ref(&x), vec![vec![(0, 0)]])
            .unwrap_err();
        assert!(reason.contains("read the shape"), "{reason}");
    }

    #[test]
    fn a_trace_replays_its_kernels_on_new_inputs_and_drops_dead_ones() {
        let x = vector(&[1.0, -2.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let _unused = ops::exp(&x).unwrap();
        let y = ops::mul(&ops::relu(&x).unwrap(), &x.scalar_like(3.0)).unwrap();
        let graph = end(std::slice::from_ref(&y)).unwrap();
        assert!(!is_tracing());
        // relu's result feeds only the multiply: one fused node.
        assert_eq!(graph.node_names(), ["FusedElementwise"]);
        let out = graph
            .run(&[vector(&[-1.0, 4.0])])
            .unwrap()
            .finished()
            .unwrap();
        assert_eq!(values(&out[0]), [0.0, 12.0]);
    }

    /// `(exp(x) * 0.5 - y) / (x * x + 1)`, then `sqrt` of its absolute value, as eager ops.
    fn chain(x: &Tensor, y: &Tensor) -> (Tensor, Tensor) {
        let half = x.scalar_like(0.5);
        let e = ops::sub(&ops::mul(&ops::exp(x).unwrap(), &half).unwrap(), y).unwrap();
        let d = ops::add(&ops::mul(x, x).unwrap(), &x.scalar_like(1.0)).unwrap();
        let q = ops::div(&e, &d).unwrap();
        (ops::sqrt(&ops::abs(&q).unwrap()).unwrap(), q)
    }

    fn kernels_scale(a: &Array, by: f32) -> Array {
        let s = Array::from_vec(vec![by], &[]).unwrap();
        ferrotape_core::kernels::binary(ferrotape_core::kernels::BinaryOp::Mul, a, &s).unwrap()
    }

    #[test]
    fn fused_chains_compute_the_bits_of_the_kernels_one_by_one() {
        // Over several blocks, with a ragged last one, and on a tensor of one block.
        for n in [100_003usize, 7] {
            let x: Vec<f32> = (0..n)
                .map(|i| ((i * 37) % 101) as f32 * 0.03 - 1.5)
                .collect();
            let y: Vec<f32> = (0..n)
                .map(|i| ((i * 13) % 89) as f32 * 0.02 - 0.9)
                .collect();
            let (x, y) = (vector(&x), vector(&y));
            begin(&[x.clone(), y.clone()]).unwrap();
            let (root, q) = chain(&x, &y);
            let graph = end(&[root, q]).unwrap();
            // q is returned, so its chain stops there; x * x + 1 feeds only the division.
            assert_eq!(
                graph.node_names(),
                ["FusedElementwise", "FusedElementwise", "FusedElementwise"],
                "{n}"
            );
            let (x2, y2) = (
                Tensor::new(kernels_scale(x.value(), 1.25)),
                Tensor::new(kernels_scale(y.value(), -0.5)),
            );
            let replayed = graph
                .run(&[x2.clone(), y2.clone()])
                .unwrap()
                .finished()
                .unwrap();
            let (root, q) = chain(&x2, &y2);
            let bits = |t: &Tensor| values(t).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&replayed[0]), bits(&root), "{n}");
            assert_eq!(bits(&replayed[1]), bits(&q), "{n}");
        }
    }

    #[test]
    fn chains_do_not_fuse_across_effects_broadcast_rows_or_other_users() {
        let v = Variable::new(Array::from_vec(vec![1.0f32; 6], &[6]).unwrap(), true, "v");
        let x = Tensor::new(Array::from_vec(vec![2.0f32; 6], &[2, 3]).unwrap());
        let row = vector(&[1.0, 2.0, 3.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        // exp's result feeds only the sum, whose other operand is a row broadcast over x:
        // neither one element nor x's shape.
        let plus_row = ops::add(&ops::exp(&x).unwrap(), &row).unwrap();
        let read = ops::exp(&v.read()).unwrap();
        effect("AssignVariableOp", &[&read], || {
            let v = v.clone();
            move |t: &[Tensor]| v.assign(t[0].value())
        });
        // The read's result is used after the write: not moved past it.
        let after = ops::mul(&read, &read).unwrap();
        let graph = end(&[plus_row, after]).unwrap();
        assert_eq!(
            graph.node_names(),
            [
                "Unary",
                "Binary",
                "ReadVariableOp",
                "Unary",
                "AssignVariableOp",
                "Binary"
            ]
        );
        let out = graph
            .run(std::slice::from_ref(&x))
            .unwrap()
            .finished()
            .unwrap();
        let e = 2f32.exp();
        assert_eq!(
            values(&out[0]),
            [e + 1.0, e + 2.0, e + 3.0, e + 1.0, e + 2.0, e + 3.0]
        );
        assert_eq!(values(&out[1])[0], 1f32.exp() * 1f32.exp());
    }

    #[test]
    fn variables_are_read_and_written_when_the_trace_runs() {
        let v = Variable::new(Array::from_vec(vec![1.0f32], &[1]).unwrap(), true, "v");
        begin(&[]).unwrap();
        let doubled = ops::add(&v.read(), &v.read()).unwrap();
        effect("AssignVariableOp", &[&doubled], || {
            let v = v.clone();
            move |t: &[Tensor]| v.assign(t[0].value())
        });
        v.assign(doubled.value()).unwrap();
        let graph = end(&[]).unwrap();
        assert_eq!(values(&v.read()), [2.0]);
        graph.run(&[]).unwrap().finished().unwrap();
        graph.run(&[]).unwrap().finished().unwrap();
        assert_eq!(values(&v.read()), [8.0]);
    }

    #[test]
    fn a_tensor_made_by_an_unrecorded_path_refuses_the_trace() {
        let x = vector(&[1.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let unknown = Tensor::new(x.value().clone()); // no node: cannot be made again
        let y = ops::add(&x, &unknown).unwrap();
        let reason = end(&[y]).err().unwrap();
        assert!(reason.contains("cannot be traced"), "{reason}");
    }

    #[test]
    fn tensors_from_before_the_trace_are_captured_as_constants() {
        let captured = vector(&[10.0]);
        let x = vector(&[1.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let y = ops::add(&x, &captured).unwrap();
        let graph = end(&[y]).unwrap();
        assert_eq!(
            values(&graph.run(&[vector(&[5.0])]).unwrap().finished().unwrap()[0]),
            [15.0]
        );
    }

    #[test]
    fn an_opaque_result_still_needed_refuses_and_a_later_node_replaces_it() {
        let params = vector(&[1.0, 2.0, 3.0]);
        let indices = Tensor::new(Array::from_vec(vec![2i32, 0], &[2]).unwrap());
        begin(&[params.clone(), indices.clone()]).unwrap();
        let y = ops::gather(&params, &indices, 0).unwrap(); // Take (opaque), then GatherV2
        let graph = end(&[y]).unwrap();
        let index = Tensor::new(Array::from_vec(vec![1i32, 1], &[2]).unwrap());
        assert_eq!(
            values(
                &graph
                    .run(&[params.clone(), index])
                    .unwrap()
                    .finished()
                    .unwrap()[0]
            ),
            [2.0, 2.0]
        );

        let x = vector(&[1.0, 2.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let taken = ops::take(&x, 0, Arc::new(vec![Some(1)]), 0.0).unwrap();
        let reason = end(&[taken]).err().unwrap();
        assert!(reason.contains("Take"), "{reason}");
    }

    #[test]
    fn a_pad_and_its_gradient_replay_with_their_constant_positions() {
        use crate::tape::{GradientTape, Source};
        use ferrotape_core::kernels::PadMode;
        let x = vector(&[1.0, 2.0]);
        let weights = vector(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let tape = GradientTape::new(false, true);
        tape.enter().unwrap();
        tape.tape().watch_tensor(&x);
        let padded = ops::pad(&x, &[(1, 2)], PadMode::Constant, 0.0).unwrap();
        let loss = ops::reduce_sum(&ops::mul(&padded, &weights).unwrap(), None, false).unwrap();
        tape.exit();
        tape.begin_differentiation("GradientTape.gradient").unwrap();
        let grad = tape
            .tape()
            .gradient(&[loss], &[Source::of_tensor(&x)], None)
            .unwrap()
            .remove(0)
            .unwrap();
        let graph = end(&[padded, grad]).unwrap();
        let out = graph
            .run(&[vector(&[5.0, 7.0])])
            .unwrap()
            .finished()
            .unwrap();
        assert_eq!(out[0].value().to_vec::<f32>(), [0.0, 5.0, 7.0, 0.0, 0.0]);
        assert_eq!(out[1].value().to_vec::<f32>(), [2.0, 3.0]);
    }

    #[test]
    fn a_replay_with_other_shapes_is_an_error_not_a_wrong_result() {
        let x = vector(&[1.0, 2.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let y = ops::exp(&x).unwrap();
        let graph = end(&[y]).unwrap();
        let err = graph.run(&[vector(&[1.0, 2.0, 3.0])]).unwrap_err();
        assert!(err.to_string().contains("replayed trace"), "{err}");
        assert!(graph.run(&[]).is_err());
    }

    /// `x * 2` if `sum(x) > 0` else `-x`, branching as the host would: by reading the
    /// comparison (recorded as a guard while tracing).
    fn branchy(x: &Tensor) -> Tensor {
        use ferrotape_core::kernels::CompareOp;
        let positive = ops::compare(
            CompareOp::Greater,
            &ops::reduce_sum(x, None, false).unwrap(),
            &x.scalar_like(0.0),
        )
        .unwrap();
        assert!(guard(&positive, || " at test.py:1".into()));
        if positive.value().scalar_f64() == Some(1.0) {
            ops::mul(x, &x.scalar_like(2.0)).unwrap()
        } else {
            ops::neg(x).unwrap()
        }
    }

    #[test]
    fn a_guard_lets_replays_on_its_path_finish_and_stops_the_others() {
        let x = vector(&[1.0, 2.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        let y = branchy(&x);
        let graph = end(&[y]).unwrap();
        assert_eq!(graph.guard_values(), [[1]]);
        assert_eq!(graph.guard_places(), [" at test.py:1"]);
        let out = graph
            .run(&[vector(&[3.0, -1.0])])
            .unwrap()
            .finished()
            .unwrap();
        assert_eq!(values(&out[0]), [6.0, -2.0]);
        match graph.run(&[vector(&[-3.0, 1.0])]).unwrap() {
            Replay::Diverged { guard, value } => assert_eq!((guard, value), (0, vec![0])),
            Replay::Finished(_) => panic!("the other branch was replayed"),
        }
        let err = graph
            .run(&[vector(&[-3.0, 1.0])])
            .unwrap()
            .finished()
            .unwrap_err();
        assert!(err.to_string().contains("another branch"), "{err}");
    }

    #[test]
    fn floating_point_and_large_values_are_not_guarded() {
        let x = vector(&[1.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        assert!(!guard(&ops::exp(&x).unwrap(), String::new));
        let many = Tensor::new(Array::from_vec(vec![1i32; GUARD_MAX_ELEMENTS + 1], &[65]).unwrap());
        assert!(!guard(&many, String::new));
        abandon();
    }

    #[test]
    fn writes_before_a_guard_are_undone_when_it_stops_the_replay() {
        let v = Variable::new(Array::from_vec(vec![1.0f32], &[1]).unwrap(), true, "v");
        let w = Variable::new(Array::from_vec(vec![5.0f32], &[1]).unwrap(), true, "w");
        let x = vector(&[1.0]);
        let add_to = |var: &Variable, t: &Tensor| {
            var.assign_update(t.value(), false).unwrap();
            effect("AssignAddVariableOp", &[t], || {
                let var = var.clone();
                move |t: &[Tensor]| var.assign_update(t[0].value(), false)
            });
        };
        begin(std::slice::from_ref(&x)).unwrap();
        add_to(&v, &x); // v: 2, then written again below: undone to its first value
        add_to(&w, &x); // w: 6
        add_to(&v, &x); // v: 3
        let y = branchy(&x);
        let graph = end(&[y]).unwrap();
        assert_eq!(
            (values(&v.read()), values(&w.read())),
            (vec![3.0], vec![6.0])
        );
        assert!(matches!(
            graph.run(&[vector(&[-2.0])]).unwrap(),
            Replay::Diverged { .. }
        ));
        assert_eq!(
            (values(&v.read()), values(&w.read())),
            (vec![3.0], vec![6.0])
        );
        let out = graph.run(&[vector(&[2.0])]).unwrap().finished().unwrap();
        assert_eq!(values(&out[0]), [4.0]);
        assert_eq!(
            (values(&v.read()), values(&w.read())),
            (vec![7.0], vec![8.0])
        );
    }

    #[test]
    fn host_callbacks_wait_for_the_guards() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let v = Variable::new(Array::from_vec(vec![1.0f32], &[1]).unwrap(), true, "v");
        let x = vector(&[1.0]);
        // A callback before the guard runs only once the replay has passed it; a write after
        // the guard is fine.
        let calls = Arc::new(AtomicUsize::new(0));
        begin(std::slice::from_ref(&x)).unwrap();
        host_effect("HostCallback", &[&x], true, || {
            let calls = calls.clone();
            move |_: &[Tensor]| {
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        });
        let y = branchy(&x);
        effect("AssignVariableOp", &[&y], || {
            let v = v.clone();
            move |t: &[Tensor]| v.assign(t[0].value())
        });
        let graph = end(&[]).unwrap();
        assert!(matches!(
            graph.run(&[vector(&[-5.0])]).unwrap(),
            Replay::Diverged { .. }
        ));
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(values(&v.read()), [1.0]);
        graph.run(&[vector(&[5.0])]).unwrap().finished().unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(values(&v.read()), [10.0]);
    }

    #[test]
    fn a_paused_trace_records_nothing_until_resumed() {
        let x = vector(&[1.0, 2.0]);
        begin(std::slice::from_ref(&x)).unwrap();
        pause();
        assert!(!is_tracing());
        let _hidden = ops::exp(&x).unwrap();
        assert!(resume());
        let y = ops::neg(&x).unwrap();
        let graph = end(&[y]).unwrap();
        assert_eq!(graph.node_names(), ["Unary"]);
        assert!(!resume());
    }
}
