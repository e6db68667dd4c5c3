//! ferrotape-autodiff: `Tensor`, `Variable`, the gradient tape, and every differentiable op.
//!
//! The path of a value: an op in [`ops`] runs its forward kernel from `ferrotape-core`, wraps
//! the result in a fresh [`Tensor`], and calls [`tape::record`] with a closure that computes its
//! derivative. [`tape::Tape::gradient`] walks the recorded entries backwards.

// No unsafe code: the unsafe parts (kernels, buffers) are ferrotape-core's, documented there.
#![forbid(unsafe_code)]

mod compute_thread;
pub mod ops;
pub mod optim;
pub mod tape;
mod tensor;
pub mod trace;
mod variable;

pub use ferrotape_core::{self as core, Array, DType, Error, Result};
pub use tape::{Source, Tape};
pub use tensor::{Tensor, TensorId, WeakTensor};
pub use variable::{autocast_dtype, set_autocast_dtype, Variable};
