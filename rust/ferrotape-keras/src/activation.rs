//! The activations a layer applies inside its own call (`Dense(..., activation="relu")`), and
//! the `Activation` layer.
//!
//! [`Activation::TABLE`] is the one list of these names: Python reads it (as
//! `ferrotape._core.keras.FUSED_ACTIVATIONS`) to decide which of Keras's activations run
//! inside a native call; any other activation (a user's function, `hard_sigmoid`...) is applied
//! by the Python layer after a linear native call.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Error, Result, Tensor};

use crate::layer::{Layer, Settings};

/// An activation known by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Linear,
    Relu,
    Relu6,
    Sigmoid,
    Tanh,
    Softmax,
    LogSoftmax,
    Elu,
    Selu,
    Gelu,
    Softplus,
    Swish,
}

impl Activation {
    /// Keras's names for them (`silu` is Keras's other name for `swish`).
    pub const TABLE: &'static [(&'static str, Activation)] = &[
        ("linear", Activation::Linear),
        ("relu", Activation::Relu),
        ("relu6", Activation::Relu6),
        ("sigmoid", Activation::Sigmoid),
        ("tanh", Activation::Tanh),
        ("softmax", Activation::Softmax),
        ("log_softmax", Activation::LogSoftmax),
        ("elu", Activation::Elu),
        ("selu", Activation::Selu),
        ("gelu", Activation::Gelu),
        ("softplus", Activation::Softplus),
        ("swish", Activation::Swish),
        ("silu", Activation::Swish),
    ];

    /// The activation called `name` (for `layer`'s messages).
    pub fn parse(layer: &'static str, name: &str) -> Result<Activation> {
        Activation::TABLE
            .iter()
            .find(|(known, _)| *known == name)
            .map(|&(_, activation)| activation)
            .ok_or_else(|| {
                Error::usage(
                    layer,
                    format!("{layer}: unknown activation {name:?}; known: {}", names()),
                )
            })
    }

    pub fn apply(self, x: &Tensor) -> Result<Tensor> {
        match self {
            Activation::Linear => Ok(x.clone()),
            Activation::Relu => ops::relu(x),
            Activation::Relu6 => ops::relu6(x),
            Activation::Sigmoid => ops::sigmoid(x),
            Activation::Tanh => ops::tanh(x),
            Activation::Softmax => ops::softmax(x, -1),
            Activation::LogSoftmax => ops::log_softmax(x, -1),
            Activation::Elu => ops::elu(x),
            Activation::Selu => ops::selu(x),
            // Keras 3's gelu is the exact (erf) form unless asked otherwise.
            Activation::Gelu => ops::gelu(x, false),
            Activation::Softplus => ops::softplus(x),
            Activation::Swish => ops::swish(x),
        }
    }
}

fn names() -> String {
    Activation::TABLE
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Keras's `Activation` layer: the named activation of the setting `activation`.
pub struct ActivationLayer;

impl Layer for ActivationLayer {
    fn call(&self, x: &Tensor, _training: bool, settings: &Settings) -> Result<Tensor> {
        settings.activation("activation")?.apply(x)
    }
}
