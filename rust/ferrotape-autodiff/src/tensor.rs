//! `Tensor`: an immutable value with an identity. The id is what the tape records and what
//! gradients are keyed by; the value is an `Array` (often a view sharing another's buffer).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use ferrotape_core::{Array, DType};

pub type TensorId = u64;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh id, unique within the process. Tensors and variables share this id space.
pub fn next_id() -> TensorId {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

#[derive(Debug)]
struct Inner {
    id: TensorId,
    value: Array,
}

/// An immutable n-dimensional value. Cloning is an `Arc` increment.
#[derive(Clone, Debug)]
pub struct Tensor(Arc<Inner>);

impl Tensor {
    pub fn new(value: Array) -> Tensor {
        Tensor(Arc::new(Inner {
            id: next_id(),
            value,
        }))
    }

    pub fn id(&self) -> TensorId {
        self.0.id
    }

    /// A tensor that carries an existing id (a variable's value as a gradient target).
    pub(crate) fn with_id(value: Array, id: TensorId) -> Tensor {
        Tensor(Arc::new(Inner { id, value }))
    }

    pub fn value(&self) -> &Array {
        &self.0.value
    }

    pub fn dtype(&self) -> DType {
        self.0.value.dtype()
    }

    pub fn shape(&self) -> &[usize] {
        self.0.value.shape()
    }

    pub fn rank(&self) -> usize {
        self.0.value.rank()
    }

    pub fn len(&self) -> usize {
        self.0.value.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.value.is_empty()
    }

    /// A reference that does not keep the value alive (to observe when it is freed).
    pub fn downgrade(&self) -> WeakTensor {
        WeakTensor(Arc::downgrade(&self.0))
    }

    /// A scalar of this tensor's dtype.
    pub fn scalar_like(&self, value: f64) -> Tensor {
        let t = Tensor::new(Array::scalar_of(self.dtype(), value));
        crate::trace::constant(&t);
        t
    }
}

/// A non-owning handle on a tensor (see [`Tensor::downgrade`]).
pub struct WeakTensor(Weak<Inner>);

impl WeakTensor {
    pub fn upgrade(&self) -> Option<Tensor> {
        self.0.upgrade().map(Tensor)
    }

    /// Whether the tensor still exists (without taking a reference to it).
    pub fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}
