//! Direct float32 convolution on channels-last data: the window sums are accumulated in vector
//! registers, with no patch matrix and no transform.
//!
//! One register-blocked microkernel ([`tile`]) does all the arithmetic. It keeps a block of
//! `P` rows × `V` vectors of results in registers and adds `a[p] · b[v]` onto it, `a[p]` a
//! broadcast scalar and `b[v]` a vector of consecutive output channels, over a list of
//! [`Run`]s: each run is a contiguous sequence of steps with fixed increments. Three problems
//! take that form:
//! - **the convolution** (and so the input gradient of a stride-1 convolution, which is a
//!   convolution of `dy` with the flipped filter): `P` adjacent output pixels of one row, the
//!   runs being the window's taps and the steps the input channels. The input is first copied
//!   into a zero-bordered image, so every tap reads inside it and a row of outputs needs no
//!   edge cases;
//! - **the filter gradient**: `P` input channels of one tap, the runs being the rows of output
//!   pixels whose tap lands inside the image and the steps those pixels (no padded copy: the
//!   runs simply skip what falls outside). An input of one to three channels (a first layer)
//!   takes a window row's taps and channels together as the rows instead, from the
//!   zero-bordered copy where they lie side by side;
//! - **small matrix products** ([`small_product`]): Winograd's per-point products, too small
//!   to pay for the gemm's packing.
//!
//! The block is as large as the registers allow: AVX-512's 32 registers hold up to 24
//! accumulators plus the `V` filter vectors and the broadcast, so one step issues `P·V` fused
//! multiply-adds for `P + V` loads, which keeps the FMA units, not the loads, the limit. AVX2
//! has 16 registers, so its blocks are smaller. Below AVX2 (no FMA) this module declines and
//! the caller uses im2col.
//!
//! Why this beats im2col + gemm on a small CNN's layers (7×7 to 28×28 images): im2col writes
//! and reads back a patch matrix nine times the input's size, and the gemm packs it once more,
//! where this reads each input pixel from L1 for all taps. From 16 channels on, 3×3 layers go
//! through Winograd's F(4×4) instead, which does fewer multiplications (with this microkernel
//! doing them); this kernel keeps the other shapes, first layers of one to three channels
//! among them. Measured figures are in `conv.rs` beside the choice of algorithm.

use std::arch::x86_64::*;

use rayon::prelude::*;

use super::conv::Window2d;
use super::lanes::FmaLanes;
use crate::simd::{self, SimdLevel};
use crate::{interrupt, pool};

/// Steps `a[start..] / b[start..]` taken `len` times, offsets from the tile's bases.
#[derive(Clone, Copy, Debug)]
struct Run {
    a: usize,
    b: usize,
    len: usize,
}

/// How a tile's accumulators start.
#[derive(Clone, Copy)]
enum Start<'a> {
    Zero,
    /// The same vector row for every `p` (the bias).
    Row(&'a [f32]),
    /// The tile's own results (accumulating onto them).
    Load,
}

/// One block of results and the runs that produce it.
struct Tile<'a> {
    a: &'a [f32],
    /// Between the `P` broadcasts of one step.
    a_lane: usize,
    a_step: usize,
    b: &'a [f32],
    b_step: usize,
    runs: &'a [Run],
    c: &'a mut [f32],
    /// Between the `P` result rows.
    c_row: usize,
    start: Start<'a>,
}

impl Tile<'_> {
    /// Panics unless every element the microkernel touches for `p` rows and `v` vectors of
    /// `width` lanes is inside the slices: this makes its unchecked accesses sound.
    fn check(&self, p: usize, width_v: usize) {
        let last_c = (p - 1) * self.c_row + width_v;
        assert!(
            last_c <= self.c.len(),
            "direct conv: result block out of range"
        );
        if let Start::Row(row) = self.start {
            assert!(width_v <= row.len(), "direct conv: bias row out of range");
        }
        for r in self.runs.iter().filter(|r| r.len > 0) {
            let last_a = r.a + (r.len - 1) * self.a_step + (p - 1) * self.a_lane;
            let last_b = r.b + (r.len - 1) * self.b_step + width_v;
            assert!(
                last_a < self.a.len() && last_b <= self.b.len(),
                "direct conv: run out of range"
            );
        }
    }
}

