//! The activations a layer can apply inside its own call (`Dense(..., activation="relu")`).

use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Error, Result, Tensor};

/// An activation known by name; anything else is applied by the Python front end after the
/// layer's call.
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
    /// Keras's names (`None` and `"linear"` are the identity).
    pub fn parse(name: Option<&str>) -> Result<Activation> {
        Ok(match name.unwrap_or("linear") {
            "linear" => Activation::Linear,
            "relu" => Activation::Relu,
            "relu6" => Activation::Relu6,
            "sigmoid" => Activation::Sigmoid,
            "tanh" => Activation::Tanh,
            "softmax" => Activation::Softmax,
            "log_softmax" => Activation::LogSoftmax,
            "elu" => Activation::Elu,
            "selu" => Activation::Selu,
            "gelu" => Activation::Gelu,
            "softplus" => Activation::Softplus,
            "swish" | "silu" => Activation::Swish,
            other => {
                return Err(Error::invalid(
                    "Activation",
                    format!("unknown activation {other:?}"),
                ))
            }
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
