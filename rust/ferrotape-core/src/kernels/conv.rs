//! 2-D convolution over NHWC images (batch, height, width, channels: Keras's
//! `channels_last`), with HWIO filters (height, width, in channels, out channels).
//!
//! Convolution is im2col + gemm, one image at a time: an image's patches are copied into a
//! `(out_h·out_w) × (k_h·k_w·in_c)` matrix whose product with the filter (already that matrix's
//! `(k_h·k_w·in_c) × out_c` partner in HWIO order) is the output image. For the small images
//! and 16–64 channels of the workloads this keeps every gemm large enough to run at full speed
//! while the patch matrix of one image stays in L2. Work is split across rayon's pool by image
//! (each image's gemm then runs single-threaded) when the batch has at least one image per
//! thread; a smaller batch lets gemm use the threads instead. A 1×1 filter with stride 1 and no
//! padding reads the image itself as the patch matrix.
//!
//! A float32 3×3 convolution with stride 1 and at least 16 input and output channels instead
//! goes through Winograd's F(4×4, 3×3) (`winograd.rs`), which does 36 products where the
//! window sums do 144 per sixteen outputs, for the forward pass and both gradients; other
//! stride-1 float32 shapes whose output channels fill whole vectors take the register-blocked
//! direct kernel (`direct.rs`).
//! [`conv_algorithm`] makes the choice, from measurements written beside it, and [`conv2d_by`],
//! [`conv2d_backprop_input_by`] and [`conv2d_backprop_filter_by`] force one (direct, im2col or
//! either Winograd tile) for tests and benchmarks.
//!
//! Both backward passes are the same two steps in reverse: the input gradient multiplies the
//! output gradient by the transposed filter (read through strides) and scatters the patch
//! gradients back onto the image (col2im); the filter gradient sums `patchesᵀ · dy` over the
//! images, each thread accumulating its own partial sum. Each public kernel checks its
//! shapes, then offers the call to the device seam (`crate::device`) before running here.
//! Pooling (`pool.rs`) shares [`Window2d`] with it.

use gemm::Parallelism;
use rayon::prelude::*;

use super::cast;
use super::winograd::{self, WinogradTile};
use crate::pool::{self, Scratch};
use crate::{device, interrupt, Array, Buffer, DType, Element, Error, Result};

/// `same` pads so that `out = ceil(in / stride)` (the extra row or column goes after, as in
/// TensorFlow); `valid` uses only positions where the whole window fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    Same,
    Valid,
}

impl Padding {
    pub fn parse(op: &'static str, name: &str) -> Result<Padding> {
        match name.to_ascii_uppercase().as_str() {
            "SAME" => Ok(Padding::Same),
            "VALID" => Ok(Padding::Valid),
            _ => Err(Error::invalid(
                op,
                format!("padding must be 'SAME' or 'VALID', received {name:?}"),
            )),
        }
    }
}

/// The output size and the padding before the first element along one spatial axis.
fn output_size(
    op: &'static str,
    input: usize,
    window: usize,
    stride: usize,
    dilation: usize,
    padding: Padding,
) -> Result<(usize, usize)> {
    let effective = (window - 1)
        .checked_mul(dilation)
        .and_then(|e| e.checked_add(1))
        .ok_or_else(|| {
            Error::invalid(
                op,
                format!("the window ({window}) dilated by {dilation} is too large to address"),
            )
        })?;
    match padding {
        Padding::Valid => {
            if input < effective {
                return Err(Error::invalid(
                    op,
                    format!(
                        "the window ({effective} after dilation) is larger than the input ({input}) with 'VALID' padding"
                    ),
                ));
            }
            Ok(((input - effective) / stride + 1, 0))
        }
        Padding::Same => {
            let out = input.div_ceil(stride);
            let needed = ((out.max(1) - 1) * stride)
                .saturating_add(effective)
                .saturating_sub(input);
            Ok((out, needed / 2))
        }
    }
}

/// Sizes and offsets shared by the forward and backward passes of one convolution or pooling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window2d {
    pub batch: usize,
    pub in_h: usize,
    pub in_w: usize,
    pub channels: usize,
    pub k_h: usize,
    pub k_w: usize,
    pub stride: [usize; 2],
    pub dilation: [usize; 2],
    pub pad_top: usize,
    pub pad_left: usize,
    pub out_h: usize,
    pub out_w: usize,
}

impl Window2d {
    /// Checks a rank-4 NHWC input against a `k_h × k_w` window and positive strides/dilations.
    pub fn new(
        op: &'static str,
        input_shape: &[usize],
        window: [usize; 2],
        stride: [usize; 2],
        dilation: [usize; 2],
        padding: Padding,
    ) -> Result<Window2d> {
        if input_shape.len() != 4 {
            return Err(Error::invalid(
                op,
                format!("input must be a rank-4 NHWC tensor, received shape {input_shape:?}"),
            ));
        }
        if window.contains(&0) || stride.contains(&0) || dilation.contains(&0) {
            return Err(Error::invalid(
                op,
                format!(
                    "window {window:?}, strides {stride:?} and dilations {dilation:?} must be positive"
                ),
            ));
        }
        if stride != [1, 1] && dilation != [1, 1] {
            return Err(Error::invalid(
                op,
                "strides > 1 together with dilations > 1 are not supported (as in TensorFlow)",
            ));
        }
        let (out_h, pad_top) = output_size(
            op,
            input_shape[1],
            window[0],
            stride[0],
            dilation[0],
            padding,
        )?;
        let (out_w, pad_left) = output_size(
            op,
            input_shape[2],
            window[1],
            stride[1],
            dilation[1],
            padding,
        )?;
        Ok(Window2d {
            batch: input_shape[0],
            in_h: input_shape[1],
            in_w: input_shape[2],
            channels: input_shape[3],
            k_h: window[0],
            k_w: window[1],
            stride,
            dilation,
            pad_top,
            pad_left,
            out_h,
            out_w,
        })
    }

    pub(super) fn image_len(&self) -> usize {
        self.in_h * self.in_w * self.channels
    }

    pub(super) fn out_positions(&self) -> usize {
        self.out_h * self.out_w
    }

    fn patch_len(&self) -> usize {
        self.k_h * self.k_w * self.channels
    }

    /// True when the patch matrix is the image itself (1×1 window, stride 1, no padding).
    fn is_pointwise(&self) -> bool {
        self.k_h == 1 && self.k_w == 1 && self.stride == [1, 1]
    }

    /// The input row (or column) under window tap `k` at output position `o`, if inside.
    #[inline(always)]
    fn source(&self, o: usize, k: usize, axis: usize) -> Option<usize> {
        let (pad, size) = if axis == 0 {
            (self.pad_top, self.in_h)
        } else {
            (self.pad_left, self.in_w)
        };
        let pos = (o * self.stride[axis] + k * self.dilation[axis]).checked_sub(pad)?;
        (pos < size).then_some(pos)
    }

    /// Calls `f(out_position, tap, input_pixel)` for every window tap that lands inside the
    /// image; `tap` counts `k_h × k_w` taps in row-major order, pixels count `in_h × in_w`.
    pub(super) fn for_each_tap(&self, mut f: impl FnMut(usize, usize, usize)) {
        for oy in 0..self.out_h {
            for ox in 0..self.out_w {
                let out = oy * self.out_w + ox;
                self.taps_at(oy, ox, |tap, pixel| f(out, tap, pixel));
            }
        }
    }

