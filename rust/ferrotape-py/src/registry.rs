//! The binding rows: one per Python function of `ferrotape._core`, carrying the TensorFlow
//! names it is exported as and whether it has a gradient (declared, never implied).
//!
//! A row is written once, in the binding file of its namespace (`math.rs`, `nn.rs`, ...), inside
//! one of the row macros (`unary_ops!`, `functions!`, ...). Its forward is one of:
//! - `op(name)`: `ferrotape_autodiff::ops::name`, differentiable; its docstring is the op's doc
//!   comment (formula and derivative line, carried over by `build.rs`);
//! - `no_grad_op(name)`: the same, declared not differentiable;
//! - `grad(f, "doc")` / `no_grad(f, "doc")`: a forward written in the row, with its docstring.
//!
//! `op_table()` lists every row; `scripts/gen_bindings.py` writes the Python export lists
//! (`python/ferrotape/_exports/`) and the typed stub from it, and `tests/test_gradcheck.py`
//! derives its inventory from it (a differentiable row without a gradient-check row fails).

use pyo3::prelude::*;

/// One binding row.
pub struct Row {
    /// The attribute of the native module (`relu` of `ferrotape._core.nn`).
    pub name: &'static str,
    /// TensorFlow's public names without `tf.`: `"asinh"`, `"math.asinh"`, `"nn.swish"`.
    pub tf_names: &'static [&'static str],
    pub differentiable: bool,
    /// The `ferrotape_autodiff::ops` function it calls, where it is one op.
    pub op: Option<&'static str>,
}

/// The forward of a row kind.
macro_rules! row_forward {
    (op($op:ident)) => {
        ferrotape_autodiff::ops::$op
    };
    (no_grad_op($op:ident)) => {
        ferrotape_autodiff::ops::$op
    };
    (grad($f:expr, $doc:literal)) => {
        $f
    };
    (no_grad($f:expr, $doc:literal)) => {
        $f
    };
}

/// The docstring of a row: what it computes (and its derivative), then its TensorFlow names.
macro_rules! row_doc {
    ([$($tf:literal),*] op($op:ident)) => {
        concat!(op_doc!($op), crate::registry::tf_names!($($tf),*))
    };
    ([$($tf:literal),*] no_grad_op($op:ident)) => {
        concat!(op_doc!($op), crate::registry::tf_names!($($tf),*))
    };
    ([$($tf:literal),*] $kind:ident($f:expr, $doc:literal)) => {
        concat!($doc, crate::registry::tf_names!($($tf),*))
    };
}

/// The closing line of a docstring: the names TensorFlow programs use.
macro_rules! tf_names {
    () => {
        "\n\nInternal to ferrotape (no TensorFlow name)."
    };
    ($($tf:literal),+) => {
        concat!("\n\nTensorFlow names:", $(" tf.", $tf),+, ".")
    };
}

/// The `Row` of a row kind.
macro_rules! row_of {
    ($name:ident [$($tf:literal),*] $kind:ident $args:tt) => {
        crate::registry::Row {
            name: stringify!($name),
            tf_names: &[$($tf),*],
            differentiable: crate::registry::row_of!(@grad $kind),
            op: crate::registry::row_of!(@op $kind $args),
        }
    };
    (@grad op) => { true };
    (@grad grad) => { true };
    (@grad no_grad_op) => { false };
    (@grad no_grad) => { false };
    (@op op($op:ident)) => { Some(stringify!($op)) };
    (@op no_grad_op($op:ident)) => { Some(stringify!($op)) };
    (@op $kind:ident $args:tt) => { None };
}

/// Rows of hand-written `#[pyfunction]`s (their docstrings are their own doc comments):
/// `name [tf names] grad|no_grad`. Makes `register_functions` and `FUNCTIONS`.
macro_rules! functions {
    ($($name:ident [$($tf:literal),*] $grad:ident),* $(,)?) => {
        fn register_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const FUNCTIONS: &[crate::registry::Row] = &[$(
            crate::registry::Row {
                name: stringify!($name),
                tf_names: &[$($tf),*],
                differentiable: crate::registry::row_of!(@grad $grad),
                op: None,
            }
        ),*];
    };
}

pub(crate) use {functions, row_doc, row_forward, row_of, tf_names};

/// Every binding row: `(python_name, tf_names, differentiable, op)`, the python name qualified
/// by its submodule (`nn.relu`). Classes come first, with no gradient of their own.
#[pyfunction]
pub fn op_table() -> Vec<(String, Vec<&'static str>, bool, Option<&'static str>)> {
    let tables: [(&str, &[&[Row]]); 6] = [
        ("", crate::CLASSES),
        ("", crate::array::ROWS),
        ("", crate::math::ROWS),
        ("nn.", crate::nn::ROWS),
        ("linalg.", crate::linalg::ROWS),
        ("random.", crate::random::ROWS),
    ];
    let mut out = Vec::new();
    for (prefix, rows) in tables {
        for row in rows.iter().flat_map(|rows| rows.iter()) {
            let name = format!("{prefix}{}", row.name);
            out.push((name, row.tf_names.to_vec(), row.differentiable, row.op));
        }
    }
    out
}

/// The `ferrotape_autodiff::ops` functions that record a derivative, read from their source:
/// `(function, TensorFlow op name)`, the name where the source states it literally.
#[pyfunction]
pub fn recording_ops() -> Vec<(&'static str, Option<&'static str>)> {
    crate::RECORDING_OPS.to_vec()
}
