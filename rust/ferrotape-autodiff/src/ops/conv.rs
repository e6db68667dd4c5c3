//! Convolution and pooling over NHWC images.
//!
//! `conv2d` and its two backward passes are three faces of one bilinear form
//! `<conv2d(x, f), dy>`, so each is the derivative of the others: declaring all three as ops,
//! each with its backward written in the other two, gives derivatives of any order. Max pooling
//! is a gather of the windows' maxima (its derivative is the gather's), average pooling and its
//! gradient are each other's adjoints.

use std::sync::Arc;

use ferrotape_core::kernels::{self, Conv2dParams, Window2d};
use ferrotape_core::Result;

use super::{reduce_sum, reshape, take_add};
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
        let input_shape = input_shape.to_vec();
        move |t: &[Tensor]| conv2d_backprop_input(&input_shape, &t[0], &t[1], params)
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
/// of its window: the adjoint of gathering those elements, so higher orders follow the gather.
pub fn max_pool2d(x: &Tensor, window: &Window2d) -> Result<Tensor> {
    let y = Tensor::new(kernels::max_pool(x.value(), window)?);
    trace::node1("MaxPool", &[x], &y, || {
        let window = window.clone();
        move |t: &[Tensor]| max_pool2d(&t[0], &window)
    });
    // The argmax is found only when a tape records the op (a second, cheap pass), so
    // inference pays for the maxima alone.
    record("MaxPool", &[x], &[&y], || {
        let shape: Vec<usize> = x.shape().to_vec();
        // Cannot fail: `y` is max_pool's own output for this `x` and window, and max_pool
        // has already accepted the dtype.
        let index = kernels::max_pool_argmax(x.value(), y.value(), window)
            .expect("the argmax of max_pool's own output");
        let index = Arc::new(index.into_iter().map(Some).collect::<Vec<_>>());
        let (x, window) = (x.clone(), window.clone());
        move |gs: &[Tensor], _: &[bool]| {
            let g = &gs[0];
            let flat = reshape(g, &[g.len()])?;
            let dx = take_add(&flat, 0, index.clone(), shape.iter().product())?;
            let dx = reshape(&dx, &shape)?;
            // The positions are host values read from `x`: a replay finds them again.
            trace::node1("MaxPoolGrad", &[&x, g], &dx, || {
                let window = window.clone();
                move |t: &[Tensor]| max_pool2d_grad(&t[0], &t[1], &window)
            });
            Ok(vec![Some(dx)])
        }
    });
    Ok(y)
}

/// Max pooling's gradient for `x` and output gradient `g` (what a replayed trace runs).
fn max_pool2d_grad(x: &Tensor, g: &Tensor, window: &Window2d) -> Result<Tensor> {
    let y = kernels::max_pool(x.value(), window)?;
    let index = kernels::max_pool_argmax(x.value(), &y, window)?;
    let flat = reshape(g, &[g.len()])?;
    let index = Arc::new(index.into_iter().map(Some).collect::<Vec<_>>());
    let dx = take_add(&flat, 0, index, x.len())?;
    reshape(&dx, x.shape())
}

/// The mean of each window's elements inside the image; d/dx = avg_pool2d_grad(g).
pub fn avg_pool2d(x: &Tensor, window: &Window2d) -> Result<Tensor> {
    let y = Tensor::new(kernels::avg_pool(x.value(), window)?);
    trace::node1("AvgPool", &[x], &y, || {
        let window = window.clone();
        move |t: &[Tensor]| avg_pool2d(&t[0], &window)
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
        move |t: &[Tensor]| avg_pool2d_grad(&t[0], &window)
    });
    record("AvgPoolGrad", &[dy], &[&dx], || {
        let window = window.clone();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(avg_pool2d(&gs[0], &window)?)])
    });
    Ok(dx)
}
