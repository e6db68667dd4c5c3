//! `ft.linalg`: matrix products and dense linear algebra.

use ferrotape_autodiff::{ops, Tensor};
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;

use crate::convert::{binary_operands, to_tensor, Bool, Flag};
use crate::errors::Raise;
use crate::registry::{self, functions};
use crate::tensor::{compute, wrap, PyTensor};

/// a @ b over the last two axes; `adjoint_*` conjugates and transposes (for real dtypes, the
/// same as `transpose_*`).
#[doc = ""]
#[doc = op_doc!(matmul)]
#[op_errors]
#[pyfunction]
#[pyo3(signature = (a, b, transpose_a=Bool(false), transpose_b=Bool(false), adjoint_a=Bool(false), adjoint_b=Bool(false),
    a_is_sparse=Bool(false), b_is_sparse=Bool(false), output_type=None, grad_a=Flag(false), grad_b=Flag(false), name=None))]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> a = ft.constant([[1.0, 2.0], [3.0, 4.0]])
/// >>> ft.linalg.matmul(a, a, transpose_b=True).numpy()
/// array([[ 5., 11.],
///        [11., 25.]], dtype=float32)
///
/// Args:
///     a: A tensor of rank >= 2.
///     b: A tensor of rank >= 2 and `a`'s dtype; batch axes broadcast.
///     transpose_a: If true, `a`'s last two axes are swapped first.
///     transpose_b: Likewise for `b`.
///     adjoint_a: If true, `a` is conjugated and transposed first (for real dtypes, the
///         same as `transpose_a`).
///     adjoint_b: If true, `b` is conjugated and transposed first.
///     a_is_sparse: Ignored (a hint for TensorFlow's kernels).
///     b_is_sparse: Ignored.
///     output_type: Ignored (the result has the inputs' dtype).
///     grad_a: Ignored (a TensorFlow-internal hint).
///     grad_b: Ignored (a TensorFlow-internal hint).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The product, `[..., m, n]`.
#[allow(clippy::too_many_arguments)]
fn matmul(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    transpose_a: Bool,
    transpose_b: Bool,
    adjoint_a: Bool,
    adjoint_b: Bool,
    a_is_sparse: Bool,
    b_is_sparse: Bool,
    output_type: Option<&Bound<'_, PyAny>>,
    grad_a: Flag,
    grad_b: Flag,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (a_is_sparse, b_is_sparse, output_type, grad_a, grad_b, name);
    let (x, y) = binary_operands(a, b)?;
    // The adjoint is the conjugate transpose; the conjugate of a real tensor is itself.
    let x = if adjoint_a.0 {
        ops::conj(&x).raise()?
    } else {
        x
    };
    let y = if adjoint_b.0 {
        ops::conj(&y).raise()?
    } else {
        y
    };
    let work = x
        .len()
        .max(y.len())
        .saturating_mul(x.shape().last().copied().unwrap_or(1));
    wrap(compute(py, work, || {
        ops::matmul(
            &x,
            &y,
            transpose_a.0 || adjoint_a.0,
            transpose_b.0 || adjoint_b.0,
        )
    }))
}

#[doc = op_doc!(solve)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [[2.0], [8.0]]).numpy()
/// array([[1.],
///        [2.]], dtype=float32)
///
/// Args:
///     matrix: Square matrices, `[..., n, n]`.
///     rhs: Right-hand sides, `[..., n, k]`.
///     adjoint: If true, solve with the transpose of `matrix`.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     `x` with `matrix @ x = rhs`, `[..., n, k]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (matrix, rhs, adjoint=Bool(false), name=None))]
fn solve(
    py: Python<'_>,
    matrix: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    adjoint: Bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (a, b) = binary_operands(matrix, rhs)?;
    let a = if adjoint.0 {
        ops::matrix_transpose(&a).map_err(crate::errors::to_py)?
    } else {
        a
    };
    wrap(compute(py, factorisation_work(&a), || ops::solve(&a, &b)))
}

#[doc = op_doc!(inv)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.linalg.inv([[2.0, 0.0], [0.0, 4.0]]).numpy()
/// array([[0.5 , 0.  ],
///        [0.  , 0.25]], dtype=float32)
///
/// Args:
///     input: Square invertible matrices, `[..., n, n]`.
///     adjoint: If true, invert the transpose.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The inverses, of `input`'s shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, adjoint=Bool(false), name=None))]
fn inv(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    adjoint: Bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let a = to_tensor(input, None)?;
    let a = if adjoint.0 {
        ops::matrix_transpose(&a).map_err(crate::errors::to_py)?
    } else {
        a
    };
    wrap(compute(py, factorisation_work(&a), || ops::inv(&a)))
}

#[doc = op_doc!(det)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> round(float(ft.linalg.det([[1.0, 2.0], [3.0, 4.0]])), 4)
/// -2.0
///
/// Args:
///     input: Square matrices, `[..., n, n]`.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The determinants, `[...]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, name=None))]
fn det(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let a = to_tensor(input, None)?;
    wrap(compute(py, factorisation_work(&a), || ops::det(&a)))
}

/// An LU factorisation's work, about n³ per matrix: the elements times the matrix side.
fn factorisation_work(a: &Tensor) -> usize {
    a.len()
        .saturating_mul(a.shape().last().copied().unwrap_or(1))
}

#[doc = op_doc!(matrix_transpose)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.linalg.matrix_transpose(ft.zeros([5, 2, 3])).shape
/// TensorShape([5, 3, 2])
///
/// Args:
///     a: A tensor of rank >= 2.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///     conjugate: If true, the complex conjugate is taken too (no effect on real dtypes).
///
/// Returns:
///     `a` with its last two axes swapped.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (a, name=None, conjugate=Flag(false)))]
fn matrix_transpose(
    a: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    conjugate: Flag,
) -> PyResult<PyTensor> {
    let _ = name;
    let a = to_tensor(a, None)?;
    let a = if conjugate.0 {
        ops::conj(&a).raise()?
    } else {
        a
    };
    wrap(ops::matrix_transpose(&a))
}

#[doc = op_doc!(adjoint)]
///
/// Args:
///     matrix: A tensor of rank >= 2.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The conjugate of `matrix` with its last two axes swapped.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (matrix, name=None))]
fn adjoint(matrix: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::adjoint(&to_tensor(matrix, None)?))
}

functions! {
    matmul ["linalg.matmul", "matmul"] grad,
    solve ["linalg.solve"] grad,
    inv ["linalg.inv"] grad,
    det ["linalg.det"] grad,
    matrix_transpose ["linalg.matrix_transpose"] grad,
    adjoint ["linalg.adjoint"] grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_functions(m)
}