    /// The taps `k` of output position `o` along `axis` that land inside the input: those with
    /// `0 <= o·stride + k·dilation - pad < size`. Computed, not searched, so a window far larger
    /// than the image (valid with 'SAME' padding: TensorFlow clips it) costs what the image
    /// costs, not what the window would.
    #[inline(always)]
    pub(super) fn taps_inside(&self, o: usize, axis: usize) -> std::ops::Range<usize> {
        let (pad, size, taps) = if axis == 0 {
            (self.pad_top, self.in_h, self.k_h)
        } else {
            (self.pad_left, self.in_w, self.k_w)
        };
        let (start, step) = ((o * self.stride[axis]) as u128, self.dilation[axis] as u128);
        let (pad, size) = (pad as u128, size as u128);
        let first = pad.saturating_sub(start).div_ceil(step);
        let end = (size + pad).saturating_sub(start).div_ceil(step);
        let taps = taps as u128;
        (first.min(taps) as usize)..(end.min(taps) as usize)
    }

    /// The output positions along `axis` whose tap `k` lands inside the input (stride 1, no
    /// dilation): those with `0 <= o + k - pad < size`.
    pub(super) fn outputs_reading_tap(&self, k: usize, axis: usize) -> std::ops::Range<usize> {
        debug_assert!(self.stride == [1, 1] && self.dilation == [1, 1]);
        let (pad, size, out) = if axis == 0 {
            (self.pad_top, self.in_h, self.out_h)
        } else {
            (self.pad_left, self.in_w, self.out_w)
        };
        let start = pad.saturating_sub(k).min(out);
        let end = (size + pad).saturating_sub(k).clamp(start, out);
        start..end
    }

    /// Calls `f(tap, input_pixel)` for the taps of output position (`oy`, `ox`) inside the image.
    #[inline(always)]
    pub(super) fn taps_at(&self, oy: usize, ox: usize, mut f: impl FnMut(usize, usize)) {
        let columns = self.taps_inside(ox, 1);
        for ky in self.taps_inside(oy, 0) {
            let iy = oy * self.stride[0] + ky * self.dilation[0] - self.pad_top;
            for kx in columns.clone() {
                let ix = ox * self.stride[1] + kx * self.dilation[1] - self.pad_left;
                // Only convolutions read the tap, and their filter bounds `k_h·k_w`; a pooling
                // window may be far larger than any index, so the product may wrap there.
                f(
                    ky.wrapping_mul(self.k_w).wrapping_add(kx),
                    iy * self.in_w + ix,
                );
            }
        }
    }
}

/// A float type gemm multiplies.
pub trait GemmFloat: Element + num_traits::Float + std::iter::Sum + 'static {
    /// The convolution by Winograd's algorithm, for the types that have one (float32: float64
    /// keeps the exact sums of im2col).
    fn winograd(
        _w: &Window2d,
        _x: &[Self],
        _filter: &[Self],
        _bias: Option<&[Self]>,
        _out_c: usize,
        _tile: WinogradTile,
    ) -> Option<Vec<Self>> {
        None
    }

    /// The convolution by the register-blocked direct kernel (`direct.rs`), where it applies:
    /// float32 only (float64 keeps im2col), and only on x86-64 with AVX2 or AVX-512.
    fn direct(
        _w: &Window2d,
        _x: &[Self],
        _filter: &[Self],
        _bias: Option<&[Self]>,
        _out_c: usize,
    ) -> Option<Vec<Self>> {
        None
    }

    /// The filter gradient by Winograd's algorithm (as [`GemmFloat::winograd`]).
    fn winograd_filter_grad(
        _w: &Window2d,
        _x: &[Self],
        _dy: &[Self],
        _out_c: usize,
        _tile: WinogradTile,
    ) -> Option<Vec<Self>> {
        None
    }

    /// The filter gradient by the direct kernel, where it applies (as [`GemmFloat::direct`]).
    fn direct_filter_grad(
        _w: &Window2d,
        _x: &[Self],
        _dy: &[Self],
        _out_c: usize,
    ) -> Option<Vec<Self>> {
        None
    }
}

impl GemmFloat for f32 {
    #[cfg(target_arch = "x86_64")]
    fn direct(
        w: &Window2d,
        x: &[f32],
        filter: &[f32],
        bias: Option<&[f32]>,
        out_c: usize,
    ) -> Option<Vec<f32>> {
        super::direct::conv(w, x, filter, bias, out_c)
    }

    #[cfg(target_arch = "x86_64")]
    fn direct_filter_grad(w: &Window2d, x: &[f32], dy: &[f32], out_c: usize) -> Option<Vec<f32>> {
        super::direct::backprop_filter(w, x, dy, out_c)
    }

    fn winograd(
        w: &Window2d,
        x: &[f32],
        filter: &[f32],
        bias: Option<&[f32]>,
        out_c: usize,
        tile: WinogradTile,
    ) -> Option<Vec<f32>> {
        Some(winograd::conv3x3(w, x, filter, bias, out_c, tile))
    }

    fn winograd_filter_grad(
        w: &Window2d,
        x: &[f32],
        dy: &[f32],
        out_c: usize,
        tile: WinogradTile,
    ) -> Option<Vec<f32>> {
        Some(winograd::backprop_filter3x3(w, x, dy, out_c, tile))
    }
}

impl GemmFloat for f64 {}

/// How a forward convolution (and the input gradient, itself a convolution) is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvAlgorithm {
    /// The register-blocked direct kernel of `direct.rs` (float32, stride 1, no dilation,
    /// output channels a multiple of the vector width, AVX2 or AVX-512; else im2col).
    Direct,
    /// Patches copied into a matrix, then one gemm.
    Im2col,
    /// Winograd's F(m×m, 3×3) (float32, 3×3, stride 1, no dilation; else im2col).
    Winograd(WinogradTile),
}

/// Input and output channels from which a 3×3 float32 convolution and both its gradients go
/// through Winograd's F(4×4, 3×3).
///
/// Measured with `cargo run --release -p ferrotape-benches --example conv_layers` (batch 64,
/// the seed CNN's layers with their bias and an RGB first layer, Zen 4 with AVX-512, 2
/// threads, the least of three runs' medians in ms per call; `dW` is the filter gradient). The
/// host ran about half as fast as on a quiet day throughout (the direct kernel's 7×7, 64 → 64
/// took 1.13 ms in a quiet moment the same day), so compare within a row:
///
/// | layer          | direct | im2col | F(2×2) | F(4×4) | dW direct | dW im2col | dW F(2×2) | dW F(4×4) |
/// |----------------|--------|--------|--------|--------|-----------|-----------|-----------|-----------|
/// | 28×28, 1 → 16  | 0.334  | 1.183  | 1.504  | 0.831  | 0.235     | 0.960     | 1.178     | 0.601     |
/// | 32×32, 3 → 32  | 1.330  | 2.509  | 3.862  | 2.911  | 1.234     | 2.248     | 3.440     | 2.771     |
/// | 14×14, 16 → 32 | 1.165  | 1.365  | 0.893  | 0.806  | 0.995     | 1.425     | 0.804     | 0.896     |
/// | 14×14, 32 → 32 | 2.528  | 2.709  | 1.642  | 1.395  | 2.034     | 2.651     | 1.704     | 1.635     |
/// | 7×7, 32 → 64   | 1.187  | 1.207  | 0.965  | 0.599  | 0.930     | 1.183     | 0.979     | 0.663     |
/// | 7×7, 64 → 64   | 2.245  | 2.562  | 1.783  | 1.081  | 1.893     | 2.448     | 1.874     | 1.584     |
///
/// The direct kernel runs at about the gemm's rate (7×7, 64 → 64 is 231 MFLOP: 200 GFLOP/s
/// on a quiet host), so only an algorithm with fewer multiplications beats it: F(4×4) does a
/// quarter of them (a third on 7×7 images, whose 4×4 tiles overhang), and with its products in
/// the direct kernel's microkernel and its transforms in vector registers it is 1.4–2.1× faster
/// from 16 channels on, and 1.1–1.4× on the filter gradient. Its error is larger than the
/// direct sum's (see `winograd.rs`), within what the tests bound. With one or three input
/// channels the transforms outweigh the products saved, and the direct kernel stays.
const WINOGRAD_MIN_CHANNELS: usize = 16;

