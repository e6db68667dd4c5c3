//! Convolution and pooling over NHWC images.
//!
//! `conv2d` and its two backward passes are three faces of one bilinear form
//! `<conv2d(x, f), dy>`, so each is the derivative of the others: declaring all three as ops,
//! each with its backward written in the other two, gives derivatives of any order. Max pooling
//! is a gather of the windows' maxima: its gradient (a scatter to each window's first maximum)
//! and that gradient's adjoint (the gather again, of a tensor shaped as the input) are each
//! other's derivatives, and both find the maxima from the saved input and output with a device
//! kernel rather than carrying host indices. Average pooling and its gradient are each other's
//! adjoints.

use ferrotape_core::kernels::{self, Conv2dParams, Window2d};
use ferrotape_core::Result;

use super::reduce_sum;
use crate::tape::record;
use crate::tensor::Tensor;
use crate::trace;

/// NHWC `x` convolved with HWIO `filter`, plus `bias` (`[out_channels]`) when given: one op,
/// so the bias costs no pass of its own over the output.
/// d/dx = conv2d_backprop_input(dy), d/dfilter = conv2d_backprop_filter(x, dy),
/// d/dbias = dy summed over batch, rows and columns.
pub fn conv2d(
    x: &Tensor,
    filter: &Tensor,
    bias: Option<&Tensor>,
    params: Conv2dParams,
) -> Result<Tensor> {
    let y = Tensor::new(kernels::conv2d(
        x.value(),
        filter.value(),
        bias.map(Tensor::value),
        &params,
    )?);
    match bias {
        Some(b) => trace::node1("Conv2D", &[x, filter, b], &y, || {
            move |t: &[Tensor]| conv2d(&t[0], &t[1], Some(&t[2]), params)
        }),
        None => trace::node1("Conv2D", &[x, filter], &y, || {
            move |t: &[Tensor]| conv2d(&t[0], &t[1], None, params)
        }),
    }
    let mut inputs = vec![x, filter];
    inputs.extend(bias);
    record("Conv2D", &inputs, &[&y], || {
        let (x, filter) = (x.clone(), filter.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let dx = needs[0]
                .then(|| conv2d_backprop_input(x.shape(), &filter, g, params))
                .transpose()?;
            let df = needs[1]
                .then(|| conv2d_backprop_filter(&x, filter.shape(), g, params))
                .transpose()?;
            let mut grads = vec![dx, df];
            if let Some(&needs_bias) = needs.get(2) {
                grads.push(
                    needs_bias
                        .then(|| reduce_sum(g, Some(&[0, 1, 2]), false))
                        .transpose()?,
                );
            }
            Ok(grads)
        }
    });
    Ok(y)
}

/// The input gradient of [`conv2d`] for output gradient `dy`; linear in `filter` and in `dy`:
/// d/dfilter = conv2d_backprop_filter(g, dy), d/ddy = conv2d(g, filter).
pub fn conv2d_backprop_input(
    input_shape: &[usize],
    filter: &Tensor,
    dy: &Tensor,
    params: Conv2dParams,
) -> Result<Tensor> {
    let dx = Tensor::new(kernels::conv2d_backprop_input(
        input_shape,
        filter.value(),
        dy.value(),
        &params,
    )?);
    trace::node1("Conv2DBackpropInput", &[filter, dy], &dx, || {
        let (input_shape, dy_shape): (Vec<usize>, Vec<usize>) =
            (input_shape.to_vec(), dy.shape().to_vec());
        move |t: &[Tensor]| {
            // Only the batch may differ from the trace's: the input's rows and columns are
            // not determined by the gradient's (strides round them).
            if t[1].shape().get(1..) != dy_shape.get(1..) {
                return Err(ferrotape_core::Error::invalid(
                    "Conv2DBackpropInput",
                    "a replay at other sizes changed the image size",
                ));
            }
            let mut input_shape = input_shape.clone();
            input_shape[0] = t[1].shape()[0];
            conv2d_backprop_input(&input_shape, &t[0], &t[1], params)
        }
    });
    record("Conv2DBackpropInput", &[filter, dy], &[&dx], || {
        let (filter, dy) = (filter.clone(), dy.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let df = needs[0]
                .then(|| conv2d_backprop_filter(g, filter.shape(), &dy, params))
                .transpose()?;
            let ddy = needs[1]
                .then(|| conv2d(g, &filter, None, params))
                .transpose()?;
            Ok(vec![df, ddy])
        }
    });
    Ok(dx)
}

