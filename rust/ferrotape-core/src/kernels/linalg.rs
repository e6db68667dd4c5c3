//! Dense linear algebra on batches of small square matrices: LU with partial pivoting, in f64
//! whatever the input float type (the result is cast back), which keeps float32 solves accurate.

use super::cast;
use crate::{interrupt, Array, DType, Error, Result, Shape};

struct Lu {
    lu: Vec<f64>,
    perm: Vec<usize>,
    sign: f64,
    singular: bool,
}

/// Each column's elimination is O(n²) work: the loops check for Ctrl-C once per column.
fn lu(op: &'static str, mut a: Vec<f64>, n: usize) -> Result<Lu> {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut sign = 1.0;
    let mut singular = false;
    for c in 0..n {
        interrupt::check(op)?;
        let p = (c..n)
            .max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))
            .unwrap_or(c); // c..n is never empty inside this loop
        if a[p * n + c] == 0.0 {
            singular = true;
            continue;
        }
        if p != c {
            for j in 0..n {
                a.swap(p * n + j, c * n + j);
            }
            perm.swap(p, c);
            sign = -sign;
        }
        for r in c + 1..n {
            let f = a[r * n + c] / a[c * n + c];
            a[r * n + c] = f;
            for j in c + 1..n {
                a[r * n + j] -= f * a[c * n + j];
            }
        }
    }
    Ok(Lu {
        lu: a,
        perm,
        sign,
        singular,
    })
}

/// Solves L·U·x = P·b for one column set `b` (n × k, row-major).
fn lu_solve(op: &'static str, f: &Lu, n: usize, b: &[f64], k: usize) -> Result<Vec<f64>> {
    let mut x: Vec<f64> = f
        .perm
        .iter()
        .flat_map(|&p| b[p * k..(p + 1) * k].to_vec())
        .collect();
    for c in 0..k {
        interrupt::check(op)?;
        for r in 0..n {
            let mut s = x[r * k + c];
            for j in 0..r {
                s -= f.lu[r * n + j] * x[j * k + c];
            }
            x[r * k + c] = s;
        }
        for r in (0..n).rev() {
            let mut s = x[r * k + c];
            for j in r + 1..n {
                s -= f.lu[r * n + j] * x[j * k + c];
            }
            x[r * k + c] = s / f.lu[r * n + r];
        }
    }
    Ok(x)
}

fn square_batches(op: &'static str, a: &Array) -> Result<(usize, usize, Vec<f64>)> {
    let r = a.rank();
    if r < 2 || a.shape()[r - 1] != a.shape()[r - 2] {
        return Err(Error::invalid(
            op,
            format!(
                "input must be a (batch of) square matrix, received shape {:?}",
                a.shape()
            ),
        ));
    }
    if !a.dtype().is_float() {
        return Err(Error::unsupported(op, a.dtype(), "a floating dtype"));
    }
    let n = a.shape()[r - 1];
    // From the batch dims, not `len / n²`: a 0×0 matrix still has one determinant (1).
    let batches = crate::num_elements(&a.shape()[..r - 2]);
    Ok((n, batches, cast(a, DType::F64)?.to_vec::<f64>()))
}

/// The solution `x` of `a @ x = b` for each matrix in the batch.
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    const OP: &str = "MatrixSolve";
    let (n, batches, av) = square_batches(OP, a)?;
    let r = a.rank();
    if b.rank() != r || b.shape()[..r - 2] != a.shape()[..r - 2] || b.shape()[r - 2] != n {
        return Err(Error::invalid(
            OP,
            format!(
                "rhs of shape {:?} does not match matrix of shape {:?}",
                b.shape(),
                a.shape()
            ),
        ));
    }
    if b.dtype() != a.dtype() {
        return Err(Error::mismatch(OP, a.dtype(), b.dtype()));
    }
    let k = b.shape()[r - 1];
    let bv = cast(b, DType::F64)?.to_vec::<f64>();
    let mut out = Vec::with_capacity(bv.len());
    for i in 0..batches {
        let f = lu(OP, av[i * n * n..(i + 1) * n * n].to_vec(), n)?;
        if f.singular {
            return Err(Error::invalid(OP, "input matrix is not invertible"));
        }
        out.extend(lu_solve(OP, &f, n, &bv[i * n * k..(i + 1) * n * k], k)?);
    }
    cast(&Array::from_vec(out, b.shape())?, a.dtype())
}

/// The inverse of each matrix in the batch.
pub fn inv(a: &Array) -> Result<Array> {
    const OP: &str = "MatrixInverse";
    let (n, batches, av) = square_batches(OP, a)?;
    let mut identity = vec![0.0; n * n];
    for i in 0..n {
        identity[i * n + i] = 1.0;
    }
    let mut out = Vec::with_capacity(av.len());
    for i in 0..batches {
        let f = lu(OP, av[i * n * n..(i + 1) * n * n].to_vec(), n)?;
        if f.singular {
            return Err(Error::invalid(OP, "input is not invertible"));
        }
        out.extend(lu_solve(OP, &f, n, &identity, n)?);
    }
    cast(&Array::from_vec(out, a.shape())?, a.dtype())
}

/// The determinant of each matrix in the batch (shape: the batch shape).
pub fn det(a: &Array) -> Result<Array> {
    const OP: &str = "MatrixDeterminant";
    let (n, batches, av) = square_batches(OP, a)?;
    let dets = (0..batches)
        .map(|i| {
            let f = lu(OP, av[i * n * n..(i + 1) * n * n].to_vec(), n)?;
            Ok(if f.singular {
                0.0
            } else {
                f.sign * (0..n).map(|j| f.lu[j * n + j]).product::<f64>()
            })
        })
        .collect::<Result<Vec<f64>>>()?;
    let shape: Shape = a.shape()[..a.rank() - 2].into();
    cast(&Array::from_vec(dets, &shape)?, a.dtype())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_inv_det_agree() {
        let a = Array::from_vec(vec![4.0f64, 3.0, 6.0, 3.0], &[2, 2]).unwrap();
        assert!((det(&a).unwrap().to_vec::<f64>()[0] - -6.0).abs() < 1e-12);
        let b = Array::from_vec(vec![10.0f64, 12.0], &[2, 1]).unwrap();
        let x = solve(&a, &b).unwrap().to_vec::<f64>();
        assert!((4.0 * x[0] + 3.0 * x[1] - 10.0).abs() < 1e-12);
        let ai = inv(&a).unwrap().to_vec::<f64>();
        assert!((ai[0] - -0.5).abs() < 1e-12);
    }

    #[test]
    fn empty_matrices_have_determinant_one() {
        // numpy and TensorFlow: det of a 0×0 matrix is 1 (the empty product); inv is empty.
        let empty = Array::zeros("test", DType::F64, &[3, 0, 0]).unwrap();
        assert_eq!(det(&empty).unwrap().to_vec::<f64>(), vec![1.0; 3]);
        assert_eq!(inv(&empty).unwrap().shape(), &[3, 0, 0]);
    }
}
