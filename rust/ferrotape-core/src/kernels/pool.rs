//! 2-D max and average pooling over NHWC images, on the window geometry of [`Window2d`].
//!
//! Max pooling's gradient routes each output gradient to its window's first maximum, found
//! again from the input and the pooled output ([`max_pool_grad`]); its adjoint gathers from
//! the same positions ([`max_pool_grad_grad`]). Neither hands out indices, so a device backend
//! computes both where the tensors live. The gradient is one pass per image that compares
//! each window's taps with its maximum and places the gradient at the first match; where the
//! windows do not overlap (stride at least the window, as in a CNN's 2×2 pooling) it writes
//! every input element once, else it adds into a zeroed image. Each public kernel checks its
//! shapes, then offers the call to the device seam (`crate::device`) before running here.

use rayon::prelude::*;

use super::cast;
use super::conv::{check_output_gradient, float_kernel, GemmFloat, Window2d};
use crate::{device, interrupt, pool, simd, Array, Buffer, DType, Element, Error, Result};

/// Whether `v` replaces `best` as a window's maximum: larger, or a NaN over a number (NaN
/// propagates, as in TensorFlow); ties keep the first. Branch-free, so the channel loop
/// vectorises.
#[inline(always)]
fn beats<T: GemmFloat>(v: T, best: T) -> bool {
    (v > best) | (v.is_nan() & !best.is_nan())
}

/// The taps of every output row and column that land inside the image, found once per call:
/// [`Window2d::taps_at`] finds them per window, with divisions that cost more than a small
/// window's work.
struct Taps {
    /// For each output row: the first input row under it and how many (every `step[0]`th).
    rows: Vec<(usize, usize)>,
    /// The same for each output column.
    cols: Vec<(usize, usize)>,
    step: [usize; 2],
    in_w: usize,
}

impl Taps {
    fn new(w: &Window2d) -> Taps {
        let axis = |outputs: usize, axis: usize, pad: usize| -> Vec<(usize, usize)> {
            (0..outputs)
                .map(|o| {
                    let k = w.taps_inside(o, axis);
                    if k.is_empty() {
                        return (0, 0);
                    }
                    let first = o * w.stride[axis] + k.start * w.dilation[axis] - pad;
                    (first, k.len())
                })
                .collect()
        };
        Taps {
            rows: axis(w.out_h, 0, w.pad_top),
            cols: axis(w.out_w, 1, w.pad_left),
            step: w.dilation,
            in_w: w.in_w,
        }
    }

    /// Calls `f(input_pixel)` for output (`oy`, `ox`)'s taps inside the image, in the row-major
    /// order of the window (the order that decides which of tied maxima is first).
    #[inline(always)]
    fn each(&self, oy: usize, ox: usize, mut f: impl FnMut(usize)) {
        let ((y0, ny), (x0, nx)) = (self.rows[oy], self.cols[ox]);
        for ky in 0..ny {
            let row = (y0 + ky * self.step[0]) * self.in_w + x0;
            for kx in 0..nx {
                f(row + kx * self.step[1]);
            }
        }
    }
}

/// `best` (one window's running maxima) updated with the next tap's `values`; separate
/// borrows, so the loop vectorises without checks for overlap.
#[inline(always)]
fn keep_max<T: GemmFloat>(best: &mut [T], values: &[T]) {
    let values = &values[..best.len()];
    for (b, &v) in best.iter_mut().zip(values) {
        *b = if beats(v, *b) { v } else { *b };
    }
}

/// Channels [`max_pool_image`] carries in registers across a window's taps.
const CHANNEL_BLOCK: usize = 16;

