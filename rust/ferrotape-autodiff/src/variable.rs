//! `Variable`: a named, mutable slot holding a value. Reading it inside an active tape yields a
//! fresh tensor recorded as an identity of the variable's id, so a gradient with respect to the
//! variable is the gradient at that id, whatever was assigned in between (TensorFlow's
//! `ReadVariableOp`). Assignment is copy-on-write: in place when no tensor shares the buffer.
//!
//! Mixed precision (Keras's autocast scope): while a mixed-precision layer runs, the front end
//! sets this thread's autocast dtype, and a read of a floating variable marked `autocast` comes
//! out cast to it. The cast is an ordinary op on the read, so the gradient flows back through it
//! to the variable in the variable's own (float32) dtype, and every layer reads its weights in
//! its compute dtype without knowing about precision: those written in ops and the native ones
//! alike.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use ferrotape_core::{kernels, Array, DType, Error, Result};
use parking_lot::RwLock;

use crate::ops;
use crate::tape;
use crate::tensor::{next_id, Tensor, TensorId};

static CREATION_ORDER: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The dtype reads of autocast variables are cast to on this thread (None: no cast).
    static AUTOCAST: Cell<Option<DType>> = const { Cell::new(None) };
    /// While a [`Journal`] is open on this thread: each variable written since it opened, with
    /// the value it had before its first write.
    static JOURNAL: RefCell<Option<Vec<(Variable, Array)>>> = const { RefCell::new(None) };
}

/// An undo journal of variable writes on this thread: a replay of a traced function keeps one
/// while it may still stop at a guard, which must leave the variables as they were (see
/// `trace`). Keeping a value costs no copy: it shares the buffer, and the write that follows
/// copies it first (assignment is copy-on-write).
///
/// A journal is a scope: opening one sets aside the thread's current one (that of a replay
/// this one runs inside, whose writes these are not), and dropping it puts that one back.
pub struct Journal {
    outer: Option<Option<Vec<(Variable, Array)>>>,
}

impl Journal {
    /// Opens a journal scope on this thread, keeping writes if `keeping`, else not.
    pub fn open(keeping: bool) -> Journal {
        let outer = JOURNAL.with(|j| j.replace(keeping.then(Vec::new)));
        Journal { outer: Some(outer) }
    }

    /// Stops keeping writes, keeping those made so far.
    pub fn keep(&mut self) {
        JOURNAL.with(|j| j.replace(None));
    }

    /// Gives each variable written since the journal opened its value from before, latest
    /// write undone first, and stops keeping writes.
    pub fn undo(&mut self) {
        let written = JOURNAL.with(|j| j.replace(None)).unwrap_or_default();
        for (variable, before) in written.into_iter().rev() {
            *variable.0.value.write() = before;
        }
    }
}

impl Drop for Journal {
    /// Closes the scope (a replay that failed halfway keeps what it wrote, as an eager run
    /// would) and puts back the journal it set aside.
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            JOURNAL.with(|j| j.replace(outer));
        }
    }
}

/// Sets this thread's autocast dtype (`None` ends autocasting) and returns the previous one,
/// for the caller to restore when its layer's call ends.
pub fn set_autocast_dtype(dtype: Option<DType>) -> Option<DType> {
    AUTOCAST.with(|scope| scope.replace(dtype))
}

/// This thread's autocast dtype.
pub fn autocast_dtype() -> Option<DType> {
    AUTOCAST.with(Cell::get)
}

struct Inner {
    id: TensorId,
    order: u64,
    name: String,
    trainable: bool,
    /// Whether reads follow the autocast scope (Keras's `add_weight(autocast=True)`); plain
    /// variables do not.
    autocast: AtomicBool,
    value: RwLock<Array>,
    /// The front end's handle on this variable (the bindings keep a weak reference to the
    /// Python object here, so `watched_variables()` can return the user's own objects).
    owner: OnceLock<Box<dyn Any + Send + Sync>>,
}

#[derive(Clone)]
pub struct Variable(Arc<Inner>);

