//! 2-D max and average pooling over NHWC images, on the window geometry of [`Window2d`].
//!
//! Max pooling's gradient routes each output gradient to its window's first maximum, found
//! again from the input and the pooled output ([`max_pool_grad`]); its adjoint gathers from
//! the same positions ([`max_pool_grad_grad`]). Neither hands out indices, so a device backend
//! computes both where the tensors live. Each public kernel checks its shapes, then offers
//! the call to the device seam (`crate::device`) before running here.

use rayon::prelude::*;

use super::cast;
use super::conv::{check_output_gradient, float_kernel, GemmFloat, Window2d};
use crate::{device, interrupt, simd, Array, Buffer, DType, Error, Result};

/// Whether `v` replaces `best` as a window's maximum: larger, or a NaN over a number (NaN
/// propagates, as in TensorFlow); ties keep the first. Branch-free, so the channel loop
/// vectorises.
#[inline(always)]
fn beats<T: GemmFloat>(v: T, best: T) -> bool {
    (v > best) | (v.is_nan() & !best.is_nan())
}

/// One image's window maxima (`out`: `positions × channels`).
#[inline(always)] // into `simd::dispatch`'s wide-vector function
fn max_pool_image<T: GemmFloat>(w: &Window2d, image: &[T], out: &mut [T]) {
    let c = w.channels;
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let best = &mut out[(oy * w.out_w + ox) * c..][..c];
            let mut first = true;
            w.taps_at(
                oy,
                ox,
                #[inline(always)]
                |_, pixel| {
                    let window = &image[pixel * c..(pixel + 1) * c];
                    if first {
                        best.copy_from_slice(window);
                        first = false;
                        return;
                    }
                    for (b, &v) in best.iter_mut().zip(window) {
                        *b = if beats(v, *b) { v } else { *b };
                    }
                },
            );
        }
    }
}

/// For each of one image's outputs, the flat index (offset by `base`) of the first element of
/// its window equal to the maximum `y` found (NaN matching NaN): the argmax, recomputed only
/// when a tape needs it.
#[inline(always)] // into `simd::dispatch`'s wide-vector function
fn max_pool_argmax_image<T: GemmFloat>(
    w: &Window2d,
    image: &[T],
    y: &[T],
    base: usize,
    index: &mut [usize],
) {
    let c = w.channels;
    let mut found = vec![false; c];
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let o = (oy * w.out_w + ox) * c;
            let (best, at) = (&y[o..o + c], &mut index[o..o + c]);
            found.fill(false);
            w.taps_at(oy, ox, |_, pixel| {
                let window = &image[pixel * c..(pixel + 1) * c];
                for ch in 0..c {
                    let (v, b) = (window[ch], best[ch]);
                    if !found[ch] && (v == b || (v.is_nan() && b.is_nan())) {
                        found[ch] = true;
                        at[ch] = base + pixel * c + ch;
                    }
                }
            });
        }
    }
}

/// Runs `f(image, output chunk, n)` over the batch's images, in parallel for large inputs.
fn per_image<T: GemmFloat, U: Send>(
    w: &Window2d,
    x: &[T],
    out: &mut [U],
    f: impl Fn(&[T], &mut [U], usize) + Sync,
) {
    let per_image = w.out_positions() * w.channels;
    if per_image == 0 {
        return;
    }
    let image = |n: usize| &x[n * w.image_len()..(n + 1) * w.image_len()];
    if x.len() >= super::PARALLEL_THRESHOLD {
        out.par_chunks_mut(per_image)
            .enumerate()
            .for_each(|(n, o)| {
                if interrupt::requested() {
                    return;
                }
                simd::dispatch(
                    #[inline(always)]
                    || f(image(n), o, n),
                )
            });
    } else {
        simd::dispatch(
            #[inline(always)]
            || {
                for (n, o) in out.chunks_mut(per_image).enumerate() {
                    if interrupt::requested() {
                        break;
                    }
                    f(image(n), o, n);
                }
            },
        );
    }
}

fn max_pool_typed<T: GemmFloat>(w: &Window2d, x: &[T]) -> Vec<T> {
    let mut out = vec![T::zero(); w.batch * w.out_positions() * w.channels];
    per_image(
        w,
        x,
        &mut out,
        #[inline(always)]
        |image, o, _| max_pool_image(w, image, o),
    );
    out
}

fn max_pool_argmax_typed<T: GemmFloat>(w: &Window2d, x: &[T], y: &[T]) -> Vec<usize> {
    let per_image_out = w.out_positions() * w.channels;
    let mut index = vec![0usize; w.batch * per_image_out];
    per_image(
        w,
        x,
        &mut index,
        #[inline(always)]
        |image, at, n| {
            let y = &y[n * per_image_out..(n + 1) * per_image_out];
            max_pool_argmax_image(w, image, y, n * w.image_len(), at)
        },
    );
    index
}