/// The algorithm named by the environment variable `FERROTAPE_CONV_ALGORITHM` (`direct`,
/// `im2col`, `winograd2` or `winograd4`; read once), which replaces the automatic choice for
/// every convolution: for comparing the algorithms inside a whole model.
fn forced_conv_algorithm() -> Option<ConvAlgorithm> {
    static FORCED: std::sync::OnceLock<Option<ConvAlgorithm>> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| {
        let name = std::env::var("FERROTAPE_CONV_ALGORITHM").ok()?;
        match name.trim().to_ascii_lowercase().as_str() {
            "direct" => Some(ConvAlgorithm::Direct),
            "im2col" => Some(ConvAlgorithm::Im2col),
            "winograd2" => Some(ConvAlgorithm::Winograd(WinogradTile::F2)),
            "winograd4" => Some(ConvAlgorithm::Winograd(WinogradTile::F4)),
            _ => None,
        }
    })
}

/// The algorithm `conv2d` uses for a shape (of float32 data: other types take im2col whatever
/// this says): Winograd's F(4×4) for 3×3 stride-1 layers with enough channels, else the direct
/// kernel where it applies, else im2col. `FERROTAPE_CONV_ALGORITHM` overrides the choice.
pub fn conv_algorithm(w: &Window2d, out_c: usize) -> ConvAlgorithm {
    if let Some(forced) = forced_conv_algorithm() {
        return forced;
    }
    if winograd::applies(w, out_c)
        && w.channels >= WINOGRAD_MIN_CHANNELS
        && out_c >= WINOGRAD_MIN_CHANNELS
    {
        ConvAlgorithm::Winograd(WinogradTile::F4)
    } else if direct_applies(w, out_c) {
        ConvAlgorithm::Direct
    } else {
        ConvAlgorithm::Im2col
    }
}

#[cfg(target_arch = "x86_64")]
fn direct_applies(w: &Window2d, out_c: usize) -> bool {
    super::direct::applies(w, out_c)
}

#[cfg(not(target_arch = "x86_64"))]
fn direct_applies(_w: &Window2d, _out_c: usize) -> bool {
    false
}

/// The algorithm of the filter gradient: the forward pass's choice ([`conv_algorithm`]; the
/// direct kernel and Winograd's decline the shapes they do not compute, which then go through
/// im2col), unless `FERROTAPE_CONV_ALGORITHM` names another algorithm.
pub fn filter_grad_algorithm(w: &Window2d, out_c: usize) -> ConvAlgorithm {
    conv_algorithm(w, out_c)
}

/// Row-major `dst (m×n) = [dst +] lhs (m×k) · rhs (k×n)`, each operand given by its row and
/// column strides.
#[allow(clippy::too_many_arguments)]
pub(super) fn gemm_strided<T: GemmFloat>(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [T],
    accumulate: bool,
    lhs: (&[T], isize, isize),
    rhs: (&[T], isize, isize),
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(T::zero());
        }
        return;
    }
    let parallelism = if parallel {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    };
    // Checked here, not trusted from the callers, so that this safe function is sound for any
    // arguments: three multiplications per product, nothing next to the product itself.
    assert!(dst.len() >= m * n, "gemm_strided: dst too short");
    assert!(
        strided_fits(lhs.0.len(), m, k, lhs.1, lhs.2),
        "gemm_strided: lhs out of bounds"
    );
    assert!(
        strided_fits(rhs.0.len(), k, n, rhs.1, rhs.2),
        "gemm_strided: rhs out of bounds"
    );
    // SAFETY: every element the strides reach lies inside `lhs.0` and `rhs.0` (asserted above),
    // and `dst` has room for m·n row-major elements.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.0.as_ptr(),
            lhs.2,
            lhs.1,
            rhs.0.as_ptr(),
            rhs.2,
            rhs.1,
            T::one(),
            T::one(),
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// Whether every element of a `rows × cols` operand (both at least 1) with these strides lies
/// inside a slice of `len` elements starting at offset 0.
fn strided_fits(
    len: usize,
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
) -> bool {
    let reach = |count: usize, stride: isize| {
        isize::try_from(count - 1)
            .ok()
            .and_then(|c| c.checked_mul(stride))
    };
    let (Some(r), Some(c)) = (reach(rows, row_stride), reach(cols, col_stride)) else {
        return false;
    };
    let lowest = r.min(0).checked_add(c.min(0));
    let highest = r.max(0).checked_add(c.max(0));
    matches!((lowest, highest), (Some(0), Some(h)) if (h as usize) < len)
}

/// The taps `lo..hi` of one window row at output column `ox` that land inside the image, and
/// the input column under tap `lo`; with dilation 1 those pixels sit side by side, so a
/// window row's valid part is one contiguous run of `(hi - lo)·channels` elements.
#[inline(always)]
fn row_span(w: &Window2d, ox: usize) -> (usize, usize, usize) {
    debug_assert_eq!(w.dilation[1], 1);
    let first = (ox * w.stride[1]) as isize - w.pad_left as isize; // input column of tap 0
    let lo = (-first).clamp(0, w.k_w as isize) as usize;
    let hi = (w.in_w as isize - first).clamp(lo as isize, w.k_w as isize) as usize;
    (lo, hi, (first + lo as isize).max(0) as usize)
}

/// Copies one image's patches into `cols` (`out_positions × patch_len`, zeros where the window
/// hangs over the padding). Each window row is copied as one run where the dilation allows.
fn im2col<T: GemmFloat>(w: &Window2d, image: &[T], cols: &mut [T]) {
    let c = w.channels;
    let row_len = w.k_w * c;
    let zero = T::zero();
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let patch = &mut cols[(oy * w.out_w + ox) * w.patch_len()..][..w.patch_len()];
            for (ky, dst) in patch.chunks_exact_mut(row_len).enumerate() {
                let Some(iy) = w.source(oy, ky, 0) else {
                    dst.fill(zero);
                    continue;
                };
                if w.dilation[1] == 1 {
                    let (lo, hi, ix) = row_span(w, ox);
                    dst[..lo * c].fill(zero);
                    dst[hi * c..].fill(zero);
                    let src = (iy * w.in_w + ix) * c;
                    dst[lo * c..hi * c].copy_from_slice(&image[src..src + (hi - lo) * c]);
                    continue;
                }
                for (kx, d) in dst.chunks_exact_mut(c).enumerate() {
                    match w.source(ox, kx, 1) {
                        Some(ix) => d.copy_from_slice(&image[(iy * w.in_w + ix) * c..][..c]),
                        None => d.fill(zero),
                    }
                }
            }
        }
    }
}