/// One image's window maxima (`out`: `positions × channels`).
///
/// Whole blocks of [`CHANNEL_BLOCK`] channels keep their running maxima in registers over the
/// window's taps and are stored once; a loop over a run-time number of channels instead
/// compiled to narrow vectors with the maxima going through memory at every tap.
#[inline(always)] // into `simd::dispatch`'s wide-vector function
fn max_pool_image<T: GemmFloat>(w: &Window2d, taps: &Taps, image: &[T], out: &mut [T]) {
    let c = w.channels;
    let blocked = c / CHANNEL_BLOCK * CHANNEL_BLOCK;
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let pixel_out = &mut out[(oy * w.out_w + ox) * c..][..c];
            for c0 in (0..blocked).step_by(CHANNEL_BLOCK) {
                // Every tap beats -inf or equals it, so starting there takes the first tap's
                // values as the first tap would: no special case to branch on.
                let mut best = [T::neg_infinity(); CHANNEL_BLOCK];
                taps.each(
                    oy,
                    ox,
                    #[inline(always)]
                    |pixel| {
                        let values: &[T; CHANNEL_BLOCK] = image[pixel * c + c0..][..CHANNEL_BLOCK]
                            .try_into()
                            .expect("a block of channels");
                        for (b, &v) in best.iter_mut().zip(values) {
                            *b = if beats(v, *b) { v } else { *b };
                        }
                    },
                );
                pixel_out[c0..c0 + CHANNEL_BLOCK].copy_from_slice(&best);
            }
            let best = &mut pixel_out[blocked..];
            if best.is_empty() {
                continue;
            }
            let mut first = true;
            taps.each(
                oy,
                ox,
                #[inline(always)]
                |pixel| {
                    let values = &image[pixel * c + blocked..(pixel + 1) * c];
                    if first {
                        best.copy_from_slice(values);
                        first = false;
                    } else {
                        keep_max(best, values);
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
    taps: &Taps,
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
            taps.each(oy, ox, |pixel| {
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

/// Runs `f(image, output chunk, n)` over the batch's images, in parallel for large inputs;
/// `out` holds one equal chunk per image (of the pooled output, or of the input's shape).
fn per_image<T: GemmFloat, U: Send>(
    w: &Window2d,
    x: &[T],
    out: &mut [U],
    f: impl Fn(&[T], &mut [U], usize) + Sync,
) {
    if out.is_empty() {
        return;
    }
    let per_image = out.len() / w.batch;
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
    // Every element is written (an interrupted call returns an error, not the buffer).
    let mut out = pool::overwritten(w.batch * w.out_positions() * w.channels);
    let taps = Taps::new(w);
    per_image(
        w,
        x,
        &mut out,
        #[inline(always)]
        |image, o, _| max_pool_image(w, &taps, image, o),
    );
    out
}

fn max_pool_argmax_typed<T: GemmFloat>(w: &Window2d, x: &[T], y: &[T]) -> Vec<usize> {
    let per_image_out = w.out_positions() * w.channels;
    let mut index = vec![0usize; w.batch * per_image_out];
    let taps = Taps::new(w);
    per_image(
        w,
        x,
        &mut index,
        #[inline(always)]
        |image, at, n| {
            let y = &y[n * per_image_out..(n + 1) * per_image_out];
            max_pool_argmax_image(w, &taps, image, y, n * w.image_len(), at)
        },
    );
    index
}

/// Whether no input element lies under two windows: each axis's stride at least its window's
/// (dilated) extent. Then [`max_pool_grad`] writes each element once instead of adding.
fn windows_disjoint(w: &Window2d) -> bool {
    let extent = |k: usize, axis: usize| (k - 1) * w.dilation[axis] + 1;
    w.stride[0] >= extent(w.k_h, 0) && w.stride[1] >= extent(w.k_w, 1)
}

/// One window tap of [`max_pool_grad_image`] over the channels: where `values` equals the
/// window's maximum `best` (NaN matching NaN), the `pending` gradient goes to `grads` and
/// turns to zero, so a later tie takes zero. A function of its own so that the slices arrive
/// as separate borrows: the channel loop then vectorises without checks for overlap.
#[inline(always)]
fn place_tap<T: GemmFloat, const ADD: bool>(
    values: &[T],
    best: &[T],
    pending: &mut [T],
    grads: &mut [T],
) {
    let c = values.len();
    let (best, pending, grads) = (&best[..c], &mut pending[..c], &mut grads[..c]);
    for ch in 0..c {
        let (v, b, g) = (values[ch], best[ch], pending[ch]);
        let hit = (v == b) | (v.is_nan() & b.is_nan());
        let placed = if hit { g } else { T::zero() };
        pending[ch] = if hit { T::zero() } else { g };
        grads[ch] = if ADD { grads[ch] + placed } else { placed };
    }
}

/// One image's input gradient: each window's `dy` goes to the window's first element equal to
/// its maximum `y` (NaN matching NaN; taps in row-major order, so ties go to the first), the
/// argmax found again as in [`max_pool_argmax_image`] but without an index. `pending` holds
/// one window's gradient not yet placed (see [`place_tap`]). With `ADD`, `dx` is zeroed and
/// each window's taps added in output order (as overlapping windows need); without, each
/// element under a window is written once and the `uncovered` pixels (under none: VALID's
/// cropped border, the gaps of a stride longer than the window) are zeroed.
#[inline(always)] // into `simd::dispatch`'s wide-vector function
#[allow(clippy::too_many_arguments)]
fn max_pool_grad_image<T: GemmFloat, const ADD: bool>(
    w: &Window2d,
    taps: &Taps,
    image: &[T],
    y: &[T],
    dy: &[T],
    dx: &mut [T],
    uncovered: &[usize],
    pending: &mut [T],
) {
    let c = w.channels;
    let blocked = c / CHANNEL_BLOCK * CHANNEL_BLOCK;
    if ADD {
        dx.fill(T::zero());
    }
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let o = (oy * w.out_w + ox) * c;
            // Whole blocks of channels keep the window's maxima and the gradient not yet
            // placed in registers across the taps, as `max_pool_image` does; through slices
            // of a run-time length they went through memory at every tap (3x slower at 16
            // channels).
            for c0 in (0..blocked).step_by(CHANNEL_BLOCK) {
                let block = |a: &[T]| -> [T; CHANNEL_BLOCK] {
                    a[o + c0..][..CHANNEL_BLOCK]
                        .try_into()
                        .expect("a block of channels")
                };
                let (best, mut pending) = (block(y), block(dy));
                taps.each(
                    oy,
                    ox,
                    #[inline(always)]
                    |pixel| {
                        let at = pixel * c + c0;
                        let values: &[T; CHANNEL_BLOCK] = image[at..][..CHANNEL_BLOCK]
                            .try_into()
                            .expect("a block of channels");
                        let grads: &mut [T; CHANNEL_BLOCK] = (&mut dx[at..][..CHANNEL_BLOCK])
                            .try_into()
                            .expect("a block of channels");
                        place_tap::<T, ADD>(values, &best, &mut pending, grads);
                    },
                );
            }
            if blocked == c {
                continue;
            }
            let best = &y[o + blocked..o + c];
            let pending = &mut pending[blocked..];
            pending.copy_from_slice(&dy[o + blocked..o + c]);
            taps.each(
                oy,
                ox,
                #[inline(always)]
                |pixel| {
                    let at = pixel * c + blocked..(pixel + 1) * c;
                    place_tap::<T, ADD>(&image[at.clone()], best, pending, &mut dx[at]);
                },
            );
        }
    }
    if !ADD {
        for &pixel in uncovered {
            dx[pixel * c..(pixel + 1) * c].fill(T::zero());
        }
    }
}

/// [`max_pool_grad`] on contiguous data; `disjoint` (allowed only where [`windows_disjoint`])
/// writes each element once, else the images are zeroed and added into.
fn max_pool_grad_typed<T: GemmFloat>(
    w: &Window2d,
    x: &[T],
    y: &[T],
    dy: &[T],
    disjoint: bool,
) -> Vec<T> {
    let (c, out_len) = (w.channels, w.out_positions() * w.channels);
    let taps = Taps::new(w);
    let uncovered: Vec<usize> = if disjoint {
        let mut covered = vec![false; w.in_h * w.in_w];
        for oy in 0..w.out_h {
            for ox in 0..w.out_w {
                taps.each(oy, ox, |pixel| covered[pixel] = true);
            }
        }
        (0..covered.len()).filter(|&p| !covered[p]).collect()
    } else {
        Vec::new()
    };
    // Every element is written: under a window, in `uncovered`, or zeroed first with `ADD`.
    let mut dx = pool::overwritten(w.batch * w.image_len());
    per_image(
        w,
        x,
        &mut dx,
        #[inline(always)]
        |image, dx, n| {
            let (y, dy) = (&y[n * out_len..][..out_len], &dy[n * out_len..][..out_len]);
            let mut pending = vec![T::zero(); c];
            if disjoint {
                let u = &uncovered;
                max_pool_grad_image::<T, false>(w, &taps, image, y, dy, dx, u, &mut pending)
            } else {
                max_pool_grad_image::<T, true>(w, &taps, image, y, dy, dx, &[], &mut pending)
            }
        },
    );
    dx
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
    max_pool_grad_by(x, y, dy, w, true)
}

/// [`max_pool_grad`], through the write-once pass where `allow_disjoint` and the windows do
/// not overlap, else through the zero-and-add pass (which tests compare it with).
fn max_pool_grad_by(
    x: &Array,
    y: &Array,
    dy: &Array,
    w: &Window2d,
    allow_disjoint: bool,
) -> Result<Array> {
    const OP: &str = "MaxPoolGrad";
    check_pooled(OP, x, y, w)?;
    check_output_gradient(OP, w, w.channels, dy)?;
    if dy.dtype() != x.dtype() {
        return Err(Error::mismatch(OP, x.dtype(), dy.dtype()));
    }
    if let Some(r) = device::dispatch([x, y, dy], |d, [x, y, dy]| d.max_pool_grad(x, y, dy, w)) {
        return r;
    }
    let disjoint = allow_disjoint && windows_disjoint(w);
    let (x, y, dy) = (x.contiguous(), y.contiguous(), dy.contiguous());
    fn slice<T: Element>(a: &Array) -> &[T] {
        a.contiguous_slice().expect("contiguous")
    }
    let dx = match x.buffer() {
        Buffer::F32(_) => Array::from_vec(
            max_pool_grad_typed::<f32>(w, slice(&x), slice(&y), slice(&dy), disjoint),
            x.shape(),
        ),
        Buffer::F64(_) => Array::from_vec(
            max_pool_grad_typed::<f64>(w, slice(&x), slice(&y), slice(&dy), disjoint),
            x.shape(),
        ),
        // Half values widen to f32 exactly, so equality with the maximum is unchanged.
        Buffer::F16(_) | Buffer::BF16(_) => {
            let wide = |a: &Array| cast(a, DType::F32);
            let dx = max_pool_grad_by(&wide(&x)?, &wide(&y)?, &wide(&dy)?, w, allow_disjoint)?;
            cast(&dx, x.dtype())
        }
        _ => Err(Error::unsupported(OP, x.dtype(), "a floating-point dtype")),
    }?;
    interrupt::check(OP)?;
    Ok(dx)
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

    /// Max pooling and its gradient by definition, in f64: for each window and channel, the
    /// first tap (row-major) holding the maximum (a NaN beats any number), and `dy` added there.
    fn max_pool_reference(x: &[f64], dy: &[f64], w: &Window2d) -> (Vec<f64>, Vec<f64>) {
        let c = w.channels;
        let mut y = vec![0.0; w.batch * w.out_h * w.out_w * c];
        let mut dx = vec![0.0; x.len()];
        let inside = |o: usize, k: usize, stride: usize, pad: usize, size: usize| {
            (o * stride + k).checked_sub(pad).filter(|&i| i < size)
        };
        for n in 0..w.batch {
            for oy in 0..w.out_h {
                for ox in 0..w.out_w {
                    for ch in 0..c {
                        let mut best: Option<(f64, usize)> = None;
                        for ky in 0..w.k_h {
                            for kx in 0..w.k_w {
                                let iy = inside(oy, ky, w.stride[0], w.pad_top, w.in_h);
                                let ix = inside(ox, kx, w.stride[1], w.pad_left, w.in_w);
                                let (Some(iy), Some(ix)) = (iy, ix) else {
                                    continue;
                                };
                                let i = ((n * w.in_h + iy) * w.in_w + ix) * c + ch;
                                let v = x[i];
                                let better = match best {
                                    None => true,
                                    Some((b, _)) => v > b || (v.is_nan() && !b.is_nan()),
                                };
                                if better {
                                    best = Some((v, i));
                                }
                            }
                        }
                        let (value, at) = best.expect("every window holds a tap inside");
                        let o = ((n * w.out_h + oy) * w.out_w + ox) * c + ch;
                        y[o] = value;
                        dx[at] += dy[o];
                    }
                }
            }
        }
        (y, dx)
    }

    /// Equal as numbers, or both NaN.
    fn same(a: f64, b: f64) -> bool {
        a == b || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn max_pool_grad_matches_the_definition_on_both_paths_at_every_simd_level() {
        use crate::simd::SimdLevel;
        // (input shape, window, strides, padding, whether windows are disjoint).
        type Case = ([usize; 4], [usize; 2], [usize; 2], Padding, bool);
        let cases: [Case; 9] = [
            // Odd sizes: VALID crops the last row and column.
            ([1, 5, 7, 3], [2, 2], [2, 2], Padding::Valid, true),
            ([2, 5, 7, 17], [2, 2], [2, 2], Padding::Same, true),
            // Strides longer than the window leave gaps under no window.
            ([2, 7, 8, 5], [2, 3], [3, 4], Padding::Valid, true),
            ([3, 9, 9, 33], [2, 2], [3, 3], Padding::Same, true),
            ([1, 6, 6, 16], [3, 3], [3, 3], Padding::Same, true),
            // A window larger than the image ('SAME' clips it).
            ([2, 3, 3, 4], [5, 5], [5, 5], Padding::Same, true),
            // Large enough to run in parallel, with pooled (reused) buffers.
            ([8, 17, 17, 40], [2, 2], [2, 2], Padding::Valid, true),
            // Overlapping windows: only the adding path.
            ([2, 5, 6, 7], [3, 3], [2, 2], Padding::Same, false),
            ([1, 4, 5, 20], [2, 2], [1, 1], Padding::Valid, false),
        ];
        let mut levels = 0;
        // No other test moves the level while this one checks each.
        let _serial = simd::TEST_LEVEL_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for level in SimdLevel::ALL {
            if level > simd::detected() {
                continue;
            }
            simd::set_max_level(Some(level));
            levels += 1;
            for (shape, window, stride, padding, disjoint) in cases {
                let w = Window2d::new("t", &shape, window, stride, [1, 1], padding).unwrap();
                assert_eq!(
                    windows_disjoint(&w),
                    disjoint,
                    "{shape:?} {window:?} {stride:?}"
                );
                // Few distinct values, so windows hold tied maxima; a NaN every 13th element.
                let len: usize = shape.iter().product();
                let x: Vec<f64> = (0..len)
                    .map(|i| match i % 13 {
                        5 => f64::NAN,
                        _ => ((i * 7919) % 5) as f64 - 2.0,
                    })
                    .collect();
                let y_shape = [w.batch, w.out_h, w.out_w, w.channels];
                let y_len: usize = y_shape.iter().product();
                // Small integers: every sum is exact in float32 too.
                let dy: Vec<f64> = (0..y_len).map(|i| (i % 7) as f64 - 3.0).collect();
                let (y_want, dx_want) = max_pool_reference(&x, &dy, &w);
                assert!(y_want.iter().any(|v| v.is_nan()) && dx_want.contains(&0.0));
                for dtype in [DType::F32, DType::F64] {
                    let xa = cast(&Array::from_vec(x.clone(), &shape).unwrap(), dtype).unwrap();
                    let dya = cast(&Array::from_vec(dy.clone(), &y_shape).unwrap(), dtype).unwrap();
                    let y = max_pool(&xa, &w).unwrap();
                    let got = cast(&y, DType::F64).unwrap().to_vec::<f64>();
                    let at = format!("{level:?} {dtype} {shape:?} {window:?} {stride:?}");
                    assert!(
                        got.iter().zip(&y_want).all(|(&a, &b)| same(a, b)),
                        "y, {at}"
                    );
                    for allow_disjoint in [true, false] {
                        let dx = max_pool_grad_by(&xa, &y, &dya, &w, allow_disjoint).unwrap();
                        assert_eq!(dx.dtype(), dtype);
                        let dx = cast(&dx, DType::F64).unwrap().to_vec::<f64>();
                        for (i, (&g, &e)) in dx.iter().zip(&dx_want).enumerate() {
                            assert!(same(g, e), "dx[{i}] {g} vs {e}, {at}, {allow_disjoint}");
                        }
                    }
                }
            }
        }
        simd::set_max_level(None);
        assert!(levels >= 1);
    }

    #[test]
    fn max_pool_grad_sends_each_window_to_its_first_maximum_and_nan() {
        // One 2x2 window, three channels: channel 0 ties at its 2nd and 4th taps (the 2nd
        // wins), channel 1's NaN at its last tap wins over the 9 before it, channel 2 holds two
        // NaNs (the first wins); the cropped last row (VALID) gets zero.
        let x = Array::from_vec(
            vec![
                1.0f32,
                0.0,
                0.0,
                4.0,
                9.0,
                f32::NAN, //
                0.0,
                0.0,
                0.0,
                4.0,
                f32::NAN,
                f32::NAN, //
                7.0,
                7.0,
                7.0,
                7.0,
                7.0,
                7.0,
            ],
            &[1, 3, 2, 3],
        )
        .unwrap();
        let w = Window2d::new("t", x.shape(), [2, 2], [2, 2], [1, 1], Padding::Valid).unwrap();
        let y = max_pool(&x, &w).unwrap();
        let dy = Array::from_vec(vec![10.0f32, 20.0, 30.0], &[1, 1, 1, 3]).unwrap();
        let dx = max_pool_grad(&x, &y, &dy, &w).unwrap().to_vec::<f32>();
        assert_eq!(
            dx,
            vec![
                0.0, 0.0, 0.0, 10.0, 0.0, 30.0, //
                0.0, 0.0, 0.0, 0.0, 20.0, 0.0, //
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ]
        );
    }
}