/// The filter gradient of [`conv2d`] for output gradient `dy`; linear in `x` and in `dy`:
/// d/dx = conv2d_backprop_input(g, dy), d/ddy = conv2d(x, g).
pub fn conv2d_backprop_filter(
    x: &Tensor,
    filter_shape: &[usize],
    dy: &Tensor,
    params: Conv2dParams,
) -> Result<Tensor> {
    let df = Tensor::new(kernels::conv2d_backprop_filter(
        x.value(),
        filter_shape,
        dy.value(),
        &params,
    )?);
    trace::node1("Conv2DBackpropFilter", &[x, dy], &df, || {
        let filter_shape = filter_shape.to_vec();
        move |t: &[Tensor]| conv2d_backprop_filter(&t[0], &filter_shape, &t[1], params)
    });
    record("Conv2DBackpropFilter", &[x, dy], &[&df], || {
        let (x, dy) = (x.clone(), dy.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let g = &gs[0];
            let dx = needs[0]
                .then(|| conv2d_backprop_input(x.shape(), g, &dy, params))
                .transpose()?;
            let ddy = needs[1].then(|| conv2d(&x, g, None, params)).transpose()?;
            Ok(vec![dx, ddy])
        }
    });
    Ok(df)
}

/// The maximum of each window (padding ignored). d/dx sends each gradient to the first maximum
/// of its window (`max_pool2d_grad`), whose own derivative gathers from the same positions.
pub fn max_pool2d(x: &Tensor, window: &Window2d) -> Result<Tensor> {
    let y = Tensor::new(kernels::max_pool(x.value(), window)?);
    trace::node1("MaxPool", &[x], &y, || {
        let window = window.clone();
        move |t: &[Tensor]| max_pool2d(&t[0], &at_batch(OP_MAX, &window, &t[0], Side::Input)?)
    });
    // Saves its input and output: the backward pass finds each window's maximum again from
    // them (on the device where they live), so recording costs the forward pass nothing.
    record("MaxPool", &[x], &[&y], || {
        let (x, y, window) = (x.clone(), y.clone(), window.clone());
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(max_pool2d_grad(&x, &y, &gs[0], &window)?)])
    });
    Ok(y)
}

/// Max pooling's gradient for `x`, its pooled `y` and output gradient `dy`: each `dy` added to
/// the first maximum of its window. Linear in `dy`: d/ddy = max_pool2d_grad_grad(x, y, g).
/// `x` and `y` only choose where the gradient goes, a piecewise-constant choice: they get no
/// gradient (TensorFlow's `MaxPoolGrad` gives them zeros).
pub fn max_pool2d_grad(x: &Tensor, y: &Tensor, dy: &Tensor, window: &Window2d) -> Result<Tensor> {
    let dx = Tensor::new(kernels::max_pool_grad(
        x.value(),
        y.value(),
        dy.value(),
        window,
    )?);
    trace::node1("MaxPoolGrad", &[x, y, dy], &dx, || {
        let window = window.clone();
        move |t: &[Tensor]| {
            max_pool2d_grad(
                &t[0],
                &t[1],
                &t[2],
                &at_batch(OP_MAX, &window, &t[0], Side::Input)?,
            )
        }
    });
    record("MaxPoolGrad", &[x, y, dy], &[&dx], || {
        let (x, y, window) = (x.clone(), y.clone(), window.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let ddy = needs[2]
                .then(|| max_pool2d_grad_grad(&x, &y, &gs[0], &window))
                .transpose()?;
            Ok(vec![None, None, ddy])
        }
    });
    Ok(dx)
}

