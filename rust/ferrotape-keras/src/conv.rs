//! Conv2D and DepthwiseConv2D over NHWC images.

use ferrotape_autodiff::core::kernels::Conv2dParams;
use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Error, Result, Tensor, Variable};

use crate::{autocast, Activation};

fn check_image(op: &'static str, x: &Tensor, channels: usize) -> Result<()> {
    if x.rank() != 4 || x.shape()[3] != channels {
        return Err(Error::invalid(
            op,
            format!(
                "expected NHWC images with {channels} channels, received shape {:?}",
                x.shape()
            ),
        ));
    }
    Ok(())
}

/// `activation(conv2d(x, kernel) + bias)`, kernel HWIO.
pub struct Conv2D {
    pub kernel: Variable,
    pub bias: Option<Variable>,
    pub params: Conv2dParams,
    pub activation: Activation,
}

impl Conv2D {
    pub fn call(&self, x: &Tensor) -> Result<Tensor> {
        let kernel = self.kernel.read();
        check_image("Conv2D", x, kernel.shape()[2])?;
        let x = autocast(x, kernel.dtype())?;
        let bias = self.bias.as_ref().map(Variable::read);
        let y = ops::conv2d(&x, &kernel, bias.as_ref(), self.params)?;
        self.activation.apply(&y)
    }
}

/// Each input channel convolved with its own `depth_multiplier` filters; kernel
/// `[h, w, channels, depth_multiplier]`, output channel `c·depth_multiplier + q`.
pub struct DepthwiseConv2D {
    pub kernel: Variable,
    pub bias: Option<Variable>,
    pub params: Conv2dParams,
    pub activation: Activation,
}

impl DepthwiseConv2D {
    pub fn call(&self, x: &Tensor) -> Result<Tensor> {
        let kernel = self.kernel.read();
        let [kh, kw, channels, multiplier] = kernel
            .shape()
            .try_into()
            .map_err(|_| Error::invalid("DepthwiseConv2D", "the kernel must have rank 4"))?;
        check_image("DepthwiseConv2D", x, channels)?;
        let x = autocast(x, kernel.dtype())?;
        let [n, h, w, _] = x.shape().try_into().expect("checked rank 4");
        // One small convolution per channel: the slices and the concatenation are ops, so the
        // gradients route back to each channel and its filters.
        let per_channel = (0..channels)
            .map(|c| {
                let xc = ops::slice(&x, &[0, 0, 0, c], &[n, h, w, 1])?;
                let fc = ops::slice(&kernel, &[0, 0, c, 0], &[kh, kw, 1, multiplier])?;
                ops::conv2d(&xc, &fc, None, self.params)
            })
            .collect::<Result<Vec<_>>>()?;
        let y = ops::concat(&per_channel, -1)?;
        let y = match &self.bias {
            Some(b) => ops::add(&y, &b.read())?,
            None => y,
        };
        self.activation.apply(&y)
    }
}
