//! The float element types that compute (f32, f64). Half types compute through f32.

use num_traits::Float;

use crate::Element;

/// A float type with the special functions ferrotape's kernels need beyond `num_traits::Float`.
pub trait FloatElem: Float + Element + Send + Sync + std::iter::Sum {
    /// e^x as the element-wise kernels compute it: f32 through [`exp_f32`], which vectorises
    /// (libm's `expf` is a call per element); f64 through libm.
    fn exp_kernel(self) -> Self;
    /// tanh(x) as the element-wise kernels compute it: f32 through [`tanh_f32`], f64 libm.
    fn tanh_kernel(self) -> Self;
    fn erf(self) -> Self;
    /// Round half to even, as `tf.round` does.
    fn round_half_even(self) -> Self;
}

impl FloatElem for f32 {
    #[inline(always)]
    fn exp_kernel(self) -> Self {
        exp_f32(self)
    }
    #[inline(always)]
    fn tanh_kernel(self) -> Self {
        tanh_f32(self)
    }
    fn erf(self) -> Self {
        libm::erff(self)
    }
    fn round_half_even(self) -> Self {
        self.round_ties_even()
    }
}

impl FloatElem for f64 {
    #[inline(always)]
    fn exp_kernel(self) -> Self {
        self.exp()
    }
    #[inline(always)]
    fn tanh_kernel(self) -> Self {
        self.tanh()
    }
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn round_half_even(self) -> Self {
        self.round_ties_even()
    }
}

/// e^x for f32 without branches or calls, so that a loop over a slice vectorises (at whatever
/// width `simd::dispatch` compiles it for). Within 2 ULP of the correctly rounded value for
/// normal results (tested against f64 over a sweep of the range), exact at the specials:
/// NaN stays NaN, exp(-inf) = 0, overflow gives +inf, and subnormal results round once.
///
/// Method (Cody and Waite's reduction, Cephes's `expf` polynomial): x = n·ln2 + r with
/// |r| <= ln2/2, e^r by a degree-7 polynomial, then the scale by 2^n in two halves so that
/// n from -150 to 128 never leaves the normal exponent range before the final product.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const ROUNDER: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to the nearest integer
    const LN2_HI: f32 = 0.693_359_4; // ln 2 split so that n·LN2_HI is exact
    const LN2_LO: f32 = -2.121_944_4e-4;
    // A NaN stays NaN through the clamp and the arithmetic; it is passed on at the end.
    let clamped = x.clamp(-104.0, 88.8);
    let t = clamped * std::f32::consts::LOG2_E + ROUNDER;
    let n = t - ROUNDER;
    let r = clamped - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // t's bits are ROUNDER's plus n (|n| < 2^22 keeps the exponent).
    let n = t.to_bits() as i32 - ROUNDER.to_bits() as i32;
    let half = n >> 1;
    let scale = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
    let y = e * scale(half) * scale(n - half);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// tanh(x) for f32 without branches or calls (vectorises like [`exp_f32`]), within 2 ULP.
/// Both forms are computed and one selected: below |x| = 0.625 an odd polynomial (Cephes's
/// `tanhf`), where `1 - 2/(e^2|x| + 1)` would cancel; above it that form, through `exp_f32`
/// (which saturates to ±1 for large |x|). NaN stays NaN; ±0 keeps its sign.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let mut p = -5.704_988_7e-3f32;
    p = p * z + 2.063_909e-2;
    p = p * z - 5.373_971_6e-2;
    p = p * z + 1.333_144_2e-1;
    p = p * z - 3.333_328e-1;
    let small = x * (1.0 + z * p); // keeps the sign of ±0
    let large = 1.0 - 2.0 / (exp_f32(2.0 * a) + 1.0);
    let large = f32::copysign(large, x);
    if a < 0.625 || x.is_nan() {
        small
    } else {
        large
    }
}

#[cfg(test)]
mod tests {
    use super::{exp_f32, tanh_f32};

    /// Distance in units in the last place between `got` and the exact `want` (rounded to f32).
    fn ulps(got: f32, want: f64) -> u32 {
        let want = want as f32;
        if got == want {
            return 0;
        }
        (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_is_within_two_ulp_and_exact_at_the_specials() {
        let mut worst = (0, 0.0f32);
        let steps = 2_000_000;
        for i in 0..=steps {
            let x = -103.0 + 191.7 * (i as f32 / steps as f32);
            let u = ulps(exp_f32(x), (x as f64).exp());
            if u > worst.0 {
                worst = (u, x);
            }
        }
        assert!(worst.0 <= 2, "{} ulp at x = {}", worst.0, worst.1);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(88.8), f32::INFINITY);
        assert_eq!(exp_f32(-110.0), 0.0);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert!(exp_f32(88.72).is_finite());
        // Subnormal results: within one step of the smallest subnormal.
        for x in [-87.5f32, -95.0, -100.0, -103.5] {
            let (got, want) = (exp_f32(x) as f64, (x as f64).exp());
            assert!((got - want).abs() <= 1.5e-45, "{x}: {got} vs {want}");
        }
    }

    #[test]
    fn tanh_is_within_two_ulp_and_exact_at_the_specials() {
        let mut worst = (0, 0.0f32);
        let steps = 2_000_000;
        for i in 0..=steps {
            // Dense near zero (where the polynomial works), then out to saturation.
            let t = i as f32 / steps as f32;
            for x in [t * 1.5, -t * 12.0, t * t * 0.01] {
                let u = ulps(tanh_f32(x), (x as f64).tanh());
                if u > worst.0 {
                    worst = (u, x);
                }
            }
        }
        assert!(worst.0 <= 2, "{} ulp at x = {}", worst.0, worst.1);
        assert!(tanh_f32(f32::NAN).is_nan());
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh_f32(100.0), 1.0);
        assert_eq!(tanh_f32(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f32(1e-30), 1e-30);
    }
}