/// The microkernel: `c[p][v] = start + Σ_runs Σ_steps a[p] · b[v]`.
///
/// # Safety
/// The CPU has `L`'s instructions, and `t.check(P, V · L::WIDTH)` passed.
#[inline(always)]
unsafe fn tile<L: FmaLanes, const V: usize, const P: usize>(t: &mut Tile) {
    let mut acc = [[L::zero(); V]; P];
    let c = t.c.as_mut_ptr();
    match t.start {
        Start::Zero => {}
        Start::Row(row) => {
            for v in 0..V {
                let r = L::load(row.as_ptr().add(v * L::WIDTH));
                for accp in acc.iter_mut() {
                    accp[v] = r;
                }
            }
        }
        Start::Load => {
            for (p, accp) in acc.iter_mut().enumerate() {
                for (v, a) in accp.iter_mut().enumerate() {
                    *a = L::load(c.add(p * t.c_row + v * L::WIDTH));
                }
            }
        }
    }
    for run in t.runs {
        let mut a = t.a.as_ptr().add(run.a);
        let mut b = t.b.as_ptr().add(run.b);
        for _ in 0..run.len {
            let mut bv = [L::zero(); V];
            for (v, bvv) in bv.iter_mut().enumerate() {
                *bvv = L::load(b.add(v * L::WIDTH));
            }
            for (p, accp) in acc.iter_mut().enumerate() {
                let av = L::splat(a.add(p * t.a_lane));
                for v in 0..V {
                    accp[v] = L::fma(av, bv[v], accp[v]);
                }
            }
            // Wrapping: after a run's last step the pointers may pass the slices' ends
            // unused.
            a = a.wrapping_add(t.a_step);
            b = b.wrapping_add(t.b_step);
        }
    }
    for (p, accp) in acc.iter().enumerate() {
        for (v, a) in accp.iter().enumerate() {
            a.store(c.add(p * t.c_row + v * L::WIDTH));
        }
    }
}

/// [`tile`] on AVX-512 vectors.
///
/// # Safety
/// The CPU has AVX-512 F/VL and FMA, and `t.check(P, V · 16)` passed.
#[target_feature(enable = "avx512f,avx512vl,fma")]
unsafe fn tile_avx512<const V: usize, const P: usize>(t: &mut Tile) {
    tile::<__m512, V, P>(t)
}

/// [`tile`] on AVX2 vectors.
///
/// # Safety
/// The CPU has AVX2 and FMA, and `t.check(P, V · 8)` passed.
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_avx2<const V: usize, const P: usize>(t: &mut Tile) {
    tile::<__m256, V, P>(t)
}

/// The register blocking for one instruction set: vectors per block, and the most rows for
/// each block width (accumulators `P·V` plus `V` operands plus a broadcast within the
/// register file, rows capped at 8 to bound the number of compiled variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Blocking {
    width: usize,
    vectors: usize,
    max_rows: usize,
}

/// The blocking for `out_c` output channels at the level in force, if there is one: the
/// channels must fill whole vectors.
fn blocking(out_c: usize) -> Option<Blocking> {
    let (width, choices): (usize, &[(usize, usize)]) = match simd::level() {
        SimdLevel::Avx512 => (16, &[(4, 6), (2, 8), (1, 8)]),
        SimdLevel::Avx2 => (8, &[(2, 6), (1, 8)]),
        SimdLevel::Baseline => return None,
    };
    if out_c == 0 || !out_c.is_multiple_of(width) {
        return None;
    }
    choices
        .iter()
        .find(|&&(v, _)| (out_c / width).is_multiple_of(v))
        .map(|&(vectors, max_rows)| Blocking {
            width,
            vectors,
            max_rows,
        })
}