/// Adds the patch gradients in `cols` back onto one image's gradient (the adjoint of im2col).
fn col2im<T: GemmFloat>(w: &Window2d, cols: &[T], image: &mut [T]) {
    let c = w.channels;
    let row_len = w.k_w * c;
    image.fill(T::zero());
    let add = |dst: &mut [T], src: &[T]| {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = *d + s;
        }
    };
    for oy in 0..w.out_h {
        for ox in 0..w.out_w {
            let patch = &cols[(oy * w.out_w + ox) * w.patch_len()..][..w.patch_len()];
            for (ky, src) in patch.chunks_exact(row_len).enumerate() {
                let Some(iy) = w.source(oy, ky, 0) else {
                    continue;
                };
                if w.dilation[1] == 1 {
                    let (lo, hi, ix) = row_span(w, ox);
                    let at = (iy * w.in_w + ix) * c;
                    add(&mut image[at..at + (hi - lo) * c], &src[lo * c..hi * c]);
                    continue;
                }
                for (kx, s) in src.chunks_exact(c).enumerate() {
                    if let Some(ix) = w.source(ox, kx, 1) {
                        add(&mut image[(iy * w.in_w + ix) * c..][..c], s);
                    }
                }
            }
        }
    }
}

/// Patch-matrix elements per gemm call: enough rows for gemm to run at full speed on small
/// images (a 28×28 image with one input channel has only 9 columns), few enough that the
/// patches of one group of images stay in L2.
const PATCH_ELEMENTS_PER_GEMM: usize = 256 * 1024;

/// How many images share one im2col + gemm.
fn images_per_group(w: &Window2d) -> usize {
    let per_image = (w.out_positions() * w.patch_len()).max(1);
    (PATCH_ELEMENTS_PER_GEMM / per_image).clamp(1, w.batch.max(1))
}

/// Splits the groups across threads when there is at least one group per thread.
fn split_groups(w: &Window2d, group: usize) -> bool {
    let work = w.batch * w.out_positions() * w.patch_len();
    w.batch.div_ceil(group) >= rayon::current_num_threads() && work >= super::PARALLEL_THRESHOLD
}

/// The patch matrix of images `first..first + count`, stacked (`count·positions × patch`).
/// `im2col` writes every element of the matrix, so `cols` needs no clearing.
fn group_patches<'a, T: GemmFloat>(
    w: &Window2d,
    x: &'a [T],
    first: usize,
    count: usize,
    cols: &'a mut Scratch<T>,
) -> &'a [T] {
    let images = &x[first * w.image_len()..(first + count) * w.image_len()];
    if w.is_pointwise() {
        return images;
    }
    let per_image = w.out_positions() * w.patch_len();
    let matrix = cols.resize(count * per_image);
    for (k, dst) in matrix.chunks_mut(per_image).enumerate() {
        im2col(w, &images[k * w.image_len()..(k + 1) * w.image_len()], dst);
    }
    matrix
}

/// The convolution by a given algorithm (one that does not apply to the shape or the type
/// falls back to im2col).
fn conv2d_with<T: GemmFloat>(
    algorithm: ConvAlgorithm,
    w: &Window2d,
    x: &[T],
    filter: &[T],
    bias: Option<&[T]>,
    out_c: usize,
) -> Vec<T> {
    if let ConvAlgorithm::Winograd(tile) = algorithm {
        if winograd::applies(w, out_c) {
            if let Some(out) = T::winograd(w, x, filter, bias, out_c, tile) {
                return out;
            }
        }
    }
    if algorithm == ConvAlgorithm::Direct {
        if let Some(out) = T::direct(w, x, filter, bias, out_c) {
            return out;
        }
    }
    let (positions, patch) = (w.out_positions(), w.patch_len());
    // The bias is written first and the gemm adds the products onto it: no second pass over
    // the output, as a separate bias add would take.
    let mut out = pool::overwritten(w.batch * positions * out_c);
    if out.is_empty() {
        return out;
    }
    if let Some(b) = bias {
        out.chunks_exact_mut(out_c)
            .for_each(|pixel| pixel.copy_from_slice(b));
    }
    let group = images_per_group(w);
    let parallel_groups = split_groups(w, group);
    let one_group = |cols: &mut Scratch<T>, g: usize, dst: &mut [T]| {
        if interrupt::requested() {
            return; // `float_kernel` turns the unfinished output into `Cancelled`.
        }
        let count = dst.len() / (positions * out_c);
        let lhs = group_patches(w, x, g * group, count, cols);
        gemm_strided(
            count * positions,
            out_c,
            patch,
            dst,
            bias.is_some(),
            (lhs, patch as isize, 1),
            (filter, out_c as isize, 1),
            !parallel_groups,
        );
    };
    let chunk = group * positions * out_c;
    if parallel_groups {
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each_init(Scratch::new, |cols, (g, dst)| one_group(cols, g, dst));
    } else {
        let mut cols = Scratch::new();
        for (g, dst) in out.chunks_mut(chunk).enumerate() {
            one_group(&mut cols, g, dst);
        }
    }
    out
}

/// For stride 1, the input gradient is itself a convolution (so it takes Winograd's path too): `dy` (padded by
/// `(k - 1)·dilation - pad` before) convolved with the filter flipped in space and with its
/// channel axes swapped. That form's gemm has the long inner dimension `k_h·k_w·out_c` and
/// writes each input-gradient element once, where im2col's adjoint writes a patch matrix
/// `k_h·k_w` times the image's size and adds it back pixel by pixel.
fn backprop_input_as_conv<T: GemmFloat>(
    algorithm: Option<ConvAlgorithm>,
    w: &Window2d,
    filter: &[T],
    dy: &[T],
    out_c: usize,
) -> Option<Vec<T>> {
    let (dil_h, dil_w) = (w.dilation[0], w.dilation[1]);
    let pad_top = ((w.k_h - 1) * dil_h).checked_sub(w.pad_top)?;
    let pad_left = ((w.k_w - 1) * dil_w).checked_sub(w.pad_left)?;
    if w.stride != [1, 1] || w.channels == 0 || out_c == 0 {
        return None;
    }
    let flipped_window = Window2d {
        batch: w.batch,
        in_h: w.out_h,
        in_w: w.out_w,
        channels: out_c,
        k_h: w.k_h,
        k_w: w.k_w,
        stride: [1, 1],
        dilation: w.dilation,
        pad_top,
        pad_left,
        out_h: w.in_h,
        out_w: w.in_w,
    };
    // flipped[ky, kx, co, ci] = filter[k_h-1-ky, k_w-1-kx, ci, co]
    let c = w.channels;
    let mut flipped = Vec::with_capacity(filter.len());
    for ky in 0..w.k_h {
        for kx in 0..w.k_w {
            let tap = (w.k_h - 1 - ky) * w.k_w + (w.k_w - 1 - kx);
            for co in 0..out_c {
                flipped.extend((0..c).map(|ci| filter[(tap * c + ci) * out_c + co]));
            }
        }
    }
    let algorithm = algorithm.unwrap_or_else(|| conv_algorithm(&flipped_window, c));
    Some(conv2d_with(
        algorithm,
        &flipped_window,
        dy,
        &flipped,
        None,
        c,
    ))
}