/// The adjoint of [`max_pool2d_grad`] in `dy`: each window's element of `g` (shaped as `x`) at
/// the window's first maximum, shaped as `y`. d/dg = max_pool2d_grad(x, y, gg); `x` and `y`
/// get none, as in [`max_pool2d_grad`].
pub fn max_pool2d_grad_grad(
    x: &Tensor,
    y: &Tensor,
    g: &Tensor,
    window: &Window2d,
) -> Result<Tensor> {
    let out = Tensor::new(kernels::max_pool_grad_grad(
        x.value(),
        y.value(),
        g.value(),
        window,
    )?);
    trace::node1("MaxPoolGradGrad", &[x, y, g], &out, || {
        let window = window.clone();
        move |t: &[Tensor]| {
            let window = at_batch(OP_MAX, &window, &t[0], Side::Input)?;
            max_pool2d_grad_grad(&t[0], &t[1], &t[2], &window)
        }
    });
    record("MaxPoolGradGrad", &[x, y, g], &[&out], || {
        let (x, y, window) = (x.clone(), y.clone(), window.clone());
        move |gs: &[Tensor], needs: &[bool]| {
            let dg = needs[2]
                .then(|| max_pool2d_grad(&x, &y, &gs[0], &window))
                .transpose()?;
            Ok(vec![None, None, dg])
        }
    });
    Ok(out)
}

/// The mean of each window's elements inside the image; d/dx = avg_pool2d_grad(g).
pub fn avg_pool2d(x: &Tensor, window: &Window2d) -> Result<Tensor> {
    let y = Tensor::new(kernels::avg_pool(x.value(), window)?);
    trace::node1("AvgPool", &[x], &y, || {
        let window = window.clone();
        move |t: &[Tensor]| avg_pool2d(&t[0], &at_batch("AvgPool", &window, &t[0], Side::Input)?)
    });
    record("AvgPool", &[x], &[&y], || {
        let window = window.clone();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(avg_pool2d_grad(&gs[0], &window)?)])
    });
    Ok(y)
}

/// The adjoint of [`avg_pool2d`]: each gradient spread evenly over its window; d/dg = avg_pool2d.
pub fn avg_pool2d_grad(dy: &Tensor, window: &Window2d) -> Result<Tensor> {
    let dx = Tensor::new(kernels::avg_pool_grad(dy.value(), window)?);
    trace::node1("AvgPoolGrad", &[dy], &dx, || {
        let window = window.clone();
        move |t: &[Tensor]| {
            avg_pool2d_grad(
                &t[0],
                &at_batch("AvgPoolGrad", &window, &t[0], Side::Output)?,
            )
        }
    });
    record("AvgPoolGrad", &[dy], &[&dx], || {
        let window = window.clone();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(avg_pool2d(&gs[0], &window)?)])
    });
    Ok(dx)
}

/// The op name of max pooling and its gradients in [`at_batch`]'s errors.
const OP_MAX: &str = "MaxPool";

/// Which tensor of a pooling a replay reads the batch from.
enum Side {
    /// The pooled image (shaped `[batch, in_h, in_w, channels]`).
    Input,
    /// The pooled result or its gradient (`[batch, out_h, out_w, channels]`).
    Output,
}

/// `window` for `t`'s batch: a replayed pooling at another batch size (see `trace::sizes`).
/// The rows, columns and channels must be the window's; an image of another size is an error.
fn at_batch(op: &'static str, window: &Window2d, t: &Tensor, side: Side) -> Result<Window2d> {
    let expected = match side {
        Side::Input => [window.in_h, window.in_w, window.channels],
        Side::Output => [window.out_h, window.out_w, window.channels],
    };
    if t.rank() != 4 || t.shape()[1..] != expected {
        return Err(ferrotape_core::Error::invalid(
            op,
            format!(
                "a replay received an image of shape {:?} where the trace pooled [batch, {}, {}, {}]",
                t.shape(),
                expected[0],
                expected[1],
                expected[2]
            ),
        ));
    }
    let mut window = window.clone();
    window.batch = t.shape()[0];
    Ok(window)
}
