//! Dense, Dropout and Embedding.

use ferrotape_autodiff::core::random::{self, StdRng};
use ferrotape_autodiff::core::DType;
use ferrotape_autodiff::{ops, trace};
use ferrotape_autodiff::{Error, Result, Tensor, Variable};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::autocast;
use crate::layer::{Layer, Settings};

/// `activation(x @ kernel + bias)` over the last axis of `x` (leading axes are batch axes).
/// Settings: `activation`.
pub struct Dense {
    pub kernel: Variable,
    pub bias: Option<Variable>,
}

impl Layer for Dense {
    fn call(&self, x: &Tensor, _training: bool, settings: &Settings) -> Result<Tensor> {
        let activation = settings.activation("activation")?;
        let kernel = self.kernel.read();
        let units_in = kernel.shape()[0];
        if x.rank() == 0 || x.shape()[x.rank() - 1] != units_in {
            return Err(Error::invalid(
                "Dense",
                format!(
                    "expected an input whose last axis has {units_in} features, received shape {:?}",
                    x.shape()
                ),
            ));
        }
        let x = autocast(x, kernel.dtype())?;
        // A rank-1 input is one sample: [in] → [1, in] → [out]. Chosen by rank, not by retrying
        // after a failed matmul, which would turn any error of the matmul (Ctrl-C's included)
        // into a reshape error.
        let y = if x.rank() == 1 {
            let row = ops::reshape(&x, &[1, units_in])?;
            let y = ops::matmul(&row, &kernel, false, false)?;
            ops::reshape(&y, &[kernel.shape()[1]])?
        } else {
            ops::matmul(&x, &kernel, false, false)?
        };
        let y = match &self.bias {
            Some(b) => ops::add(&y, &b.read())?,
            None => y,
        };
        activation.apply(&y)
    }
}

/// Inverted dropout: in training, each element is kept with probability `1 - rate` and scaled
/// by `1 / (1 - rate)`; otherwise the identity. Each layer draws from its own seeded stream.
/// Settings: `rate`, and `noise_shape` (axes of length 1 in it share one draw).
pub struct Dropout {
    /// Shared with the replays of a traced step, which draw fresh masks from the same stream.
    rng: Arc<Mutex<StdRng>>,
}

impl Dropout {
    pub fn new(seed: u64) -> Dropout {
        Dropout {
            rng: Arc::new(Mutex::new(random::op_rng(seed, 0x0D_0D))),
        }
    }
}

fn mask_shape(noise_shape: Option<Vec<Option<usize>>>, shape: &[usize]) -> Result<Vec<usize>> {
    let Some(noise) = noise_shape else {
        return Ok(shape.to_vec());
    };
    if noise.len() != shape.len() {
        return Err(Error::invalid(
            "Dropout",
            format!("noise_shape {noise:?} must have the input's rank (input shape {shape:?})"),
        ));
    }
    Ok(noise
        .iter()
        .zip(shape)
        .map(|(n, &s)| n.unwrap_or(s))
        .collect())
}

/// A mask of `1 / (1 - rate)` where a uniform draw is at least `rate`, else 0.
/// The draws are made on the host from the layer's seeded stream whatever the device, so a
/// GPU run drops exactly what a CPU run does; the multiply that applies the mask uploads it
/// (a queued copy: no wait).
fn dropout_mask(rng: &Mutex<StdRng>, shape: &[usize], rate: f64, dtype: DType) -> Result<Tensor> {
    let keep_scale = 1.0 / (1.0 - rate);
    Ok(Tensor::new(random::keep_mask(
        &mut rng.lock(),
        shape,
        rate,
        keep_scale,
        dtype,
    )?))
}

impl Layer for Dropout {
    fn call(&self, x: &Tensor, training: bool, settings: &Settings) -> Result<Tensor> {
        let rate = settings.number("rate")?;
        if !(0.0..1.0).contains(&rate) {
            return Err(Error::invalid(
                "Dropout",
                format!("rate must be in [0, 1), received {rate}"),
            ));
        }
        if !training || rate == 0.0 {
            return Ok(x.clone());
        }
        let dtype = if x.dtype().is_float() {
            x.dtype()
        } else {
            DType::F32
        };
        let x = autocast(x, dtype)?;
        let noise_shape = settings.optional_dims("noise_shape")?;
        let shape = mask_shape(noise_shape.clone(), x.shape())?;
        let mask = dropout_mask(&self.rng, &shape, rate, dtype)?;
        // The mask's shape is found from the input's at every replay, so that a trace can
        // serve other batch sizes (a probe of those draws nothing, see `trace::probing`).
        trace::node1("DropoutMask", &[&x], &mask, move || {
            let rng = self.rng.clone();
            move |t: &[Tensor]| {
                let shape = mask_shape(noise_shape.clone(), t[0].shape())?;
                if trace::probing() {
                    return Ok(Tensor::new(ferrotape_core::Array::zeros(
                        "DropoutMask",
                        dtype,
                        &shape,
                    )?));
                }
                dropout_mask(&rng, &shape, rate, dtype)
            }
        });
        ops::mul(&x, &mask)
    }
}

/// Rows of `embeddings` looked up by integer ids (any shape of ids).
pub struct Embedding {
    pub embeddings: Variable,
}

impl Layer for Embedding {
    fn call(&self, ids: &Tensor, _training: bool, _settings: &Settings) -> Result<Tensor> {
        let ids = if ids.dtype().is_int() {
            ids.clone()
        } else {
            // Keras accepts float ids (casts them to int32).
            ops::cast(ids, DType::I32)?
        };
        ops::gather(&self.embeddings.read(), &ids, 0)
    }
}
