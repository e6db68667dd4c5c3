//! The gradient tape, in four parts cut along their dependencies:
//!
//! - [`record`]: the tape as a data structure and the recording primitive every op calls. It
//!   imports no op, so ops can depend on it without a cycle, and it is the hot path.
//! - [`backprop`]: the backward sweep and `gradient` / `jacobian` / `batch_jacobian`, written
//!   with ops (seeds, zeros, stacking, the backward closures themselves).
//! - [`forward`]: forward mode (`tf.autodiff.ForwardAccumulator`): tangents computed as ops run,
//!   each op's jvp derived from its backward, through a hook in `record`.
//! - [`contract`]: TensorFlow's `GradientTape` contract (entered and recording state, persistent
//!   tapes, the misuse errors), a plain Rust type so that `cargo test` checks each rule; a host
//!   binding only converts its language's values and nests around it.

pub mod backprop;
pub mod contract;
pub mod forward;
pub mod record;

pub use backprop::{Rows, Source, ROWS_ELEMENT_BUDGET};
pub use contract::{GradientTape, Pause};
pub use forward::Accumulator;
pub(crate) use record::note_variable_read;
pub use record::{
    any_accumulating, any_recording, batch_axes, pop_variable_watcher, push_variable_watcher,
    record, record_custom, record_vectorizable, would_record, BackwardFn, Entry, HostObject, Tape,
};
