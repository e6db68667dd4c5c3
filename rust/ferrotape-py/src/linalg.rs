//! `ft.linalg`: matrix products and dense linear algebra.

use ferrotape_autodiff::ops;
use pyo3::prelude::*;

use crate::convert::{binary_operands, to_tensor};
use crate::tensor::{compute, wrap, PyTensor};

/// a @ b over the last two axes; `adjoint_*` equals `transpose_*` for real dtypes.
#[pyfunction]
#[pyo3(signature = (a, b, transpose_a=false, transpose_b=false, adjoint_a=false, adjoint_b=false,
    a_is_sparse=false, b_is_sparse=false, output_type=None, grad_a=false, grad_b=false, name=None))]
#[allow(clippy::too_many_arguments)]
fn matmul(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    transpose_a: bool,
    transpose_b: bool,
    adjoint_a: bool,
    adjoint_b: bool,
    a_is_sparse: bool,
    b_is_sparse: bool,
    output_type: Option<&Bound<'_, PyAny>>,
    grad_a: bool,
    grad_b: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (a_is_sparse, b_is_sparse, output_type, grad_a, grad_b, name);
    let (x, y) = binary_operands(a, b)?;
    let work = x
        .len()
        .max(y.len())
        .saturating_mul(x.shape().last().copied().unwrap_or(1));
    wrap(compute(py, work, || {
        ops::matmul(&x, &y, transpose_a || adjoint_a, transpose_b || adjoint_b)
    }))
}

#[pyfunction]
#[pyo3(signature = (matrix, rhs, adjoint=false, name=None))]
fn solve(
    matrix: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
    adjoint: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let (a, b) = binary_operands(matrix, rhs)?;
    let a = if adjoint {
        ops::matrix_transpose(&a).map_err(crate::errors::to_py)?
    } else {
        a
    };
    wrap(ops::solve(&a, &b))
}

#[pyfunction]
#[pyo3(signature = (input, adjoint=false, name=None))]
fn inv(
    input: &Bound<'_, PyAny>,
    adjoint: bool,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let a = to_tensor(input, None)?;
    let a = if adjoint {
        ops::matrix_transpose(&a).map_err(crate::errors::to_py)?
    } else {
        a
    };
    wrap(ops::inv(&a))
}

#[pyfunction]
#[pyo3(signature = (input, name=None))]
fn det(input: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::det(&to_tensor(input, None)?))
}

#[pyfunction]
#[pyo3(signature = (a, name=None, conjugate=false))]
fn matrix_transpose(
    a: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    conjugate: bool,
) -> PyResult<PyTensor> {
    let _ = (name, conjugate);
    wrap(ops::matrix_transpose(&to_tensor(a, None)?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(matmul, m)?,
        wrap_pyfunction!(solve, m)?,
        wrap_pyfunction!(inv, m)?,
        wrap_pyfunction!(det, m)?,
        wrap_pyfunction!(matrix_transpose, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
