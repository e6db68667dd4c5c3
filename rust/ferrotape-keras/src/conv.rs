//! Conv2D and DepthwiseConv2D over NHWC images.

use ferrotape_autodiff::core::kernels::{Conv2dParams, Padding};
use ferrotape_autodiff::ops;
use ferrotape_autodiff::{Error, Result, Tensor, Variable};

use crate::autocast;
use crate::layer::{Layer, Settings};

/// The convolution settings: `strides`, `dilation_rate`, `padding`.
fn conv_params(op: &'static str, settings: &Settings) -> Result<Conv2dParams> {
    Ok(Conv2dParams {
        stride: settings.pair("strides")?,
        dilation: settings.pair("dilation_rate")?,
        padding: Padding::parse(op, settings.text("padding")?)?,
    })
}

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
/// Settings: `strides`, `dilation_rate`, `padding`, `activation`.
pub struct Conv2D {
    pub kernel: Variable,
    pub bias: Option<Variable>,
}

impl Layer for Conv2D {
    fn call(&self, x: &Tensor, _training: bool, settings: &Settings) -> Result<Tensor> {
        let params = conv_params("Conv2D", settings)?;
        let activation = settings.activation("activation")?;
        let kernel = self.kernel.read();
        check_image("Conv2D", x, kernel.shape()[2])?;
        let x = autocast(x, kernel.dtype())?;
        let bias = self.bias.as_ref().map(Variable::read);
        let y = ops::conv2d(&x, &kernel, bias.as_ref(), params)?;
        activation.apply(&y)
    }
}

/// Each input channel convolved with its own `depth_multiplier` filters; kernel
/// `[h, w, channels, depth_multiplier]`, output channel `c·depth_multiplier + q`.
/// Settings: `strides`, `dilation_rate`, `padding`, `activation`.
pub struct DepthwiseConv2D {
    pub kernel: Variable,
    pub bias: Option<Variable>,
}

impl Layer for DepthwiseConv2D {
    fn call(&self, x: &Tensor, _training: bool, settings: &Settings) -> Result<Tensor> {
        let params = conv_params("DepthwiseConv2D", settings)?;
        let activation = settings.activation("activation")?;
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
                ops::conv2d(&xc, &fc, None, params)
            })
            .collect::<Result<Vec<_>>>()?;
        let y = ops::concat(&per_channel, -1)?;
        let y = match &self.bias {
            Some(b) => ops::add(&y, &b.read())?,
            None => y,
        };
        activation.apply(&y)
    }
}