fn conv2d_backprop_input_typed<T: GemmFloat>(
    algorithm: Option<ConvAlgorithm>,
    w: &Window2d,
    filter: &[T],
    dy: &[T],
    out_c: usize,
) -> Vec<T> {
    let (positions, patch) = (w.out_positions(), w.patch_len());
    let len = w.batch * w.image_len();
    if len == 0 || positions == 0 {
        return vec![T::zero(); len];
    }
    if !w.is_pointwise() && algorithm != Some(ConvAlgorithm::Im2col) {
        if let Some(dx) = backprop_input_as_conv(algorithm, w, filter, dy, out_c) {
            return dx;
        }
    }
    // col2im clears each image before adding into it, and a pointwise gemm writes it whole.
    let mut dx = pool::overwritten(len);
    let group = images_per_group(w);
    let parallel_groups = split_groups(w, group);
    let one_group = |cols: &mut Scratch<T>, g: usize, dst: &mut [T]| {
        if interrupt::requested() {
            return; // `float_kernel` turns the unfinished output into `Cancelled`.
        }
        let count = dst.len() / w.image_len();
        let first = g * group;
        let dy_group = &dy[first * positions * out_c..(first + count) * positions * out_c];
        // Patch gradients: dy (rows × out_c) · filterᵀ (out_c × patch), the transpose read in
        // place through its strides; a pointwise filter's patches are the image itself.
        let rows = count * positions;
        let target: &mut [T] = if w.is_pointwise() {
            dst
        } else {
            cols.resize(rows * patch)
        };
        gemm_strided(
            rows,
            patch,
            out_c,
            target,
            false,
            (dy_group, out_c as isize, 1),
            (filter, 1, out_c as isize),
            !parallel_groups,
        );
        if !w.is_pointwise() {
            let per_image = positions * patch;
            for (k, image) in dst.chunks_mut(w.image_len()).enumerate() {
                col2im(
                    w,
                    &cols.as_slice()[k * per_image..(k + 1) * per_image],
                    image,
                );
            }
        }
    };
    let chunk = group * w.image_len();
    if parallel_groups {
        dx.par_chunks_mut(chunk)
            .enumerate()
            .for_each_init(Scratch::new, |cols, (g, dst)| one_group(cols, g, dst));
    } else {
        let mut cols = Scratch::new();
        for (g, dst) in dx.chunks_mut(chunk).enumerate() {
            one_group(&mut cols, g, dst);
        }
    }
    dx
}

fn conv2d_backprop_filter_typed<T: GemmFloat>(
    algorithm: ConvAlgorithm,
    w: &Window2d,
    x: &[T],
    dy: &[T],
    out_c: usize,
) -> Vec<T> {
    let (positions, patch) = (w.out_positions(), w.patch_len());
    let filter_len = patch * out_c;
    if w.batch == 0 || positions == 0 || filter_len == 0 {
        return vec![T::zero(); filter_len];
    }
    if let ConvAlgorithm::Winograd(tile) = algorithm {
        if winograd::applies(w, out_c) {
            if let Some(grad) = T::winograd_filter_grad(w, x, dy, out_c, tile) {
                return grad;
            }
        }
    }
    if algorithm == ConvAlgorithm::Direct {
        if let Some(grad) = T::direct_filter_grad(w, x, dy, out_c) {
            return grad;
        }
    }
    let group = images_per_group(w);
    let groups = w.batch.div_ceil(group);
    // Adds patchesᵀ (patch × rows) · dy (rows × out_c) of groups `range` to `acc`.
    let accumulate = |range: std::ops::Range<usize>, acc: &mut Vec<T>, parallel: bool| {
        let mut cols = Scratch::new();
        for g in range {
            if interrupt::requested() {
                break;
            }
            let first = g * group;
            let count = group.min(w.batch - first);
            let patches = group_patches(w, x, first, count, &mut cols);
            let dy_group = &dy[first * positions * out_c..(first + count) * positions * out_c];
            gemm_strided(
                patch,
                out_c,
                count * positions,
                acc,
                true,
                (patches, 1, patch as isize),
                (dy_group, out_c as isize, 1),
                parallel,
            );
        }
    };
    if split_groups(w, group) {
        let threads = rayon::current_num_threads();
        let per_thread = groups.div_ceil(threads);
        (0..threads)
            .into_par_iter()
            .map(|t| {
                let mut acc = vec![T::zero(); filter_len];
                accumulate(
                    t * per_thread..((t + 1) * per_thread).min(groups),
                    &mut acc,
                    false,
                );
                acc
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x = *x + *y);
                a
            })
            .expect("at least one thread")
    } else {
        let mut acc = vec![T::zero(); filter_len];
        accumulate(0..groups, &mut acc, true);
        acc
    }
}

/// Checks an HWIO filter against the input's channels; returns the output channels.
fn check_filter(op: &'static str, input_shape: &[usize], filter_shape: &[usize]) -> Result<usize> {
    if filter_shape.len() != 4 {
        return Err(Error::invalid(
            op,
            format!("filter must be a rank-4 HWIO tensor, received shape {filter_shape:?}"),
        ));
    }
    if input_shape.len() == 4 && filter_shape[2] != input_shape[3] {
        return Err(Error::invalid(
            op,
            format!(
                "the filter's input channels ({}) must equal the input's channels ({}): input {input_shape:?}, filter {filter_shape:?}",
                filter_shape[2], input_shape[3]
            ),
        ));
    }
    Ok(filter_shape[3])
}

/// Parameters of a 2-D convolution: strides and dilations along (height, width), and padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dParams {
    pub stride: [usize; 2],
    pub dilation: [usize; 2],
    pub padding: Padding,
}

impl Conv2dParams {
    pub fn window(
        &self,
        op: &'static str,
        input_shape: &[usize],
        filter_shape: &[usize],
    ) -> Result<Window2d> {
        check_filter(op, input_shape, filter_shape)?;
        Window2d::new(
            op,
            input_shape,
            [filter_shape[0], filter_shape[1]],
            self.stride,
            self.dilation,
            self.padding,
        )
    }
}

/// The im2col patch matrix of an image (`positions × patch`) is allocated whole, and can be far
/// larger than both operands (a large filter over a large image): checked like an output, and
/// before the group sizing multiplies its dimensions.
fn check_patches(op: &'static str, w: &Window2d, dtype: DType) -> Result<()> {
    if !w.is_pointwise() {
        // Every factor on its own: the window may come from a user-given shape (the
        // `input_sizes` of a backward pass), so nothing here is multiplied unchecked.
        let dims = [w.out_h, w.out_w, w.k_h, w.k_w, w.channels];
        crate::check_alloc(op, dtype, &dims)?;
    }
    Ok(())
}

