//! The binding rows: one per Python function of `ferrotape._core`, carrying the TensorFlow
//! names it is exported as and whether it has a gradient (declared, never implied).
//!
//! A row is written once, in the binding file of its namespace (`math.rs`, `nn.rs`, ...), inside
//! one of the row macros (`unary_ops!`, `functions!`, ...). Its forward is one of:
//! - `op(name)`: `ferrotape_autodiff::ops::name`, differentiable; its docstring is the op's doc
//!   comment (formula, derivative line and a `>>>` example, carried over by `build.rs`);
//! - `no_grad_op(name)`: the same, declared not differentiable;
//! - `grad(f, "doc")` / `no_grad(f, "doc")`: a forward written in the row, with its docstring
//!   (summary and example).
//!
//! The row macro adds the `Args:` and `Returns:` of its signature (`signature_doc!`, once per
//! row kind) and the TensorFlow names. A hand-written `functions!` row documents itself: its
//! doc comment has the summary, an example, `Args:` and `Returns:`.
//! `tests/test_native_docstrings.py` runs every example and checks the sections.
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

/// The docstring of a row: what it computes (its derivative and example), the `Args:` and
/// `Returns:` of its row kind's signature (`signature_doc!`), then its TensorFlow names.
macro_rules! row_doc {
    ($sig:ident [$($tf:literal),*] op($op:ident)) => {
        concat!(
            op_doc!($op),
            crate::registry::signature_doc!($sig),
            crate::registry::tf_names!($($tf),*)
        )
    };
    ($sig:ident [$($tf:literal),*] no_grad_op($op:ident)) => {
        concat!(
            op_doc!($op),
            crate::registry::signature_doc!($sig),
            crate::registry::tf_names!($($tf),*)
        )
    };
    ($sig:ident [$($tf:literal),*] $kind:ident($f:expr, $doc:literal)) => {
        concat!(
            $doc,
            crate::registry::signature_doc!($sig),
            crate::registry::tf_names!($($tf),*)
        )
    };
}

/// The `Args:` and `Returns:` sections shared by every row of a row macro, written once here
/// because the macro fixes the signature (`#[pyo3(signature = ...)]`) of all its rows.
/// `tests/test_native_docstrings.py` checks that they name exactly those parameters.
macro_rules! signature_doc {
    (unary) => {
        concat!(
            "\n\nArgs:",
            "\n    x: A tensor, or a Python or NumPy value converted with TensorFlow's rules",
            "\n        (Python floats become float32, ints int32; NumPy arrays keep their dtype).",
            crate::registry::signature_doc!(@name),
            "\n\nReturns:",
            "\n    A tensor of `x`'s shape and dtype (bool where the summary says so)."
        )
    };
    (binary) => {
        concat!(
            "\n\nArgs:",
            "\n    x: A tensor, or a value convertible to one.",
            "\n    y: A tensor or value broadcastable with `x`. Tensors must share a dtype;",
            "\n        a Python or NumPy value takes the tensor operand's (`y` takes `x`'s when",
            "\n        neither is a tensor).",
            crate::registry::signature_doc!(@name),
            "\n\nReturns:",
            "\n    A tensor of the broadcast shape of `x` and `y`, of their dtype (bool or",
            "\n    floating point where the summary says so)."
        )
    };
    (reduction) => {
        concat!(
            "\n\nArgs:",
            "\n    input_tensor: The tensor to reduce.",
            "\n    axis: An int or list of ints, the axes to reduce (negative counts from the",
            "\n        end); `None` reduces all of them.",
            "\n    keepdims: If true, the reduced axes are kept with length 1.",
            crate::registry::signature_doc!(@name),
            "\n\nReturns:",
            "\n    The reduced tensor, of `input_tensor`'s dtype."
        )
    };
    (activation) => {
        concat!(
            "\n\nArgs:",
            "\n    features: A floating-point tensor, or a value convertible to one.",
            crate::registry::signature_doc!(@name),
            "\n\nReturns:",
            "\n    A tensor of `features`' shape and dtype."
        )
    };
    (@name) => {
        "\n    name: Ignored (TensorFlow's op name; ferrotape runs eagerly)."
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

pub(crate) use {functions, row_doc, row_forward, row_of, signature_doc, tf_names};

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
