//! `ft.linalg`: matrix products and dense linear algebra.

use ferrotape_autodiff::{ops, Tensor};
use pyo3::prelude::*;

use crate::convert::{binary_operands, to_tensor, Bool, Flag};
use crate::registry::{self, functions};
use crate::tensor::{compute, wrap, PyTensor};

/// a @ b over the last two axes; `adjoint_*` equals `transpose_*` for real dtypes.
#[doc = ""]
#[doc = op_doc!(matmul)]
#[pyfunction]
#[pyo3(signature = (a, b, transpose_a=Bool(false), transpose_b=Bool(false), adjoint_a=Bool(false), adjoint_b=Bool(false),
    a_is_sparse=Bool(false), b_is_sparse=Bool(false), output_type=None, grad_a=Flag(false), grad_b=Flag(false), name=None))]
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
#[pyfunction]
#[pyo3(signature = (a, name=None, conjugate=Flag(false)))]
fn matrix_transpose(
    a: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    conjugate: Flag,
) -> PyResult<PyTensor> {
    let _ = (name, conjugate);
    wrap(ops::matrix_transpose(&to_tensor(a, None)?))
}

functions! {
    matmul ["linalg.matmul", "matmul"] grad,
    solve ["linalg.solve"] grad,
    inv ["linalg.inv"] grad,
    det ["linalg.det"] grad,
    matrix_transpose ["linalg.matrix_transpose", "linalg.adjoint"] grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_functions(m)
}