impl PartialEq for Variable {
    fn eq(&self, other: &Variable) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Variable {
    /// A variable holding `value`, on the device of the `tf.device` scope if one is active (an
    /// unavailable device leaves it where it is: soft placement).
    pub fn new(value: Array, trainable: bool, name: impl Into<String>) -> Variable {
        let value = match ferrotape_core::device::placement() {
            Some(device) => value.to_device(device).unwrap_or(value),
            None => value,
        };
        Variable(Arc::new(Inner {
            id: next_id(),
            order: CREATION_ORDER.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            trainable,
            autocast: AtomicBool::new(false),
            value: RwLock::new(value),
            owner: OnceLock::new(),
        }))
    }

    /// Attaches the front end's handle (once; later calls are ignored).
    pub fn set_owner(&self, owner: Box<dyn Any + Send + Sync>) {
        let _ = self.0.owner.set(owner);
    }

    pub fn owner(&self) -> Option<&(dyn Any + Send + Sync)> {
        self.0.owner.get().map(|b| b.as_ref())
    }

    /// The id gradients with respect to this variable are keyed by.
    pub fn id(&self) -> TensorId {
        self.0.id
    }

    /// Creation order, for `watched_variables()`.
    pub fn order(&self) -> u64 {
        self.0.order
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }

    pub fn trainable(&self) -> bool {
        self.0.trainable
    }

    pub fn dtype(&self) -> DType {
        self.0.value.read().dtype()
    }

    /// Whether reads of this variable follow the autocast scope.
    pub fn autocast(&self) -> bool {
        self.0.autocast.load(Ordering::Relaxed)
    }

    pub fn set_autocast(&self, autocast: bool) {
        self.0.autocast.store(autocast, Ordering::Relaxed);
    }

    pub fn shape(&self) -> Vec<usize> {
        self.0.value.read().shape().to_vec()
    }

    /// The current value, not recorded on any tape.
    pub fn snapshot(&self) -> Array {
        self.0.value.read().clone()
    }

    /// The current value as a tensor, recorded on the active tapes (and watched by those that
    /// watch accessed variables, if trainable); cast to the autocast dtype if this variable
    /// follows the autocast scope and one is set (see the module doc).
    pub fn read(&self) -> Tensor {
        let out = self.read_stored();
        match autocast_dtype() {
            Some(dtype) if self.autocast() && out.dtype().is_float() && out.dtype() != dtype => {
                // A cast between floating dtypes does not fail; were it to, the value in its
                // stored dtype is still a correct read.
                ops::cast(&out, dtype).unwrap_or(out)
            }
            _ => out,
        }
    }

    /// The read in the stored dtype. A traced step replays this, and the autocast's cast as an
    /// op of its own.
    fn read_stored(&self) -> Tensor {
        let out = Tensor::new(self.snapshot());
        tape::note_variable_read(self, &out);
        crate::trace::node1("ReadVariableOp", &[], &out, || {
            let var = self.clone();
            move |_: &[Tensor]| Ok(var.read_stored())
        });
        out
    }

    /// The variable itself as a gradient target: its value under the variable's own id, so
    /// that `tape.gradient(v, v)` is ones, as in TensorFlow (where the target is the variable's
    /// handle). Use it only as a target: an op on it would read as an op on the variable.
    pub fn as_gradient_target(&self) -> Tensor {
        Tensor::with_id(self.snapshot(), self.id())
    }

    fn check(&self, op: &'static str, value: &Array) -> Result<()> {
        let cur = self.0.value.read();
        if value.dtype() != cur.dtype() {
            return Err(Error::dtype(
                op,
                format!(
                    "cannot assign a value of dtype {} to a variable of dtype {}",
                    value.dtype(),
                    cur.dtype()
                ),
            ));
        }
        if value.shape() != cur.shape() {
            return Err(Error::invalid(
                op,
                format!(
                    "cannot assign a value of shape {:?} to a variable of shape {:?}",
                    value.shape(),
                    cur.shape()
                ),
            ));
        }
        Ok(())
    }

    /// Write access to the value, for fused in-place updates (optimizer steps). Not recorded.
    pub(crate) fn value_mut(&self) -> parking_lot::RwLockWriteGuard<'_, Array> {
        self.journal_write();
        self.0.value.write()
    }

    /// Keeps the value before this write in the open [`Journal`], if any, unless this variable
    /// is in it already.
    fn journal_write(&self) {
        JOURNAL.with(|j| {
            if let Some(written) = j.borrow_mut().as_mut() {
                if !written.iter().any(|(v, _)| v == self) {
                    written.push((self.clone(), self.0.value.read().clone()));
                }
            }
        });
    }