/// Runs the microkernel for `rows` rows (at most the blocking's `max_rows`).
fn run_tile(blocking: Blocking, rows: usize, t: &mut Tile) {
    t.check(rows, blocking.vectors * blocking.width);
    macro_rules! pick {
        ($f:ident, $v:literal, [$($p:literal),*]) => {
            match rows {
                $($p => $f::<$v, $p>(t),)*
                _ => unreachable!("rows within the blocking"),
            }
        };
    }
    // SAFETY: `blocking` came from `simd::level()`, which never exceeds what the CPU has, and
    // `check` just bounded every access of the tile.
    unsafe {
        match (blocking.width, blocking.vectors) {
            (16, 4) => pick!(tile_avx512, 4, [1, 2, 3, 4, 5, 6]),
            (16, 2) => pick!(tile_avx512, 2, [1, 2, 3, 4, 5, 6, 7, 8]),
            (16, 1) => pick!(tile_avx512, 1, [1, 2, 3, 4, 5, 6, 7, 8]),
            (8, 2) => pick!(tile_avx2, 2, [1, 2, 3, 4, 5, 6]),
            (8, 1) => pick!(tile_avx2, 1, [1, 2, 3, 4, 5, 6, 7, 8]),
            _ => unreachable!("a blocking `blocking` makes"),
        }
    }
}

/// `len` split into the fewest pieces of at most `max`, as even as possible: `(start, size)`.
fn even_pieces(len: usize, max: usize) -> impl Iterator<Item = (usize, usize)> {
    let pieces = len.div_ceil(max).max(1);
    let (base, extra) = (len / pieces, len % pieces);
    (0..pieces).scan(0, move |start, i| {
        let size = base + usize::from(i < extra);
        let piece = (*start, size);
        *start += size;
        Some(piece)
    })
}

/// `c (rows × n) [+]= a (rows × k) · b (k × n)` by the microkernel, where `a[r][s]` is
/// `a[r·a_row + s·a_step]` and `b` and `c` are row-major with packed rows: a product small
/// enough that packing it for the gemm would cost more than the arithmetic (Winograd's
/// per-point products, with 16 to 64 channels). `accumulate` adds onto `c` instead of
/// overwriting it. `false`, touching nothing, where `n` does not fill whole vectors at the
/// level in force.
pub(super) fn small_product(
    a: &[f32],
    (a_row, a_step): (usize, usize),
    b: &[f32],
    (rows, k, n): (usize, usize, usize),
    c: &mut [f32],
    accumulate: bool,
) -> bool {
    let Some(blocking) = blocking(n) else {
        return false;
    };
    if rows == 0 {
        return true;
    }
    if k == 0 {
        if !accumulate {
            c[..rows * n].fill(0.0);
        }
        return true;
    }
    let runs = [Run { a: 0, b: 0, len: k }];
    let block_c = blocking.vectors * blocking.width;
    for (r0, count) in even_pieces(rows, blocking.max_rows) {
        for oc in (0..n).step_by(block_c) {
            let mut t = Tile {
                a: &a[r0 * a_row..],
                a_lane: a_row,
                a_step,
                b: &b[oc..],
                b_step: n,
                runs: &runs,
                c: &mut c[r0 * n + oc..],
                c_row: n,
                start: if accumulate { Start::Load } else { Start::Zero },
            };
            run_tile(blocking, count, &mut t);
        }
    }
    true
}

/// Whether [`conv`] and [`backprop_filter`] compute this shape at the level in force: stride
/// 1, no dilation, output channels filling whole vectors.
pub fn applies(w: &Window2d, out_c: usize) -> bool {
    w.stride == [1, 1]
        && w.dilation == [1, 1]
        && w.channels > 0
        && w.batch * w.out_h * w.out_w > 0
        && blocking(out_c).is_some()
}