/// Max pooling: the maximum of each window (padding ignored).
pub fn max_pool(x: &Array, w: &Window2d) -> Result<Array> {
    const OP: &str = "MaxPool";
    if let Some(r) = device::dispatch([x], |d, [x]| d.max_pool(x, w)) {
        return r;
    }
    let shape = [w.batch, w.out_h, w.out_w, w.channels];
    let x = x.contiguous();
    let pooled = match x.buffer() {
        Buffer::F32(_) => Array::from_vec(
            max_pool_typed::<f32>(w, x.contiguous_slice().expect("contiguous")),
            &shape,
        ),
        Buffer::F64(_) => Array::from_vec(
            max_pool_typed::<f64>(w, x.contiguous_slice().expect("contiguous")),
            &shape,
        ),
        Buffer::F16(_) | Buffer::BF16(_) => cast(&max_pool(&cast(&x, DType::F32)?, w)?, x.dtype()),
        _ => Err(Error::unsupported(OP, x.dtype(), "a floating-point dtype")),
    }?;
    interrupt::check(OP)?;
    Ok(pooled)
}

/// For each element of `y = max_pool(x, w)`, the flat row-major index of the input element it
/// took: the first maximum of its window (what the backward pass routes the gradient to).
fn max_pool_argmax(x: &Array, y: &Array, w: &Window2d) -> Result<Vec<usize>> {
    const OP: &str = "MaxPoolGrad";
    check_pooled(OP, x, y, w)?;
    let (x, y) = (x.contiguous(), y.contiguous());
    match x.buffer() {
        Buffer::F32(_) => Ok(max_pool_argmax_typed::<f32>(
            w,
            x.contiguous_slice().expect("contiguous"),
            y.contiguous_slice().expect("contiguous"),
        )),
        Buffer::F64(_) => Ok(max_pool_argmax_typed::<f64>(
            w,
            x.contiguous_slice().expect("contiguous"),
            y.contiguous_slice().expect("contiguous"),
        )),
        // Half values widen to f32 exactly, so equality with the maximum is unchanged.
        Buffer::F16(_) | Buffer::BF16(_) => {
            max_pool_argmax(&cast(&x, DType::F32)?, &cast(&y, DType::F32)?, w)
        }
        _ => Err(Error::unsupported(OP, x.dtype(), "a floating-point dtype")),
    }
}

/// Checks `x` (the pooled input of `w`'s shape) and `y` (its pooled output) of one dtype.
fn check_pooled(op: &'static str, x: &Array, y: &Array, w: &Window2d) -> Result<()> {
    let x_shape = [w.batch, w.in_h, w.in_w, w.channels];
    if x.shape() != x_shape {
        return Err(Error::invalid(
            op,
            format!(
                "expected the pooled input of shape {x_shape:?}, received {:?}",
                x.shape()
            ),
        ));
    }
    if y.shape() != [w.batch, w.out_h, w.out_w, w.channels] || x.dtype() != y.dtype() {
        return Err(Error::invalid(
            op,
            format!(
                "expected the pooled output of shape {:?} and dtype {}, received {:?} {}",
                [w.batch, w.out_h, w.out_w, w.channels],
                x.dtype(),
                y.shape(),
                y.dtype()
            ),
        ));
    }
    Ok(())
}

/// The gradient of [`max_pool`] (TensorFlow's `MaxPoolGrad`): each element of `dy` added to
/// the first maximum of its window of `x`, given `y = max_pool(x, w)`; shaped as `x`.
pub fn max_pool_grad(x: &Array, y: &Array, dy: &Array, w: &Window2d) -> Result<Array> {
    const OP: &str = "MaxPoolGrad";
    check_pooled(OP, x, y, w)?;
    check_output_gradient(OP, w, w.channels, dy)?;
    if dy.dtype() != x.dtype() {
        return Err(Error::mismatch(OP, x.dtype(), dy.dtype()));
    }
    if let Some(r) = device::dispatch([x, y, dy], |d, [x, y, dy]| d.max_pool_grad(x, y, dy, w)) {
        return r;
    }
    let index = max_pool_argmax(x, y, w)?;
    // Added in output order, so overlapping windows sum as the gradient of a gather does.
    fn route<T: GemmFloat>(index: &[usize], dy: &[T], len: usize) -> Vec<T> {
        let mut dx = vec![T::zero(); len];
        for (&i, &g) in index.iter().zip(dy) {
            dx[i] = dx[i] + g;
        }
        dx
    }
    float_kernel(
        OP,
        [dy, dy],
        x.shape(),
        |g, _| route(&index, g, x.len()),
        |g, _| route(&index, g, x.len()),
    )
}

