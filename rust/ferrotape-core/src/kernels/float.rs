//! The float element types that compute (f32, f64). Half types compute through f32.

use num_traits::Float;

use crate::Element;

/// A float type with the special functions ferrotape's kernels need beyond `num_traits::Float`.
pub trait FloatElem: Float + Element + Send + Sync + std::iter::Sum {
    fn erf(self) -> Self;
    /// Round half to even, as `tf.round` does.
    fn round_half_even(self) -> Self;
}

impl FloatElem for f32 {
    fn erf(self) -> Self {
        libm::erff(self)
    }
    fn round_half_even(self) -> Self {
        self.round_ties_even()
    }
}

impl FloatElem for f64 {
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn round_half_even(self) -> Self {
        self.round_ties_even()
    }
}
