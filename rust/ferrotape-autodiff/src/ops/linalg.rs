//! Matrix products and dense linear algebra.

use ferrotape_core::{kernels, Result, Shape};

use super::{mul, neg, reshape, transpose, unbroadcast};
use crate::tape::{record, record_vectorizable};
use crate::tensor::Tensor;
use crate::trace;

/// Swaps the last two axes (the matrix transpose of a batch).
pub fn matrix_transpose(x: &Tensor) -> Result<Tensor> {
    let r = x.rank();
    if r < 2 {
        return Err(ferrotape_core::Error::invalid(
            "MatrixTranspose",
            format!("input must have rank >= 2, received shape {:?}", x.shape()),
        ));
    }
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    transpose(x, &perm)
}

/// a @ b over the last two axes (batch axes broadcast), optionally transposing either operand.
/// With C = A·B: dA = G·Bᵀ and dB = Aᵀ·G (the transposed cases follow TensorFlow's MatMul grad).
pub fn matmul(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    if a.dtype().is_complex() || b.dtype().is_complex() {
        return super::complex::complex_matmul(a, b, transpose_a, transpose_b);
    }
    let y = Tensor::new(kernels::matmul(
        a.value(),
        b.value(),
        transpose_a,
        transpose_b,
    )?);
    trace::node1("BatchMatMulV2", &[a, b], &y, || {
        move |t: &[Tensor]| matmul(&t[0], &t[1], transpose_a, transpose_b)
    });
    record_vectorizable("BatchMatMulV2", &[a, b], &[&y], || {
        let (a, b) = (a.clone(), b.clone());
        let (sa, sb): (Shape, Shape) = (a.shape().into(), b.shape().into());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let ga = if !needs[0] {
                None
            } else {
                Some(match (transpose_a, transpose_b) {
                    (false, false) => matmul(g, &b, false, true)?,
                    (false, true) => matmul(g, &b, false, false)?,
                    (true, false) => matmul(&b, g, false, true)?,
                    (true, true) => matmul(&b, g, true, true)?,
                })
            };
            let gb = if !needs[1] {
                None
            } else {
                Some(match (transpose_a, transpose_b) {
                    (false, false) => matmul(&a, g, true, false)?,
                    (false, true) => matmul(g, &a, true, false)?,
                    (true, false) => matmul(&a, g, false, false)?,
                    (true, true) => matmul(g, &a, true, true)?,
                })
            };
            Ok(vec![
                ga.map(|t| unbroadcast(&t, &sa)).transpose()?,
                gb.map(|t| unbroadcast(&t, &sb)).transpose()?,
            ])
        }
    });
    Ok(y)
}

/// x with a·x = b; db = solve(aᵀ, g), da = -db·xᵀ.
pub fn solve(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let x = Tensor::new(kernels::solve(a.value(), b.value())?);
    trace::node1("MatrixSolve", &[a, b], &x, || {
        |t: &[Tensor]| solve(&t[0], &t[1])
    });
    record("MatrixSolve", &[a, b], &[&x], || {
        let (a, x) = (a.clone(), x.clone());
        move |gs: &[Tensor], _: &[bool]| {
            let gb = solve(&matrix_transpose(&a)?, &gs[0])?;
            let ga = neg(&matmul(&gb, &x, false, true)?)?;
            Ok(vec![Some(ga), Some(gb)])
        }
    });
    Ok(x)
}

/// a⁻¹; da = -a⁻ᵀ·g·a⁻ᵀ.
pub fn inv(a: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::inv(a.value())?);
    trace::node1("MatrixInverse", &[a], &y, || |t: &[Tensor]| inv(&t[0]));
    record(
        "MatrixInverse",
        &[a],
        &[&y],
        grad!(|g; y| {
            neg(&matmul(&matmul(y, g, true, false)?, y, false, true)?)?
        }),
    );
    Ok(y)
}

/// det(a); da = g·det(a)·a⁻ᵀ.
pub fn det(a: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::det(a.value())?);
    trace::node1("MatrixDeterminant", &[a], &y, || |t: &[Tensor]| det(&t[0]));
    record(
        "MatrixDeterminant",
        &[a],
        &[&y],
        grad!(|g; a, y| {
            let mut s: Shape = y.shape().into();
            s.extend([1, 1]);
            let scale = reshape(&mul(g, y)?, &s)?;
            mul(&scale, &matrix_transpose(&inv(a)?)?)?
        }),
    );
    Ok(y)
}