/// The adjoint of [`max_pool_grad`] in `dy` (TensorFlow's `MaxPoolGradGrad`): for each window
/// of `x`, the element of `g` (shaped as `x`) at the window's first maximum; shaped as `y`.
pub fn max_pool_grad_grad(x: &Array, y: &Array, g: &Array, w: &Window2d) -> Result<Array> {
    const OP: &str = "MaxPoolGradGrad";
    check_pooled(OP, x, y, w)?;
    if g.shape() != x.shape() || g.dtype() != x.dtype() {
        return Err(Error::invalid(
            OP,
            format!(
                "expected a gradient of the input's shape {:?} and dtype {}, received {:?} {}",
                x.shape(),
                x.dtype(),
                g.shape(),
                g.dtype()
            ),
        ));
    }
    if let Some(r) = device::dispatch([x, y, g], |d, [x, y, g]| d.max_pool_grad_grad(x, y, g, w)) {
        return r;
    }
    let index = max_pool_argmax(x, y, w)?;
    float_kernel(
        OP,
        [g, g],
        y.shape(),
        |g, _| index.iter().map(|&i| g[i]).collect(),
        |g, _| index.iter().map(|&i| g[i]).collect(),
    )
}

fn avg_pool_counts(w: &Window2d) -> Vec<f64> {
    let mut counts = vec![0.0; w.out_positions()];
    w.for_each_tap(|out, _, _| counts[out] += 1.0);
    counts
}

fn avg_pool_typed<T: GemmFloat>(w: &Window2d, x: &[T]) -> Vec<T> {
    let c = w.channels;
    let positions = w.out_positions();
    let counts = avg_pool_counts(w);
    let mut out = vec![T::zero(); w.batch * positions * c];
    for n in 0..w.batch {
        let image = &x[n * w.image_len()..(n + 1) * w.image_len()];
        let dst = &mut out[n * positions * c..(n + 1) * positions * c];
        w.for_each_tap(|o, _, pixel| {
            for ch in 0..c {
                dst[o * c + ch] = dst[o * c + ch] + image[pixel * c + ch];
            }
        });
        for (o, count) in counts.iter().enumerate() {
            let scale = T::from(1.0 / count).expect("a float");
            dst[o * c..o * c + c]
                .iter_mut()
                .for_each(|v| *v = *v * scale);
        }
    }
    out
}

fn avg_pool_grad_typed<T: GemmFloat>(w: &Window2d, dy: &[T]) -> Vec<T> {
    let c = w.channels;
    let positions = w.out_positions();
    let counts = avg_pool_counts(w);
    let mut dx = vec![T::zero(); w.batch * w.image_len()];
    for n in 0..w.batch {
        let g = &dy[n * positions * c..(n + 1) * positions * c];
        let dst = &mut dx[n * w.image_len()..(n + 1) * w.image_len()];
        w.for_each_tap(|o, _, pixel| {
            let scale = T::from(1.0 / counts[o]).expect("a float");
            for ch in 0..c {
                dst[pixel * c + ch] = dst[pixel * c + ch] + g[o * c + ch] * scale;
            }
        });
    }
    dx
}

/// Average pooling; `same` padding averages only the elements inside the image (TensorFlow).
pub fn avg_pool(x: &Array, w: &Window2d) -> Result<Array> {
    if let Some(r) = device::dispatch([x], |d, [x]| d.avg_pool(x, w)) {
        return r;
    }
    let shape = [w.batch, w.out_h, w.out_w, w.channels];
    float_kernel(
        "AvgPool",
        [x, x],
        &shape,
        |x, _| avg_pool_typed(w, x),
        |x, _| avg_pool_typed(w, x),
    )
}

