//! Random numbers. Reproducibility follows TensorFlow's contract within ferrotape: with a global
//! seed set, the n-th random op of a program draws the same numbers on every run; an op seed
//! makes one op reproducible on its own. The generator is rand's `StdRng` seeded per op.

use rand::{Rng, RngCore, SeedableRng};
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

/// Dropout's mask: `keep_value` where a uniform draw in `[0, 1)` is at least `rate`, else 0,
/// in `dtype` (a float dtype), on the host.
///
/// Dropout draws one number per activation at every training step, so the draws come from a
/// small fast generator (xoshiro) seeded from `rng` once per call, not from `rng` itself: the
/// mask stays reproducible from the op's seeded stream, without drawing every number from it
/// (ChaCha) in float64 as `uniform` does (a training step's `Dropout` on 64×256 activations
/// took 93 µs that way, 16 µs this way). Each draw is 24 bits, the resolution of a
/// float32 uniform: an element is kept when `bits / 2^24 >= rate`.
pub fn keep_mask(
    rng: &mut StdRng,
    shape: &[usize],
    rate: f64,
    keep_value: f64,
    dtype: DType,
) -> Result<Array> {
    use rand::rngs::SmallRng;
    const OP: &str = "Dropout";
    check_float(OP, dtype)?;
    let n = draw_count(OP, shape, dtype)?;
    // bits / 2^24 >= rate  <=>  bits >= ceil(rate * 2^24), for integer bits.
    let threshold = (rate * f64::from(1u32 << 24))
        .ceil()
        .clamp(0.0, f64::from(1u32 << 24)) as u64;
    let mut fast = SmallRng::from_rng(rng);
    // First which elements stay, two 24-bit draws from each 64-bit number, then the values.
    // A single pass that chose the value per draw ran 4-6x slower: it compiled to a branch
    // that a random mask mispredicts half the time, or, made branch-free by converting the
    // flag to a float, to a conversion that waits for the previous element's.
    let mut stays = vec![false; n];
    for pair in stays.chunks_mut(2) {
        let draw = fast.next_u64();
        pair[0] = draw >> 40 >= threshold;
        if let Some(second) = pair.get_mut(1) {
            *second = (draw >> 8) & 0xFF_FFFF >= threshold;
        }
    }
    fn fill<T: crate::Element + num_traits::Zero>(stays: &[bool], keep: T) -> Vec<T> {
        stays
            .iter()
            .map(|&s| if s { keep } else { T::zero() })
            .collect()
    }
    if dtype == DType::F64 {
        return Array::from_vec(fill(&stays, keep_value), shape);
    }
    let keep = keep_value as f32;
    cast(&Array::from_vec(fill(&stays, keep), shape)?, dtype)
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

    #[test]
    fn keep_masks_keep_the_expected_share_and_repeat_from_the_same_seed() {
        let n = 200_001; // odd: the last draw's second half is unused
        for rate in [0.0, 0.1, 0.5, 0.9] {
            let keep = 1.0 / (1.0 - rate);
            let mask = keep_mask(&mut op_rng(1, 2), &[n], rate, keep, DType::F32).unwrap();
            let values = mask.to_vec::<f32>();
            assert_eq!(values.len(), n);
            assert!(values.iter().all(|&v| v == 0.0 || v == keep as f32));
            let kept = values.iter().filter(|&&v| v != 0.0).count() as f64 / n as f64;
            // Five standard deviations of a binomial share.
            let sigma = (rate * (1.0 - rate) / n as f64).sqrt();
            assert!(
                (kept - (1.0 - rate)).abs() <= 5.0 * sigma + 1e-12,
                "{rate}: {kept}"
            );
            let again = keep_mask(&mut op_rng(1, 2), &[n], rate, keep, DType::F32).unwrap();
            assert_eq!(again.to_vec::<f32>(), values);
        }
        // Another stream drops other elements; float64 keeps the exact scale.
        let a = keep_mask(&mut op_rng(1, 2), &[64], 0.5, 2.0, DType::F32).unwrap();
        let b = keep_mask(&mut op_rng(1, 3), &[64], 0.5, 2.0, DType::F32).unwrap();
        assert_ne!(a.to_vec::<f32>(), b.to_vec::<f32>());
        let wide = keep_mask(&mut op_rng(1, 2), &[1000], 0.3, 1.0 / 0.7, DType::F64).unwrap();
        assert!(wide.to_vec::<f64>().contains(&(1.0 / 0.7)));
        let err = keep_mask(&mut op_rng(1, 2), &[4], 0.5, 2.0, DType::I32).unwrap_err();
        assert!(err.to_string().contains("Dropout"), "{err}");
    }
}