/// Runs `f` on contiguous f32 or f64 data (half types through f32), returning an Array of the
/// first operand's dtype.
pub(super) fn float_kernel(
    op: &'static str,
    operands: [&Array; 2],
    out_shape: &[usize],
    f32_kernel: impl FnOnce(&[f32], &[f32]) -> Vec<f32>,
    f64_kernel: impl FnOnce(&[f64], &[f64]) -> Vec<f64>,
) -> Result<Array> {
    let [a, b] = operands;
    if a.dtype() != b.dtype() {
        return Err(Error::mismatch(op, a.dtype(), b.dtype()));
    }
    // The output can be far larger than both operands (many output channels of a 1x1 filter).
    crate::check_alloc(op, a.dtype(), out_shape)?;
    let (a, b) = (a.contiguous(), b.contiguous());
    let buffer = match (a.buffer(), b.buffer()) {
        (Buffer::F32(_), _) => Buffer::F32(
            f32_kernel(
                a.contiguous_slice().expect("contiguous"),
                b.contiguous_slice().expect("contiguous"),
            )
            .into(),
        ),
        (Buffer::F64(_), _) => Buffer::F64(
            f64_kernel(
                a.contiguous_slice().expect("contiguous"),
                b.contiguous_slice().expect("contiguous"),
            )
            .into(),
        ),
        (Buffer::F16(_), _) | (Buffer::BF16(_), _) => {
            let (a32, b32) = (cast(&a, DType::F32)?, cast(&b, DType::F32)?);
            let r = Array::from_vec(
                f32_kernel(
                    a32.contiguous_slice().expect("contiguous"),
                    b32.contiguous_slice().expect("contiguous"),
                ),
                out_shape,
            )?;
            return cast(&r, a.dtype());
        }
        _ => return Err(Error::unsupported(op, a.dtype(), "a floating-point dtype")),
    };
    // The kernels skip their remaining images once asked to stop: the output is unfinished.
    interrupt::check(op)?;
    Array::from_buffer(buffer, out_shape)
}

/// NHWC `x` convolved with HWIO `filter` (cross-correlation, as every framework's conv2d),
/// plus `bias` (`[out_channels]`) on every output pixel when given.
pub fn conv2d(
    x: &Array,
    filter: &Array,
    bias: Option<&Array>,
    params: &Conv2dParams,
) -> Result<Array> {
    conv2d_by(None, x, filter, bias, params)
}

/// [`conv2d`] by the given algorithm instead of the one [`conv_algorithm`] picks (for
/// benchmarks and tests; one that does not apply to the shape or dtype falls back to im2col).
pub fn conv2d_by(
    algorithm: Option<ConvAlgorithm>,
    x: &Array,
    filter: &Array,
    bias: Option<&Array>,
    params: &Conv2dParams,
) -> Result<Array> {
    const OP: &str = "Conv2D";
    let w = params.window(OP, x.shape(), filter.shape())?;
    let out_c = filter.shape()[3];
    check_patches(OP, &w, x.dtype())?;
    if let Some(bias) = bias {
        if bias.shape() != [out_c] {
            return Err(Error::invalid(
                OP,
                format!(
                    "expected a bias of shape [{out_c}] (the filter's output channels), received {:?}",
                    bias.shape()
                ),
            ));
        }
        if bias.dtype() != x.dtype() {
            return Err(Error::mismatch(OP, x.dtype(), bias.dtype()));
        }
    }
    let on_device = match bias {
        None => device::dispatch([x, filter], |d, [x, f]| d.conv2d(x, f, None, &w)),
        Some(b) => device::dispatch([x, filter, b], |d, [x, f, b]| d.conv2d(x, f, Some(b), &w)),
    };
    if let Some(r) = on_device {
        return r;
    }
    let algorithm = algorithm.unwrap_or_else(|| conv_algorithm(&w, out_c));
    let shape = [w.batch, w.out_h, w.out_w, out_c];
    let Some(bias) = bias else {
        return float_kernel(
            OP,
            [x, filter],
            &shape,
            |x, f| conv2d_with(algorithm, &w, x, f, None, out_c),
            |x, f| conv2d_with(algorithm, &w, x, f, None, out_c),
        );
    };
    // The bias travels with the filter: both are small, and one stacked operand keeps the
    // dtype dispatch of `float_kernel`.
    let filter_len = filter.len();
    let stacked = super::concat(
        &[filter.contiguous().reshape(&[filter_len])?, bias.clone()],
        0,
    )?;
    float_kernel(
        OP,
        [x, &stacked],
        &shape,
        |x, fb| {
            conv2d_with(
                algorithm,
                &w,
                x,
                &fb[..filter_len],
                Some(&fb[filter_len..]),
                out_c,
            )
        },
        |x, fb| {
            conv2d_with(
                algorithm,
                &w,
                x,
                &fb[..filter_len],
                Some(&fb[filter_len..]),
                out_c,
            )
        },
    )
}

/// The gradient of `conv2d` with respect to its input, given the output gradient `dy`.
pub fn conv2d_backprop_input(
    input_shape: &[usize],
    filter: &Array,
    dy: &Array,
    params: &Conv2dParams,
) -> Result<Array> {
    conv2d_backprop_input_by(None, input_shape, filter, dy, params)
}

/// [`conv2d_backprop_input`] by a given algorithm: `Im2col` multiplies by the transposed filter
/// and scatters the patches back (col2im); any other, for a stride-1 window, computes the
/// convolution of `dy` with the flipped filter by that algorithm (as [`conv2d_by`] does,
/// falling back where it does not apply); `None` chooses.
pub fn conv2d_backprop_input_by(
    algorithm: Option<ConvAlgorithm>,
    input_shape: &[usize],
    filter: &Array,
    dy: &Array,
    params: &Conv2dParams,
) -> Result<Array> {
    const OP: &str = "Conv2DBackpropInput";
    let w = params.window(OP, input_shape, filter.shape())?;
    check_patches(OP, &w, filter.dtype())?;
    let out_c = filter.shape()[3];
    check_output_gradient(OP, &w, out_c, dy)?;
    if let Some(r) = device::dispatch([filter, dy], |d, [f, dy]| {
        d.conv2d_backprop_input(f, dy, &w)
    }) {
        return r;
    }
    float_kernel(
        OP,
        [filter, dy],
        input_shape,
        |f, dy| conv2d_backprop_input_typed(algorithm, &w, f, dy, out_c),
        |f, dy| conv2d_backprop_input_typed(algorithm, &w, f, dy, out_c),
    )
}

/// The gradient of `conv2d` with respect to its filter, given the output gradient `dy`.
pub fn conv2d_backprop_filter(
    x: &Array,
    filter_shape: &[usize],
    dy: &Array,
    params: &Conv2dParams,
) -> Result<Array> {
    conv2d_backprop_filter_by(None, x, filter_shape, dy, params)
}

/// [`conv2d_backprop_filter`] by a given algorithm: `Direct` or `Winograd` where that
/// algorithm applies, im2col otherwise; `None` chooses (see [`filter_grad_algorithm`]).
pub fn conv2d_backprop_filter_by(
    algorithm: Option<ConvAlgorithm>,
    x: &Array,
    filter_shape: &[usize],
    dy: &Array,
    params: &Conv2dParams,
) -> Result<Array> {
    const OP: &str = "Conv2DBackpropFilter";
    let w = params.window(OP, x.shape(), filter_shape)?;
    check_patches(OP, &w, x.dtype())?;
    let out_c = filter_shape[3];
    check_output_gradient(OP, &w, out_c, dy)?;
    if let Some(r) = device::dispatch([x, dy], |d, [x, dy]| d.conv2d_backprop_filter(x, dy, &w)) {
        return r;
    }
    let algorithm = algorithm.unwrap_or_else(|| filter_grad_algorithm(&w, out_c));
    float_kernel(
        OP,
        [x, dy],
        filter_shape,
        |x, dy| conv2d_backprop_filter_typed(algorithm, &w, x, dy, out_c),
        |x, dy| conv2d_backprop_filter_typed(algorithm, &w, x, dy, out_c),
    )
}