    /// Where the value lives (TensorFlow's `Variable.device`).
    pub fn device(&self) -> ferrotape_core::Device {
        self.0.value.read().device()
    }

    /// Replaces the value (same shape and dtype), keeping it on the variable's device. Not
    /// differentiable.
    pub fn assign(&self, value: &Array) -> Result<()> {
        self.check("AssignVariableOp", value)?;
        self.journal_write();
        let mut slot = self.0.value.write();
        *slot = value.to_device(slot.device())?.contiguous();
        Ok(())
    }

    /// `self += delta` (or `-=` when `subtract`), in place if no tensor shares the buffer.
    pub fn assign_update(&self, delta: &Array, subtract: bool) -> Result<()> {
        let op = if subtract {
            "AssignSubVariableOp"
        } else {
            "AssignAddVariableOp"
        };
        self.check(op, delta)?;
        let which = if subtract {
            kernels::BinaryOp::Sub
        } else {
            kernels::BinaryOp::Add
        };
        self.journal_write();
        let mut slot = self.0.value.write();
        // Complex values have no in-place loop: they are added part by part (see `binary`).
        if !slot.dtype().is_complex() && kernels::update_in_place(&mut slot, delta, which)? {
            return Ok(());
        }
        // A variable stays on its device whatever device scope ran the update.
        let device = slot.device();
        *slot = kernels::binary(which, &slot, delta)?.to_device(device)?;
        Ok(())
    }
}

impl std::fmt::Debug for Variable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variable({:?}, id={})", self.0.name, self.0.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::{Source, Tape};

    fn scalar(v: &Variable) -> f32 {
        v.snapshot().to_vec::<f32>()[0]
    }

    #[test]
    fn a_journal_undoes_its_own_writes_but_not_those_of_a_scope_inside_it() {
        let v = Variable::new(Array::scalar(1.0f32), true, "v");
        let w = Variable::new(Array::scalar(10.0f32), true, "w");
        let shared = v.read(); // shares v's buffer: the next write copies it
        let mut journal = Journal::open(true);
        v.assign_update(&Array::scalar(1.0f32), false).unwrap(); // copies (shared)
        v.assign_update(&Array::scalar(1.0f32), false).unwrap(); // in place
        {
            let _inner = Journal::open(false); // another replay run inside this one
            w.assign(&Array::scalar(20.0f32)).unwrap();
        }
        assert_eq!((scalar(&v), scalar(&w)), (3.0, 20.0));
        journal.undo();
        assert_eq!((scalar(&v), scalar(&w)), (1.0, 20.0));
        assert_eq!(shared.value().to_vec::<f32>(), [1.0]);
        v.assign(&Array::scalar(5.0f32)).unwrap(); // no longer kept
        journal.undo();
        assert_eq!(scalar(&v), 5.0);
        drop(journal);
        JOURNAL.with(|j| assert!(j.borrow().is_none(), "the scope put back no journal"));
    }

    #[test]
    fn autocast_reads_cast_and_the_gradient_reaches_the_float32_variable() {
        let values = Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let v = Variable::new(values.clone(), true, "v");
        let plain = Variable::new(values, true, "plain");
        v.set_autocast(true);
        let tape = Tape::new(false, true);
        tape.push();
        let previous = set_autocast_dtype(Some(DType::F16));
        let (read, plain_read) = (v.read(), plain.read());
        set_autocast_dtype(previous);
        let y = ops::mul(&read, &read).unwrap();
        tape.pop();
        assert_eq!((read.dtype(), plain_read.dtype()), (DType::F16, DType::F32));
        assert_eq!(
            v.read().dtype(),
            DType::F32,
            "outside the scope reads are not cast"
        );
        let g = tape
            .gradient(&[y], &[Source::of_variable(&v)], None)
            .unwrap();
        let g = g[0].as_ref().unwrap();
        // d(v²)/dv = 2v, computed in float16 and cast back to the variable's float32.
        assert_eq!(g.dtype(), DType::F32);
        assert_eq!(g.value().to_vec::<f32>(), [2.0, 4.0]);
    }
}