/// The rows and columns of [`padded_input`]'s images.
fn padded_size(w: &Window2d) -> (usize, usize) {
    (w.out_h + w.k_h - 1, w.out_w + w.k_w - 1)
}

/// `x` with each image inside a border of zeros: output pixel (oy, ox) of a stride-1,
/// undilated window reads rows `oy..oy + k_h` and columns `ox..ox + k_w` of it.
fn padded_input(w: &Window2d, x: &[f32]) -> Vec<f32> {
    let c = w.channels;
    let (ph, pw) = padded_size(w);
    let padded_image = ph * pw * c;
    // Every element is written below.
    let mut padded = pool::overwritten::<f32>(w.batch * padded_image);
    let pad_image = |n: usize, dst: &mut [f32]| {
        let image = &x[n * w.in_h * w.in_w * c..][..w.in_h * w.in_w * c];
        for (py, row) in dst.chunks_exact_mut(pw * c).enumerate() {
            let Some(iy) = py.checked_sub(w.pad_top).filter(|&iy| iy < w.in_h) else {
                row.fill(0.0);
                continue;
            };
            let src = &image[iy * w.in_w * c..][..w.in_w * c];
            // Columns px = ix + pad_left; those outside 0..in_w are zeros.
            let first = w.pad_left.min(pw);
            let copied = w.in_w.min(pw - first);
            row[..first * c].fill(0.0);
            row[first * c..(first + copied) * c].copy_from_slice(&src[..copied * c]);
            row[(first + copied) * c..].fill(0.0);
        }
    };
    if padded.len() >= super::PARALLEL_THRESHOLD {
        padded
            .par_chunks_mut(padded_image)
            .enumerate()
            .for_each(|(n, dst)| pad_image(n, dst));
    } else {
        padded
            .chunks_mut(padded_image)
            .enumerate()
            .for_each(|(n, dst)| pad_image(n, dst));
    }
    padded
}

/// The convolution of NHWC `x` with the HWIO `filter` (plus `bias`), or `None` where
/// [`applies`] is false.
pub fn conv(
    w: &Window2d,
    x: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    out_c: usize,
) -> Option<Vec<f32>> {
    if !applies(w, out_c) {
        return None;
    }
    let blocking = blocking(out_c)?;
    let c = w.channels;
    let (ph, pw) = padded_size(w);
    let padded = padded_input(w, x);
    // One run per tap: the tap's pixel in the padded image, and its filter rows.
    let runs: Vec<Run> = (0..w.k_h * w.k_w)
        .map(|tap| Run {
            a: ((tap / w.k_w) * pw + tap % w.k_w) * c,
            b: tap * c * out_c,
            len: c,
        })
        .collect();
    let row_len = w.out_w * out_c;
    let mut out = pool::overwritten::<f32>(w.batch * w.out_h * row_len);
    let parallel = out.len() * w.k_h * w.k_w * c >= super::PARALLEL_THRESHOLD;
    let block_c = blocking.vectors * blocking.width;
    let one_row = |r: usize, dst: &mut [f32]| {
        let (n, oy) = (r / w.out_h, r % w.out_h);
        let row_start = (n * ph + oy) * pw * c;
        for (ox, rows) in even_pieces(w.out_w, blocking.max_rows) {
            for oc in (0..out_c).step_by(block_c) {
                let mut t = Tile {
                    a: &padded[row_start + ox * c..],
                    a_lane: c,
                    a_step: 1,
                    b: &filter[oc..],
                    b_step: out_c,
                    runs: &runs,
                    c: &mut dst[ox * out_c + oc..],
                    c_row: out_c,
                    start: bias.map_or(Start::Zero, |b| Start::Row(&b[oc..])),
                };
                run_tile(blocking, rows, &mut t);
            }
        }
    };
    if parallel {
        out.par_chunks_mut(row_len)
            .enumerate()
            .with_min_len(4)
            .for_each(|(r, dst)| {
                if !interrupt::requested() {
                    one_row(r, dst)
                }
            });
    } else {
        for (r, dst) in out.chunks_mut(row_len).enumerate() {
            if interrupt::requested() {
                break;
            }
            one_row(r, dst);
        }
    }
    Some(out)
}