pub(super) fn check_output_gradient(
    op: &'static str,
    w: &Window2d,
    out_c: usize,
    dy: &Array,
) -> Result<()> {
    let expected = [w.batch, w.out_h, w.out_w, out_c];
    if dy.shape() != expected {
        return Err(Error::invalid(
            op,
            format!(
                "the output gradient must have shape {expected:?}, received {:?}",
                dy.shape()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::simd::{at_level, SimdLevel};

    #[test]
    fn gemm_strided_refuses_operands_its_strides_leave() {
        // A 2×3 row-major operand needs 6 elements; transposed strides reach the same ones.
        assert!(strided_fits(6, 2, 3, 3, 1) && strided_fits(6, 3, 2, 1, 3));
        assert!(!strided_fits(5, 2, 3, 3, 1));
        assert!(!strided_fits(100, 2, 3, -3, 1)); // before the slice's start
        assert!(!strided_fits(usize::MAX, 2, 2, isize::MAX, 1)); // the offset overflows
        let result = std::panic::catch_unwind(|| {
            let mut dst = [0.0f32; 4];
            gemm_strided(
                2,
                2,
                2,
                &mut dst,
                false,
                (&[1.0; 3], 2, 1),
                (&[1.0; 4], 2, 1),
                false,
            )
        });
        assert!(result.is_err(), "a 3-element lhs read as 2×2");
        let mut dst = [0.0f32; 4];
        let (a, b) = ([1.0, 2.0, 3.0, 4.0], [1.0, 0.0, 0.0, 1.0]);
        gemm_strided(2, 2, 2, &mut dst, false, (&a, 2, 1), (&b, 2, 1), false);
        assert_eq!(dst, a);
    }

    /// Direct convolution by definition, in f64.
    fn conv_reference(
        x: &[f64],
        xs: [usize; 4],
        f: &[f64],
        fs: [usize; 4],
        w: &Window2d,
    ) -> Vec<f64> {
        let mut out = vec![0.0; xs[0] * w.out_h * w.out_w * fs[3]];
        for n in 0..xs[0] {
            for oy in 0..w.out_h {
                for ox in 0..w.out_w {
                    for co in 0..fs[3] {
                        let mut acc = 0.0;
                        for ky in 0..fs[0] {
                            for kx in 0..fs[1] {
                                let (Some(iy), Some(ix)) =
                                    (w.source(oy, ky, 0), w.source(ox, kx, 1))
                                else {
                                    continue;
                                };
                                for ci in 0..fs[2] {
                                    acc += x[((n * xs[1] + iy) * xs[2] + ix) * xs[3] + ci]
                                        * f[((ky * fs[1] + kx) * fs[2] + ci) * fs[3] + co];
                                }
                            }
                        }
                        out[((n * w.out_h + oy) * w.out_w + ox) * fs[3] + co] = acc;
                    }
                }
            }
        }
        out
    }

    fn ramp(len: usize, scale: f64) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7919) % 23) as f64 * scale - 0.3)
            .collect()
    }

    #[test]
    fn conv2d_matches_the_definition_for_strides_dilations_and_padding() {
        let cases = [
            ([2, 5, 6, 3], [3, 3, 3, 4], [1, 1], [1, 1], Padding::Same),
            ([3, 7, 5, 2], [3, 2, 2, 3], [2, 2], [1, 1], Padding::Same),
            ([1, 6, 6, 2], [3, 3, 2, 2], [1, 1], [2, 2], Padding::Valid),
            ([2, 4, 4, 3], [1, 1, 3, 5], [1, 1], [1, 1], Padding::Valid),
            ([4, 8, 8, 2], [2, 2, 2, 2], [2, 1], [1, 1], Padding::Valid),
            // One input channel (the direct forward path), large enough to split images across threads.
            ([8, 28, 28, 1], [3, 3, 1, 16], [1, 1], [1, 1], Padding::Same),
            ([3, 9, 7, 1], [3, 3, 1, 4], [1, 1], [2, 1], Padding::Valid),
            ([2, 9, 7, 3], [3, 2, 3, 20], [2, 2], [1, 1], Padding::Same),
            // Patches longer than 32 elements (im2col + gemm): strides, dilation, padding on
            // both sides and windows wider than the image's padding.
            ([2, 9, 7, 8], [3, 3, 8, 5], [2, 2], [1, 1], Padding::Same),
            ([2, 9, 8, 6], [3, 2, 6, 3], [1, 1], [2, 2], Padding::Valid),
            ([2, 9, 8, 6], [3, 3, 6, 3], [1, 1], [2, 2], Padding::Same),
            ([2, 7, 7, 5], [2, 3, 5, 4], [2, 1], [1, 1], Padding::Valid),
            ([1, 6, 5, 4], [5, 5, 4, 2], [1, 1], [1, 1], Padding::Same),
            ([1, 3, 2, 4], [5, 5, 4, 2], [2, 2], [1, 1], Padding::Same),
            // Large enough for image groups to be split across threads.
            (
                [6, 32, 32, 16],
                [3, 3, 16, 4],
                [1, 1],
                [1, 1],
                Padding::Same,
            ),
        ];
        for (xs, fs, stride, dilation, padding) in cases {
            let params = Conv2dParams {
                stride,
                dilation,
                padding,
            };
            let x = ramp(xs.iter().product(), 0.1);
            let f = ramp(fs.iter().product(), 0.05);
            let xa = Array::from_vec(x.clone(), &xs).unwrap();
            let fa = Array::from_vec(f.clone(), &fs).unwrap();
            let w = params.window("test", &xs, &fs).unwrap();
            let got = conv2d(&xa, &fa, None, &params).unwrap().to_vec::<f64>();
            let want = conv_reference(&x, xs, &f, fs, &w);
            for (g, e) in got.iter().zip(&want) {
                assert!((g - e).abs() < 1e-12, "{xs:?} {fs:?}: {g} vs {e}");
            }
            // The bias lands on every output pixel, in the same pass.
            let bias = ramp(fs[3], 0.3);
            let ba = Array::from_vec(bias.clone(), &[fs[3]]).unwrap();
            let with_bias = conv2d(&xa, &fa, Some(&ba), &params)
                .unwrap()
                .to_vec::<f64>();
            for (i, (g, e)) in with_bias.iter().zip(&want).enumerate() {
                let e = e + bias[i % fs[3]];
                assert!((g - e).abs() < 1e-12, "{xs:?} {fs:?} + bias: {g} vs {e}");
            }
            // The backward passes are the adjoints: <conv(x, f), dy> = <x, dx(dy)> = <f, df(dy)>.
            let dy = ramp(want.len(), 0.01);
            let dya = Array::from_vec(dy.clone(), &[w.batch, w.out_h, w.out_w, fs[3]]).unwrap();
            let dx = conv2d_backprop_input(&xs, &fa, &dya, &params)
                .unwrap()
                .to_vec::<f64>();
            let df = conv2d_backprop_filter(&xa, &fs, &dya, &params)
                .unwrap()
                .to_vec::<f64>();
            let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
            let lhs = dot(&want, &dy);
            let close = |b: f64| (lhs - b).abs() <= 1e-10 * lhs.abs().max(1.0);
            assert!(close(dot(&x, &dx)), "{xs:?}: {lhs} vs {}", dot(&x, &dx));
            assert!(close(dot(&f, &df)), "{xs:?}: {lhs} vs {}", dot(&f, &df));
        }
    }

    /// Values in [-1, 1) from a small linear congruential generator (deterministic).
    pub(in crate::kernels) fn noise(len: usize, seed: u64) -> Vec<f64> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// Every algorithm, forced on shapes that stress its edges (channels that are not a
    /// multiple of the 16 lanes, images smaller than a tile or not a multiple of it, valid and
    /// same padding, groups split across threads), computes the float32 convolution to within
    /// its error bound of the float64 definition. The bound is relative to the sum of the
    /// absolute products (`|x| * |f|` convolved), the scale float32 rounding works at.
    #[test]
    fn every_algorithm_matches_the_float64_definition_at_every_level() {
        let cases = [
            ([2, 5, 7, 3], 4, Padding::Same),
            ([1, 1, 1, 8], 3, Padding::Same),
            ([3, 6, 9, 17], 19, Padding::Same),
            ([2, 8, 8, 16], 16, Padding::Valid),
            ([1, 13, 11, 33], 5, Padding::Same),
            ([2, 4, 3, 8], 20, Padding::Valid),
            ([1, 3, 3, 8], 8, Padding::Valid),
            ([6, 14, 14, 32], 32, Padding::Same),
            ([40, 7, 7, 64], 64, Padding::Same),
        ];
        let algorithms = [
            // Measured worst cases: 2.6e-7 direct, 2.0e-7 im2col, 1.3e-7 F(2x2); F(4x4) 1.4e-6
            // forward, 9.6e-6 input gradient of the VALID window (see `winograd.rs`).
            (ConvAlgorithm::Direct, 1e-6),
            (ConvAlgorithm::Im2col, 1e-6),
            (ConvAlgorithm::Winograd(WinogradTile::F2), 1e-6),
            (ConvAlgorithm::Winograd(WinogradTile::F4), 1.5e-5),
        ];
        let check = |what: &str, got: &[f32], want: &[f64], scale: &[f64], bound: f64| {
            assert_eq!(got.len(), want.len(), "{what}");
            for (i, ((g, e), s)) in got.iter().zip(want).zip(scale).enumerate() {
                let tolerance = bound * s + 1e-7;
                assert!(
                    (f64::from(*g) - e).abs() <= tolerance,
                    "{what}, element {i}: {g} vs {e} (tolerance {tolerance})"
                );
            }
        };
        for (seed, (xs, out_c, padding)) in cases.into_iter().enumerate() {
            let fs = [3, 3, xs[3], out_c];
            let params = Conv2dParams {
                stride: [1, 1],
                dilation: [1, 1],
                padding,
            };
            let w = params.window("test", &xs, &fs).unwrap();
            let x = noise(xs.iter().product(), seed as u64);
            let f = noise(fs.iter().product(), 100 + seed as u64);
            let bias = noise(out_c, 200 + seed as u64);
            let dy = noise(w.batch * w.out_h * w.out_w * out_c, 300 + seed as u64);
            let [(mut want, mut scale), (want_df, scale_df), (want_dx, scale_dx)] =
                window_sums_reference(&w, &x, &f, &dy, out_c);
            for (i, (e, s)) in want.iter_mut().zip(&mut scale).enumerate() {
                *e += bias[i % out_c];
                *s += bias[i % out_c].abs();
            }
            let to32 = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
            let (x32, f32_, b32) = (to32(&x), to32(&f), to32(&bias));
            let filter = Array::from_vec(f32_.clone(), &fs).unwrap();
            let input = Array::from_vec(x32.clone(), &xs).unwrap();
            let dy = Array::from_vec(to32(&dy), &[w.batch, w.out_h, w.out_w, out_c]).unwrap();
            for level in SimdLevel::ALL {
                for (algorithm, bound) in algorithms {
                    let what = format!("{algorithm:?} {xs:?} -> {out_c} at {level:?}");
                    let (got, dx, df) = at_level(level, || {
                        let dx =
                            conv2d_backprop_input_by(Some(algorithm), &xs, &filter, &dy, &params);
                        let df =
                            conv2d_backprop_filter_by(Some(algorithm), &input, &fs, &dy, &params);
                        (
                            conv2d_with(algorithm, &w, &x32, &f32_, Some(&b32), out_c),
                            dx.unwrap().to_vec::<f32>(),
                            df.unwrap().to_vec::<f32>(),
                        )
                    });
                    check(&format!("{what}: forward"), &got, &want, &scale, bound);
                    check(
                        &format!("{what}: input gradient"),
                        &dx,
                        &want_dx,
                        &scale_dx,
                        bound,
                    );
                    check(
                        &format!("{what}: filter gradient"),
                        &df,
                        &want_df,
                        &scale_df,
                        bound,
                    );
                }
            }
        }
    }

    /// The three sums of a convolution in float64, by definition, each paired with the same
    /// sum of absolute values (the scale float32 rounding works at): the output, the filter
    /// gradient and the input gradient.
    #[allow(clippy::type_complexity)]
    pub(in crate::kernels) fn window_sums_reference(
        w: &Window2d,
        x: &[f64],
        f: &[f64],
        dy: &[f64],
        out_c: usize,
    ) -> [(Vec<f64>, Vec<f64>); 3] {
        let c = w.channels;
        let mut out = (vec![0.0; dy.len()], vec![0.0; dy.len()]);
        let mut df = (vec![0.0; f.len()], vec![0.0; f.len()]);
        let mut dx = (vec![0.0; x.len()], vec![0.0; x.len()]);
        for n in 0..w.batch {
            for oy in 0..w.out_h {
                for ox in 0..w.out_w {
                    for ky in 0..w.k_h {
                        for kx in 0..w.k_w {
                            let (Some(iy), Some(ix)) = (w.source(oy, ky, 0), w.source(ox, kx, 1))
                            else {
                                continue;
                            };
                            for ci in 0..c {
                                let xi = ((n * w.in_h + iy) * w.in_w + ix) * c + ci;
                                for co in 0..out_c {
                                    let fi = ((ky * w.k_w + kx) * c + ci) * out_c + co;
                                    let oi = ((n * w.out_h + oy) * w.out_w + ox) * out_c + co;
                                    out.0[oi] += x[xi] * f[fi];
                                    out.1[oi] += (x[xi] * f[fi]).abs();
                                    df.0[fi] += x[xi] * dy[oi];
                                    df.1[fi] += (x[xi] * dy[oi]).abs();
                                    dx.0[xi] += f[fi] * dy[oi];
                                    dx.1[xi] += (f[fi] * dy[oi]).abs();
                                }
                            }
                        }
                    }
                }
            }
        }
        [out, df, dx]
    }

    #[test]
    fn same_padding_puts_the_odd_row_after() {
        let w = Window2d::new("t", &[1, 4, 4, 1], [2, 2], [2, 2], [1, 1], Padding::Same).unwrap();
        assert_eq!((w.out_h, w.pad_top), (2, 0));
        let w = Window2d::new("t", &[1, 5, 5, 1], [3, 3], [2, 2], [1, 1], Padding::Same).unwrap();
        assert_eq!((w.out_h, w.pad_top), (3, 1));
        assert!(Window2d::new("t", &[1, 2, 2, 1], [3, 3], [1, 1], [1, 1], Padding::Valid).is_err());
    }
}
