//! ferrotape-keras: the computing half of Keras's layers.
//!
//! The split, and why: Keras's protocol (names, building on the first call from the input
//! shape, `add_weight` with initializers and regularizers, sublayer tracking, `training`
//! propagation) lives in Python (`ferrotape.keras`), where users subclass layers and where
//! Keras's many argument forms are cheap to normalise. What a layer *computes* lives here: each
//! layer is a struct implementing [`Layer`], holding its [`Variable`]s (the very objects Python
//! handed over, so optimizers and tapes see the same variables), whose `call` runs its forward
//! pass as one Rust call from Python with the [`Settings`] the Python layer holds at that
//! moment (see `layer.rs` for why settings are read per call). Layers are built from `ferrotape-autodiff`'s ops and never define
//! derivatives of their own, so every layer is differentiable to any order for free; where a
//! layer pays for several full passes over its data (batch normalisation), the gain comes from a
//! fused op in `ferrotape-autodiff`, not from a derivative written here.
//!
//! [`Variable`]: ferrotape_autodiff::Variable

// No unsafe code: the unsafe parts (kernels, buffers) are ferrotape-core's, documented there.
#![forbid(unsafe_code)]

mod activation;
mod conv;
mod core_layers;
mod layer;
mod normalization;

pub use activation::{Activation, ActivationLayer};
pub use conv::{Conv2D, DepthwiseConv2D};
pub use core_layers::{Dense, Dropout, Embedding};
pub use layer::{Layer, NativeLayer, Setting, Settings, Weights};
pub use normalization::{BatchNormalization, LayerNormalization};

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{DType, Result, Tensor};

/// Keras casts a layer's floating inputs to the layer's dtype: the dtype its variables are read
/// in (their own, or the compute dtype in a mixed-precision call, whose autocast scope casts the
/// reads).
fn autocast(x: &Tensor, dtype: DType) -> Result<Tensor> {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        ops::cast(x, dtype)
    }
}
