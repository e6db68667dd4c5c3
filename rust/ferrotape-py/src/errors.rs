//! The one place where Rust errors become Python exceptions. The exception classes live in
//! `ferrotape/errors.py` (TensorFlow's names; `InvalidArgumentError` is also a `ValueError`).
//!
//! An op's own argument rules live in the op and come here as core [`Error`]s. What the binding
//! itself finds wrong is a Python value it cannot convert; it raises that through the few
//! constructors below, named after the Python type TensorFlow raises for the same value
//! ([`type_error`], [`value_error`]), or [`invalid_argument`] where TensorFlow's op would
//! refuse it. `tests/test_error_mapping.py` checks that no other file builds an exception.

use std::cell::RefCell;

use ferrotape_autodiff::Error;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyNotImplementedError, PyOSError, PyRuntimeError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

thread_local! {
    /// A Python exception raised while the Rust side ran (in a custom gradient, or by a signal
    /// handler that stopped an op): it travels through Rust as an `Error` and is re-raised
    /// unchanged at the boundary.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Parks a Python exception raised in a callback and returns the Rust error that carries it out.
pub fn park(err: PyErr) -> Error {
    let msg = Python::attach(|py| err.value(py).to_string());
    PENDING.with(|p| *p.borrow_mut() = Some(err));
    Error::runtime("custom_gradient", msg)
}

fn error_class<'py>(py: Python<'py>, name: &str) -> Option<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE
        .get_or_try_init(py, || py.import("ferrotape.errors").map(Bound::unbind))
        .ok()?;
    module
        .bind(py)
        .getattr(name)
        .ok()?
        .cast_into::<PyType>()
        .ok()
}

/// Maps a core error to TensorFlow's exception type.
pub fn to_py(err: Error) -> PyErr {
    if let Some(parked) = PENDING.with(|p| p.borrow_mut().take()) {
        return parked;
    }
    Python::attach(|py| {
        let (class, msg) = match &err {
            Error::InvalidArgument { .. } | Error::DType { .. } | Error::OutOfRange { .. } => {
                ("InvalidArgumentError", err.to_string())
            }
            // TensorFlow's tape errors carry no op prefix; seeds print these messages verbatim.
            Error::Runtime { msg, .. } => return PyRuntimeError::new_err(msg.clone()),
            Error::Usage { msg, .. } => return PyValueError::new_err(msg.clone()),
            // Stopped by Ctrl-C without a handler's exception parked (another thread's op).
            Error::Cancelled { .. } => return PyKeyboardInterrupt::new_err(err.to_string()),
            Error::Unimplemented { .. } => ("UnimplementedError", err.to_string()),
            Error::ResourceExhausted { .. } => ("ResourceExhaustedError", err.to_string()),
        };
        match error_class(py, class) {
            Some(cls) => PyErr::from_type(cls, msg),
            None if class == "UnimplementedError" => PyNotImplementedError::new_err(msg),
            None if class == "ResourceExhaustedError" => PyMemoryError::new_err(msg),
            None => PyValueError::new_err(msg),
        }
    })
}

/// A Python value of a kind the argument cannot take, where TensorFlow raises `TypeError`
/// ("expected WHAT, received ..."; PyO3 adds the argument's name as a note).
pub fn type_error(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

/// A Python value TensorFlow's Python layer refuses with `ValueError` before any op runs (a
/// conversion to a dtype the value does not fit, a missing required argument).
pub fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// An argument of `op` found invalid while converting it (an index with two ellipses): the
/// `InvalidArgumentError` TensorFlow's op raises in eager mode.
pub fn invalid_argument(op: &'static str, msg: impl Into<String>) -> PyErr {
    to_py(Error::invalid(op, msg))
}

/// A feature of `op` that TensorFlow has and ferrotape not yet (`UnimplementedError`, also a
/// `NotImplementedError`).
pub fn unimplemented(op: &'static str, msg: impl Into<String>) -> PyErr {
    to_py(Error::unimplemented(op, msg))
}

/// A checkpoint file's failure as TensorFlow's exception of the same meaning: a missing key or
/// file is `NotFoundError`, a corrupt or truncated file `DataLossError`, an entry of a kind not
/// read (a partitioned variable) `UnimplementedError`, tensors that cannot be written as given
/// `InvalidArgumentError`, and any other I/O failure the `OSError` it is.
pub fn checkpoint_error(err: ferrotape_checkpoint::Error) -> PyErr {
    use ferrotape_checkpoint::Error as E;
    let class = match &err {
        E::KeyNotFound { .. } => "NotFoundError",
        E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => "NotFoundError",
        E::Io { .. } => return PyOSError::new_err(err.to_string()),
        E::NotAnIndex { .. } | E::DataLoss { .. } | E::ObjectGraph(_) => "DataLossError",
        E::Unsupported { .. } => "UnimplementedError",
        E::InvalidArgument(_) => "InvalidArgumentError",
    };
    Python::attach(|py| match error_class(py, class) {
        Some(cls) => PyErr::from_type(cls, err.to_string()),
        None => PyValueError::new_err(err.to_string()),
    })
}

/// The operating system refused a request (installing the Ctrl-C handler).
pub fn os_error(msg: impl Into<String>) -> PyErr {
    PyOSError::new_err(msg.into())
}

/// Names the argument a value converted inside a function came from, as PyO3 names the
/// arguments it converts itself: a note "while processing 'NAME'" on the error.
pub fn in_argument(name: &'static str) -> impl FnOnce(PyErr) -> PyErr {
    move |err| {
        Python::attach(|py| {
            let note = format!("while processing '{name}'");
            // A note is an aid to the reader; failing to add one keeps the error as it is.
            let _ = err.value(py).call_method1("add_note", (note,));
        });
        err
    }
}

/// Names the op an error left, as a note "while calling 'NAME'" below the message, unless the
/// message names it already (a core error's "reduce_sum: ..."). `#[op_errors]` puts this on
/// every binding function, so an error raised while converting an argument, or by numpy or
/// Python underneath, still says which op it came from.
pub fn in_op(name: &'static str) -> impl FnOnce(PyErr) -> PyErr {
    move |err| {
        Python::attach(|py| {
            let value = err.value(py);
            let named = value
                .str()
                .map(|m| names_word(&m.to_string_lossy(), name))
                .unwrap_or(false);
            if !named {
                // A note is an aid to the reader; failing to add one keeps the error as it is.
                let _ = value.call_method1("add_note", (format!("while calling '{name}'"),));
            }
        });
        err
    }
}

/// Whether `word` appears in `message` with no identifier character on either side.
fn names_word(message: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    message.match_indices(word).any(|(at, _)| {
        let before = message[..at].chars().next_back();
        let after = message[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// `.raise()` turns a core `Result` into a `PyResult`.
pub trait Raise<T> {
    fn raise(self) -> PyResult<T>;
}

impl<T> Raise<T> for Result<T, Error> {
    fn raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
