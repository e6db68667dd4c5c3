//! Typed errors of the numeric core. Each names the op and what it received versus what it
//! expected; the Python bindings map the variants to exception types in one place.

use crate::DType;

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum Error {
    /// Bad argument values or shapes (TensorFlow's `InvalidArgumentError`).
    #[error("{op}: {msg}")]
    InvalidArgument { op: &'static str, msg: String },
    /// Operands of one op with different dtypes, or a dtype the op does not support.
    #[error("{op}: {msg}")]
    DType { op: &'static str, msg: String },
    /// An index outside a dimension (TensorFlow raises `InvalidArgumentError`, Python `IndexError`).
    #[error("{op}: {msg}")]
    OutOfRange { op: &'static str, msg: String },
    /// An API used out of order, e.g. a second `gradient()` on a non-persistent tape
    /// (Python's `RuntimeError`).
    #[error("{op}: {msg}")]
    Runtime { op: &'static str, msg: String },
    /// A stateful API used in a state that refuses it where TensorFlow raises Python's
    /// `ValueError` (re-entering a recording tape; Python's `ValueError`, message verbatim).
    #[error("{op}: {msg}")]
    Usage { op: &'static str, msg: String },
    /// An allocation larger than the machine can hold, or one the allocator refused
    /// (TensorFlow's `ResourceExhaustedError`; Python also catches it as `MemoryError`).
    #[error("{op}: {msg}")]
    ResourceExhausted { op: &'static str, msg: String },
    /// The op was stopped by Ctrl-C (see [`crate::interrupt`]); the binding raises what the
    /// Python signal handler raises (`KeyboardInterrupt` by default).
    #[error("{op}: interrupted")]
    Cancelled { op: &'static str },
    /// A feature that exists in TensorFlow but not (yet) here.
    #[error("{op}: {msg}")]
    Unimplemented { op: &'static str, msg: String },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(op: &'static str, msg: impl Into<String>) -> Error {
        Error::InvalidArgument {
            op,
            msg: msg.into(),
        }
    }

    pub fn dtype(op: &'static str, msg: impl Into<String>) -> Error {
        Error::DType {
            op,
            msg: msg.into(),
        }
    }

    pub fn out_of_range(op: &'static str, msg: impl Into<String>) -> Error {
        Error::OutOfRange {
            op,
            msg: msg.into(),
        }
    }

    pub fn runtime(op: &'static str, msg: impl Into<String>) -> Error {
        Error::Runtime {
            op,
            msg: msg.into(),
        }
    }

    pub fn usage(op: &'static str, msg: impl Into<String>) -> Error {
        Error::Usage {
            op,
            msg: msg.into(),
        }
    }

    pub fn resource_exhausted(op: &'static str, msg: impl Into<String>) -> Error {
        Error::ResourceExhausted {
            op,
            msg: msg.into(),
        }
    }

    pub fn unimplemented(op: &'static str, msg: impl Into<String>) -> Error {
        Error::Unimplemented {
            op,
            msg: msg.into(),
        }
    }

    /// The error for an op given a dtype it does not support.
    pub fn unsupported(op: &'static str, dtype: DType, expected: &str) -> Error {
        Error::dtype(op, format!("expected {expected}, received dtype {dtype}"))
    }

    /// The error for two operands whose dtypes differ.
    pub fn mismatch(op: &'static str, a: DType, b: DType) -> Error {
        Error::dtype(
            op,
            format!("operands must have the same dtype, received {a} and {b}"),
        )
    }
}