/// Bytes of input and output gradient per group of images the filter gradient walks through
/// for every tap and channel block: small enough to stay in L2 across those passes.
const FILTER_GRAD_GROUP_BYTES: usize = 192 * 1024;

/// Input channels below which the filter gradient's rows span a window row's taps (see
/// [`backprop_filter`]).
const NARROW_INPUT: usize = 4;

/// The gradient of [`conv`] in its HWIO filter (`k_h × k_w × channels × out_c`), or `None`
/// where [`applies`] is false.
///
/// The microkernel's rows are input channels of one tap, and its runs the rows of output
/// pixels whose tap lands inside the image, so nothing outside is computed. With fewer than
/// [`NARROW_INPUT`] input channels (an image's first layer) a tap has too few rows to keep the
/// FMA units busy; there the rows are a window row's taps and channels together, which lie
/// side by side in the zero-bordered input ([`padded_input`]).
pub fn backprop_filter(w: &Window2d, x: &[f32], dy: &[f32], out_c: usize) -> Option<Vec<f32>> {
    if !applies(w, out_c) {
        return None;
    }
    let blocking = blocking(out_c)?;
    let c = w.channels;
    let filter_len = w.k_h * w.k_w * c * out_c;
    let narrow = c < NARROW_INPUT;
    let padded = narrow.then(|| padded_input(w, x));
    let (ph, pw) = padded_size(w);
    let in_image = if narrow {
        ph * pw * c
    } else {
        w.in_h * w.in_w * c
    };
    let out_image = w.out_h * w.out_w * out_c;
    let group = (FILTER_GRAD_GROUP_BYTES / (4 * (in_image + out_image)).max(1)).clamp(1, w.batch);
    let groups = w.batch.div_ceil(group);
    let block_c = blocking.vectors * blocking.width;
    // Adds `Σ a[row + i] · dy[..]` over `runs` onto the filter rows from `first_row` on, for
    // `rows` rows.
    let add_rows = |acc: &mut [f32], a: &[f32], runs: &[Run], first_row: usize, rows: usize| {
        for (i, count) in even_pieces(rows, blocking.max_rows) {
            for oc in (0..out_c).step_by(block_c) {
                let mut t = Tile {
                    a: &a[i..],
                    a_lane: 1,
                    a_step: c,
                    b: &dy[oc..],
                    b_step: out_c,
                    runs,
                    c: &mut acc[(first_row + i) * out_c + oc..],
                    c_row: out_c,
                    start: Start::Load,
                };
                run_tile(blocking, count, &mut t);
            }
        }
    };
    // Adds the gradient of the images of group `g` onto `acc`.
    let add_group = |acc: &mut Vec<f32>, g: usize, runs: &mut Vec<Run>| {
        if interrupt::requested() {
            return;
        }
        let images = g * group..((g + 1) * group).min(w.batch);
        if let Some(padded) = &padded {
            // Rows (kx, ci) of window row ky: contiguous in the padded image and in the filter.
            for ky in 0..w.k_h {
                runs.clear();
                for n in images.clone() {
                    for oy in 0..w.out_h {
                        runs.push(Run {
                            a: n * in_image + (oy + ky) * pw * c,
                            b: n * out_image + oy * w.out_w * out_c,
                            len: w.out_w,
                        });
                    }
                }
                add_rows(acc, padded, runs, ky * w.k_w * c, w.k_w * c);
            }
            return;
        }
        for ky in 0..w.k_h {
            for kx in 0..w.k_w {
                // The output pixels whose tap (ky, kx) lands inside the image.
                let oy_range = w.outputs_reading_tap(ky, 0);
                let ox_range = w.outputs_reading_tap(kx, 1);
                if oy_range.is_empty() || ox_range.is_empty() {
                    continue;
                }
                runs.clear();
                for n in images.clone() {
                    for oy in oy_range.clone() {
                        let iy = oy + ky - w.pad_top;
                        let ix = ox_range.start + kx - w.pad_left;
                        runs.push(Run {
                            a: n * in_image + (iy * w.in_w + ix) * c,
                            b: n * out_image + (oy * w.out_w + ox_range.start) * out_c,
                            len: ox_range.len(),
                        });
                    }
                }
                add_rows(acc, x, runs, (ky * w.k_w + kx) * c, c);
            }
        }
    };
    let parallel = w.batch * w.out_h * w.out_w * out_c * c >= super::PARALLEL_THRESHOLD;
    let parts = if parallel {
        rayon::current_num_threads().min(groups)
    } else {
        1
    };
    // Each part sums a fixed range of groups and the parts are added in order, so the result
    // does not depend on how the pool schedules them (a traced step must equal the eager one).
    let per_part = groups.div_ceil(parts);
    let sum_part = |part: usize| {
        let (mut acc, mut runs) = (vec![0.0f32; filter_len], Vec::new());
        for g in part * per_part..((part + 1) * per_part).min(groups) {
            add_group(&mut acc, g, &mut runs);
        }
        acc
    };
    let partial: Vec<Vec<f32>> = if parts > 1 {
        (0..parts).into_par_iter().map(sum_part).collect()
    } else {
        vec![sum_part(0)]
    };
    let mut partial = partial.into_iter();
    let mut grad = partial.next().expect("at least one part");
    for part in partial {
        grad.iter_mut().zip(&part).for_each(|(g, p)| *g += *p);
    }
    Some(grad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::conv::tests::{noise, window_sums_reference};
    use crate::kernels::{conv2d_backprop_input_by, Conv2dParams, ConvAlgorithm, Padding};
    use crate::simd::at_level;
    use crate::Array;

    #[test]
    fn even_pieces_cover_the_length_in_near_equal_parts() {
        let pieces: Vec<_> = even_pieces(7, 6).collect();
        assert_eq!(pieces, [(0, 4), (4, 3)]);
        let pieces: Vec<_> = even_pieces(28, 8).collect();
        assert_eq!(pieces, [(0, 7), (7, 7), (14, 7), (21, 7)]);
        let pieces: Vec<_> = even_pieces(5, 8).collect();
        assert_eq!(pieces, [(0, 5)]);
    }

    #[test]
    fn blocking_fills_whole_vectors_or_declines() {
        for level in SimdLevel::ALL {
            let found = at_level(level, || [16, 32, 48, 64, 8, 3].map(blocking));
            let vectors = found.map(|b| b.map(|b| b.vectors));
            match simd::detected().min(level) {
                SimdLevel::Baseline => assert!(found.iter().all(Option::is_none)),
                SimdLevel::Avx2 => {
                    assert_eq!(vectors, [Some(2), Some(2), Some(2), Some(2), Some(1), None])
                }
                SimdLevel::Avx512 => {
                    assert_eq!(vectors, [Some(1), Some(2), Some(1), Some(4), None, None])
                }
            }
        }
    }

    fn assert_close(what: &str, got: &[f32], (want, scale): &(Vec<f64>, Vec<f64>)) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        for (i, ((g, e), s)) in got.iter().zip(want).zip(scale).enumerate() {
            // Float32 sums of a few hundred products: a few ulps of the absolute sum.
            let tolerance = 1e-6 * s + 1e-7;
            assert!(
                (f64::from(*g) - e).abs() <= tolerance,
                "{what}, element {i}: {g} vs {e} (tolerance {tolerance})"
            );
        }
    }

    /// At every SIMD level, the direct kernel (where it takes the shape) computes the
    /// convolution, its filter gradient and, through the convolution of `dy` with the flipped
    /// filter, its input gradient, to float32 rounding of the float64 definition. The shapes
    /// stress its edges: rows of one pixel and rows longer than a block, one input channel
    /// and channel counts that fill no block of rows, every block width, valid and same
    /// padding, windows that are not 3×3 or not square, and batches split across threads.
    #[test]
    fn the_direct_kernel_matches_the_float64_definition_at_every_level() {
        let cases: [([usize; 4], [usize; 2], usize, Padding); 11] = [
            ([2, 5, 7, 3], [3, 3], 16, Padding::Same),
            ([1, 1, 1, 8], [3, 3], 32, Padding::Same),
            ([3, 6, 13, 17], [3, 3], 48, Padding::Same),
            ([2, 8, 9, 16], [3, 3], 64, Padding::Valid),
            ([1, 11, 3, 33], [5, 5], 16, Padding::Same),
            ([2, 4, 9, 6], [2, 3], 8, Padding::Valid),
            ([2, 7, 7, 5], [1, 4], 24, Padding::Same),
            ([4, 28, 28, 1], [3, 3], 16, Padding::Same),
            ([2, 9, 6, 2], [5, 5], 32, Padding::Valid),
            ([3, 6, 5, 2], [2, 3], 16, Padding::Same),
            ([24, 7, 7, 64], [3, 3], 64, Padding::Same),
        ];
        let params = |padding| Conv2dParams {
            stride: [1, 1],
            dilation: [1, 1],
            padding,
        };
        let mut taken = 0;
        for (seed, (xs, k, out_c, padding)) in cases.into_iter().enumerate() {
            let fs = [k[0], k[1], xs[3], out_c];
            let w = params(padding).window("test", &xs, &fs).unwrap();
            let seed = seed as u64;
            let x = noise(xs.iter().product(), seed);
            let f = noise(fs.iter().product(), 100 + seed);
            let bias = noise(out_c, 200 + seed);
            let dy = noise(w.batch * w.out_h * w.out_w * out_c, 300 + seed);
            let [mut out, df, dx] = window_sums_reference(&w, &x, &f, &dy, out_c);
            for (i, o) in out.0.iter_mut().enumerate() {
                *o += bias[i % out_c];
                out.1[i] += bias[i % out_c].abs();
            }
            let to32 = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
            let (x32, f32_, b32, dy32) = (to32(&x), to32(&f), to32(&bias), to32(&dy));
            for level in SimdLevel::ALL {
                let what = format!("{xs:?} * {fs:?} at {level:?}");
                let (conv, grad, input_grad) = at_level(level, || {
                    let input_grad = conv2d_backprop_input_by(
                        Some(ConvAlgorithm::Direct),
                        &xs,
                        &Array::from_vec(f32_.clone(), &fs).unwrap(),
                        &Array::from_vec(dy32.clone(), &[w.batch, w.out_h, w.out_w, out_c])
                            .unwrap(),
                        &params(padding),
                    )
                    .unwrap()
                    .to_vec::<f32>();
                    (
                        conv(&w, &x32, &f32_, Some(&b32), out_c),
                        backprop_filter(&w, &x32, &dy32, out_c),
                        input_grad,
                    )
                });
                let expected = simd::detected().min(level) != SimdLevel::Baseline
                    && out_c
                        % if simd::detected().min(level) == SimdLevel::Avx512 {
                            16
                        } else {
                            8
                        }
                        == 0;
                assert_eq!(conv.is_some(), expected, "{what}: forward taken");
                assert_eq!(grad.is_some(), expected, "{what}: dW taken");
                if let Some(conv) = conv {
                    taken += 1;
                    assert_close(&format!("{what}: forward"), &conv, &out);
                }
                if let Some(grad) = grad {
                    assert_close(&format!("{what}: filter gradient"), &grad, &df);
                }
                assert_close(&format!("{what}: input gradient"), &input_grad, &dx);
            }
        }
        // On a machine with AVX2, the kernel took most cases at some level.
        if simd::detected() >= SimdLevel::Avx2 {
            assert!(taken >= 8, "the direct kernel took only {taken} cases");
        }
    }
}
