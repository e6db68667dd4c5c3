//! Random numbers. Reproducibility follows TensorFlow's contract within ferrotape: with a global
//! seed set, the n-th random op of a program draws the same numbers on every run; an op seed
//! makes one op reproducible on its own. The generator is rand's `StdRng` seeded per op.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use crate::{kernels::cast, Array, DType, Error, Result};

pub use rand::rngs::StdRng;

/// The generator for one op, from a (global seed, op seed) pair.
pub fn op_rng(global: u64, op: u64) -> StdRng {
    StdRng::seed_from_u64(global.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ op.rotate_left(17))
}

fn check_float(op: &'static str, dtype: DType) -> Result<()> {
    if dtype.is_float() {
        Ok(())
    } else {
        Err(Error::unsupported(op, dtype, "a floating dtype"))
    }
}

/// The number of samples for `shape`: checked for the result's dtype and for the float64
/// draws the result is cast from.
fn draw_count(op: &'static str, shape: &[usize], dtype: DType) -> Result<usize> {
    crate::check_alloc(op, dtype, shape)?;
    crate::check_alloc(op, DType::F64, shape)
}

/// Normal samples with the given mean and standard deviation.
pub fn normal(
    rng: &mut StdRng,
    shape: &[usize],
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Array> {
    check_float("RandomStandardNormal", dtype)?;
    let n = draw_count("RandomStandardNormal", shape, dtype)?;
    let mut v = crate::alloc::<f64>("RandomStandardNormal", shape)?;
    v.extend((0..n).map(|_| mean + stddev * Distribution::<f64>::sample(&StandardNormal, rng)));
    // Drawn on the host from the op's seeded stream on every device, so that a program draws
    // the same numbers wherever it runs; then moved to the op's device.
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, shape)?, dtype)?,
        &[],
    ))
}

/// Normal samples redrawn until within two standard deviations of the mean.
pub fn truncated_normal(
    rng: &mut StdRng,
    shape: &[usize],
    mean: f64,
    stddev: f64,
    dtype: DType,
) -> Result<Array> {
    check_float("TruncatedNormal", dtype)?;
    let n = draw_count("TruncatedNormal", shape, dtype)?;
    let mut v = crate::alloc::<f64>("TruncatedNormal", shape)?;
    v.extend((0..n).map(|_| loop {
        let z: f64 = StandardNormal.sample(rng);
        if z.abs() <= 2.0 {
            break mean + stddev * z;
        }
    }));
    // Drawn on the host from the op's seeded stream on every device, so that a program draws
    // the same numbers wherever it runs; then moved to the op's device.
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, shape)?, dtype)?,
        &[],
    ))
}

/// `tf.random.uniform`'s upper bound: 1 for floats when not given; integers need one.
pub fn uniform_maxval(maxval: Option<f64>, dtype: DType) -> Result<f64> {
    match maxval {
        Some(m) => Ok(m),
        None if dtype.is_float() => Ok(1.0),
        None => Err(Error::invalid(
            "RandomUniform",
            format!("maxval must be specified for integer dtype {dtype}"),
        )),
    }
}

/// Uniform samples in `[minval, maxval)`; integer dtypes draw integers.
pub fn uniform(
    rng: &mut StdRng,
    shape: &[usize],
    minval: f64,
    maxval: f64,
    dtype: DType,
) -> Result<Array> {
    let n = draw_count("RandomUniform", shape, dtype)?;
    let empty_int_range = dtype.is_int() && (maxval as i64) <= (minval as i64);
    if (maxval <= minval || empty_int_range) && n > 0 {
        return Err(Error::invalid(
            "RandomUniform",
            format!("need minval < maxval, received {minval} and {maxval}"),
        ));
    }
    let mut v = crate::alloc::<f64>("RandomUniform", shape)?;
    if dtype.is_int() {
        v.extend((0..n).map(|_| rng.random_range(minval as i64..maxval as i64) as f64));
    } else {
        v.extend((0..n).map(|_| minval + (maxval - minval) * rng.random::<f64>()));
    }
    // Drawn on the host from the op's seeded stream on every device, so that a program draws
    // the same numbers wherever it runs; then moved to the op's device.
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, shape)?, dtype)?,
        &[],
    ))
}

/// A random permutation of `0..n` (Fisher–Yates), used to shuffle the first axis.
pub fn permutation(rng: &mut StdRng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.random_range(0..=i));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_needs_maxval_for_integers_only() {
        assert_eq!(uniform_maxval(None, DType::F32), Ok(1.0));
        assert_eq!(uniform_maxval(Some(5.0), DType::I32), Ok(5.0));
        let err = uniform_maxval(None, DType::I64).unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidArgument {
                op: "RandomUniform",
                ..
            }
        ));
        assert!(err
            .to_string()
            .contains("maxval must be specified for integer dtype int64"));
    }
}