/// The gradient of `avg_pool`: each output gradient spread evenly over its window.
pub fn avg_pool_grad(dy: &Array, w: &Window2d) -> Result<Array> {
    const OP: &str = "AvgPoolGrad";
    check_output_gradient(OP, w, w.channels, dy)?;
    if let Some(r) = device::dispatch([dy], |d, [dy]| d.avg_pool_grad(dy, w)) {
        return r;
    }
    let shape = [w.batch, w.in_h, w.in_w, w.channels];
    float_kernel(
        OP,
        [dy, dy],
        &shape,
        |g, _| avg_pool_grad_typed(w, g),
        |g, _| avg_pool_grad_typed(w, g),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Padding;

    #[test]
    fn pooling_takes_the_first_maximum_and_averages_inside_the_image() {
        let x = Array::from_vec(
            vec![1.0f32, 3.0, 3.0, 2.0, 0.0, 5.0, 4.0, 4.0, 1.0],
            &[1, 3, 3, 1],
        )
        .unwrap();
        let w = Window2d::new("t", x.shape(), [2, 2], [2, 2], [1, 1], Padding::Same).unwrap();
        let values = max_pool(&x, &w).unwrap();
        let index = max_pool_argmax(&x, &values, &w).unwrap();
        assert_eq!(index, vec![1, 5, 6, 8]);
        assert_eq!(values.to_vec::<f32>(), vec![3.0, 5.0, 4.0, 1.0]);
        // A NaN in a window wins, wherever it sits, and is where the gradient goes.
        let with_nan = Array::from_vec(vec![1.0f32, 7.0, f32::NAN, 2.0], &[1, 2, 2, 1]).unwrap();
        let w1 = Window2d::new("t", &[1, 2, 2, 1], [2, 2], [2, 2], [1, 1], Padding::Valid).unwrap();
        let y = max_pool(&with_nan, &w1).unwrap();
        assert!(y.to_vec::<f32>()[0].is_nan());
        assert_eq!(max_pool_argmax(&with_nan, &y, &w1).unwrap(), vec![2]);
        let avg = avg_pool(&x, &w).unwrap().to_vec::<f32>();
        assert_eq!(avg, vec![1.5, 4.0, 4.0, 1.0]);
        // The gradient is the adjoint of the pooling.
        let dy = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 2, 2, 1]).unwrap();
        let dx = avg_pool_grad(&dy, &w).unwrap().to_vec::<f32>();
        let lhs: f32 = avg
            .iter()
            .zip([1.0, 2.0, 3.0, 4.0])
            .map(|(a, b)| a * b)
            .sum();
        let rhs: f32 = x.to_vec::<f32>().iter().zip(&dx).map(|(a, b)| a * b).sum();
        assert!((lhs - rhs).abs() < 1e-5);
    }

    #[test]
    fn max_pool_gradients_route_through_the_first_maximum_and_are_adjoint() {
        // Overlapping 2x2 windows (stride 1) over a 3x3 image with ties: the top-left window
        // holds 3 twice and takes the first; both windows on the right share the 5.
        let x = Array::from_vec(
            vec![1.0f32, 3.0, 3.0, 2.0, 0.0, 5.0, 4.0, 4.0, 1.0],
            &[1, 3, 3, 1],
        )
        .unwrap();
        let w = Window2d::new("t", x.shape(), [2, 2], [1, 1], [1, 1], Padding::Valid).unwrap();
        let y = max_pool(&x, &w).unwrap();
        let dy = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 2, 2, 1]).unwrap();
        let dx = max_pool_grad(&x, &y, &dy, &w).unwrap();
        assert_eq!(
            dx.to_vec::<f32>(),
            vec![0.0, 1.0, 0.0, 0.0, 0.0, 6.0, 3.0, 0.0, 0.0]
        );
        let g = Array::from_vec((1..=9).map(|v| v as f32).collect(), &[1, 3, 3, 1]).unwrap();
        let gathered = max_pool_grad_grad(&x, &y, &g, &w).unwrap();
        assert_eq!(gathered.to_vec::<f32>(), vec![2.0, 6.0, 7.0, 6.0]);
        // <max_pool_grad(dy), g> = <dy, max_pool_grad_grad(g)>.
        let dot = |a: &Array, b: &Array| -> f32 {
            a.to_vec::<f32>()
                .iter()
                .zip(b.to_vec::<f32>())
                .map(|(p, q)| p * q)
                .sum()
        };
        assert_eq!(dot(&dx, &g), dot(&dy, &gathered));
        // Half precision goes through float32.
        let half = |a: &Array| cast(a, DType::F16).unwrap();
        let dx16 = max_pool_grad(&half(&x), &half(&y), &half(&dy), &w).unwrap();
        assert_eq!(dx16.dtype(), DType::F16);
        assert_eq!(
            cast(&dx16, DType::F32).unwrap().to_vec::<f32>(),
            dx.to_vec::<f32>()
        );
        // A gradient of the wrong shape is refused, naming the op.
        let err = max_pool_grad(&x, &y, &g, &w).unwrap_err();
        assert!(err.to_string().contains("MaxPoolGrad"), "{err}");
        let err = max_pool_grad_grad(&x, &y, &dy, &w).unwrap_err();
        assert!(err.to_string().contains("MaxPoolGradGrad"), "{err}");
    }
}
