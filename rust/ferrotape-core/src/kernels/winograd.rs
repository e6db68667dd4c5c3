//! Winograd's minimal filtering for 3×3, stride-1, undilated float32 convolutions:
//! F(4×4, 3×3) and F(2×2, 3×3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
//! Networks", 2016).
//!
//! The output is cut into `m × m` tiles; each tile needs the `a × a` input tile under it
//! (`a = m + 2`). With the input tile `d`, the filter `g` (3×3) and the constant matrices of
//! the chosen `m`, one output tile is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`: `a²` products per tile and
//! channel pair instead of `9·m²` (36 instead of 144 for F(4×4); 16 instead of 36 for F(2×2)).
//! Summed over input channels, the elementwise product becomes `a²` independent matrix
//! products, `V_ξ (tiles × in_c) · U_ξ (in_c × out_c)`, one per point ξ of the tile, which
//! run through `gemm` like im2col's single product does. The three transforms cost additions
//! only (plus a few constant multiples), done on 16 channels at a time so they vectorise along
//! NHWC's contiguous channel axis.
//!
//! Accuracy: the transforms scale and mix input values, so the float32 result is less exact
//! than the direct sum's. Against a float64 reference, relative to the sum of the absolute
//! products (the scale float32 rounding works at), the worst errors measured were 1.3e-7 for
//! F(2×2), as exact as im2col, and 1.4e-6 for F(4×4) (the test bounds them at 1e-6 and 5e-6).
//! The filter transform, with its sixths and twenty-fourths, is computed in float64 and
//! rounded once. float64 convolutions never take this path.
//!
//! Work is split by groups of images sized so that one group's transformed tiles (`V`) and
//! products (`M`) stay in L2, one group per thread; a batch too small for that splits each
//! product across the threads instead.

use rayon::prelude::*;

use super::conv::{gemm_strided, Window2d};
use crate::pool::{self, Scratch};
use crate::{interrupt, simd};

/// Channels the transforms carry at once: one AVX-512 vector of f32, two AVX2 ones.
const LANES: usize = 16;

/// Floats of transformed input and products per group of images (512 KiB, half a Zen 4 L2).
const GROUP_FLOATS: usize = 128 * 1024;

/// The output tile size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinogradTile {
    /// F(2×2, 3×3): 4×4 input tiles, 16 products per 4 outputs.
    F2,
    /// F(4×4, 3×3): 6×6 input tiles, 36 products per 16 outputs.
    F4,
}

/// Whether a convolution has the shape this module computes: a 3×3 window, stride 1, no
/// dilation, and something to compute.
pub fn applies(w: &Window2d, out_c: usize) -> bool {
    w.k_h == 3
        && w.k_w == 3
        && w.stride == [1, 1]
        && w.dilation == [1, 1]
        && w.channels > 0
        && out_c > 0
        && w.batch * w.out_h * w.out_w > 0
}

/// Sixteen channels' worth of one value of a tile.
#[derive(Clone, Copy)]
struct Lanes([f32; LANES]);

impl Lanes {
    const ZERO: Lanes = Lanes([0.0; LANES]);

    /// Reads up to `LANES` values; the rest stay zero. A full block is one fixed-size copy
    /// (a vector load), not a call to `memcpy`.
    #[inline(always)]
    fn load(src: &[f32]) -> Lanes {
        if let Ok(full) = <[f32; LANES]>::try_from(src) {
            return Lanes(full);
        }
        let mut v = Lanes::ZERO;
        for (lane, &value) in v.0.iter_mut().zip(src) {
            *lane = value;
        }
        v
    }

    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        if let Ok(full) = <&mut [f32; LANES]>::try_from(&mut *dst) {
            *full = self.0;
            return;
        }
        for (slot, value) in dst.iter_mut().zip(self.0) {
            *slot = value;
        }
    }
}

impl std::ops::Add for Lanes {
    type Output = Lanes;
    #[inline(always)]
    fn add(mut self, o: Lanes) -> Lanes {
        for i in 0..LANES {
            self.0[i] += o.0[i];
        }
        self
    }
}

/// The most points a tile has (F(4×4)'s 6×6): the size of the per-tile scratch arrays.
const MAX_POINTS: usize = 36;

/// One tile size's three 1-D transforms, on plain numbers. `A` is the input tile's side, `M`
/// the output tile's.
trait Tile<const A: usize, const M: usize> {
    /// `Bᵀ d`: an input column to its transformed points.
    fn input(d: [f32; A]) -> [f32; A];
    /// `G g`: three filter taps to their transformed points (float64, rounded once later).
    fn filter(g: [f64; 3]) -> [f64; A];
    /// `Aᵀ m`: transformed points back to output values.
    fn output(m: [f32; A]) -> [f32; M];
}

/// `L x Lᵀ` for the row-major `R × R` tile of lane blocks `x`, where `L` (`S × R`) is the
/// 1-D transform `transform` (`Tile::input` or `Tile::output`), into the row-major `S × S`
/// tile `out`. The loop over lanes is the outermost, and each lane's tile is plain numbers
/// that stay in registers, so the compiler vectorises across the 16 lanes (contiguous in
/// memory) instead of along a tile's strided rows or columns (which it did with gathers).
/// A macro rather than a function taking the transform: passed as a value, the transform was
/// left as an out-of-line call per column in one build, which cost more than the arithmetic.
macro_rules! sandwich {
    ($x:expr, $out:expr, $transform:path, $r:expr, $s:expr) => {{
        let (x, out): (&[Lanes; MAX_POINTS], &mut [Lanes; MAX_POINTS]) = ($x, $out);
        for l in 0..LANES {
            let mut columns = [[0.0f32; $r]; $s]; // columns[i][j]: point i of column j
            for j in 0..$r {
                let mut column = [0.0f32; $r];
                for i in 0..$r {
                    column[i] = x[i * $r + j].0[l];
                }
                let transformed = $transform(column);
                for i in 0..$s {
                    columns[i][j] = transformed[i];
                }
            }
            for i in 0..$s {
                let row = $transform(columns[i]);
                for j in 0..$s {
                    out[i * $s + j].0[l] = row[j];
                }
            }
        }
    }};
}

/// F(2, 3) with interpolation points 0, 1, -1 and ∞.
struct F2;

impl Tile<4, 2> for F2 {
    #[inline(always)]
    fn input([d0, d1, d2, d3]: [f32; 4]) -> [f32; 4] {
        [d0 - d2, d1 + d2, d2 - d1, d1 - d3]
    }

    fn filter([g0, g1, g2]: [f64; 3]) -> [f64; 4] {
        [g0, (g0 + g1 + g2) * 0.5, (g0 - g1 + g2) * 0.5, g2]
    }

    #[inline(always)]
    fn output([m0, m1, m2, m3]: [f32; 4]) -> [f32; 2] {
        [m0 + m1 + m2, m1 - m2 - m3]
    }
}

/// F(4, 3) with interpolation points 0, 1, -1, 2, -2 and ∞.
struct F4;

impl Tile<6, 4> for F4 {
    #[inline(always)]
    fn input([d0, d1, d2, d3, d4, d5]: [f32; 6]) -> [f32; 6] {
        // Shared partial sums: points 1/2 and 3/4 differ only in the sign of one half.
        let (s12, s34) = (d4 - 4.0 * d2, d3 - 4.0 * d1);
        let (t12, t34) = (d4 - d2, 2.0 * (d3 - d1));
        [
            4.0 * d0 - 5.0 * d2 + d4,
            s12 + s34,
            s12 - s34,
            t12 + t34,
            t12 - t34,
            4.0 * d1 - 5.0 * d3 + d5,
        ]
    }

    fn filter([g0, g1, g2]: [f64; 3]) -> [f64; 6] {
        // Products with the reciprocals, not divisions: exact to far below float32's rounding.
        const SIXTH: f64 = 1.0 / 6.0;
        const TWELFTH: f64 = 1.0 / 12.0;
        const TWENTY_FOURTH: f64 = 1.0 / 24.0;
        [
            g0 * 0.25,
            -(g0 + g1 + g2) * SIXTH,
            -(g0 - g1 + g2) * SIXTH,
            g0 * TWENTY_FOURTH + g1 * TWELFTH + g2 * SIXTH,
            g0 * TWENTY_FOURTH - g1 * TWELFTH + g2 * SIXTH,
            g2,
        ]
    }

    #[inline(always)]
    fn output([m0, m1, m2, m3, m4, m5]: [f32; 6]) -> [f32; 4] {
        let (p12, n12) = (m1 + m2, m1 - m2);
        let (p34, n34) = (m3 + m4, m3 - m4);
        [
            m0 + p12 + p34,
            n12 + 2.0 * n34,
            p12 + 4.0 * p34,
            n12 + 8.0 * n34 + m5,
        ]
    }
}

/// The convolution of NHWC `x` with the HWIO 3×3 `filter`, plus `bias`, by F(m×m, 3×3).
/// The caller checks [`applies`].
pub fn conv3x3(
    w: &Window2d,
    x: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    out_c: usize,
    tile: WinogradTile,
) -> Vec<f32> {
    match tile {
        WinogradTile::F2 => conv::<4, 2, F2>(w, x, filter, bias, out_c),
        WinogradTile::F4 => conv::<6, 4, F4>(w, x, filter, bias, out_c),
    }
}

/// `U[ξ][ci][co] = (G g Gᵀ)[ξ]` for each channel pair's 3×3 filter `g`.
fn transform_filter<const A: usize, const M: usize, T: Tile<A, M>>(
    filter: &[f32],
    in_c: usize,
    out_c: usize,
) -> Vec<f32> {
    let plane = in_c * out_c;
    let mut u = vec![0.0f32; A * A * plane];
    // HWIO: filter[tap·plane + ci·out_c + co], so (ci, co) is the same flat `pair` in both.
    for pair in 0..plane {
        let g = |tap: usize| f64::from(filter[tap * plane + pair]);
        // G g Gᵀ: each filter column (kx) through G, then each resulting row through G.
        let mut columns = [[0.0f64; A]; 3];
        for (kx, column) in columns.iter_mut().enumerate() {
            *column = T::filter([g(kx), g(3 + kx), g(6 + kx)]);
        }
        for r in 0..A {
            let row = T::filter([columns[0][r], columns[1][r], columns[2][r]]);
            for (s, &value) in row.iter().enumerate() {
                u[(r * A + s) * plane + pair] = value as f32;
            }
        }
    }
    u
}

/// Tiles along the output's rows and columns.
fn tile_counts<const M: usize>(w: &Window2d) -> (usize, usize) {
    (w.out_h.div_ceil(M), w.out_w.div_ceil(M))
}

fn conv<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    filter: &[f32],
    bias: Option<&[f32]>,
    out_c: usize,
) -> Vec<f32> {
    let in_c = w.channels;
    let u = transform_filter::<A, M, T>(filter, in_c, out_c);
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    let tiles_per_image = tiles_h * tiles_w;
    let per_image_floats = A * A * tiles_per_image * (in_c + out_c);
    let group = (GROUP_FLOATS / per_image_floats.max(1)).clamp(1, w.batch);
    let groups = w.batch.div_ceil(group);
    // As im2col's groups: split across threads only with a group per thread and enough work
    // to pay for the split.
    let threads = rayon::current_num_threads();
    let work = w.batch * w.out_h * w.out_w * out_c;
    let parallel_groups = threads > 1 && groups >= threads && work >= super::PARALLEL_THRESHOLD;
    let out_image = w.out_h * w.out_w * out_c;
    // `transform_output` writes every output element.
    let mut out = pool::overwritten(w.batch * out_image);
    let one_group = |buffers: &mut (Scratch<f32>, Scratch<f32>), g: usize, dst: &mut [f32]| {
        if interrupt::requested() {
            return; // the caller turns the unfinished output into `Cancelled`.
        }
        let images = dst.len() / out_image;
        let tiles = images * tiles_per_image;
        // Every element is written before it is read: no need to clear reused buffers.
        let v = buffers.0.resize(A * A * tiles * in_c);
        let m = buffers.1.resize(A * A * tiles * out_c);
        let first = g * group;
        simd::dispatch(
            #[inline(always)]
            || transform_input::<A, M, T>(w, x, first, images, v),
        );
        for xi in 0..A * A {
            gemm_strided(
                tiles,
                out_c,
                in_c,
                &mut m[xi * tiles * out_c..(xi + 1) * tiles * out_c],
                false,
                (&v[xi * tiles * in_c..], in_c as isize, 1),
                (&u[xi * in_c * out_c..], out_c as isize, 1),
                !parallel_groups,
            );
        }
        simd::dispatch(
            #[inline(always)]
            || transform_output::<A, M, T>(w, m, tiles, out_c, bias, dst),
        );
    };
    let chunk = group * out_image;
    if parallel_groups {
        out.par_chunks_mut(chunk)
            .enumerate()
            .for_each_init(Default::default, |buffers, (g, dst)| {
                one_group(buffers, g, dst)
            });
    } else {
        let mut buffers = Default::default();
        for (g, dst) in out.chunks_mut(chunk).enumerate() {
            one_group(&mut buffers, g, dst);
        }
    }
    out
}

/// `V[ξ][t][c]` for the tiles `t` of images `first..first + images`: each tile's input
/// (zeros outside the image) through `Bᵀ · B`.
#[inline(always)]
fn transform_input<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
) {
    let c = w.channels;
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    let tiles = images * tiles_h * tiles_w;
    let image_len = w.in_h * w.in_w * c;
    // Scratch tiles, reused: every point of `d` is written for each tile.
    let (mut d, mut columns) = ([Lanes::ZERO; MAX_POINTS], [Lanes::ZERO; MAX_POINTS]);
    for n in 0..images {
        let image = &x[(first + n) * image_len..(first + n + 1) * image_len];
        for ty in 0..tiles_h {
            for tx in 0..tiles_w {
                let t = (n * tiles_h + ty) * tiles_w + tx;
                let top = (ty * M) as isize - w.pad_top as isize;
                let left = (tx * M) as isize - w.pad_left as isize;
                let inside = top >= 0
                    && left >= 0
                    && top + A as isize <= w.in_h as isize
                    && left + A as isize <= w.in_w as isize;
                for c0 in (0..c).step_by(LANES) {
                    let lanes = LANES.min(c - c0);
                    if inside {
                        for i in 0..A {
                            let row = (top as usize + i) * w.in_w + left as usize;
                            for j in 0..A {
                                let at = (row + j) * c + c0;
                                d[i * A + j] = Lanes::load(&image[at..at + lanes]);
                            }
                        }
                    } else {
                        // Points outside the image are the zero padding: written one by one,
                        // not by clearing the whole scratch tile (a `memset` call per tile).
                        for i in 0..A {
                            let iy = top + i as isize;
                            let row_inside = iy >= 0 && iy < w.in_h as isize;
                            for j in 0..A {
                                let ix = left + j as isize;
                                d[i * A + j] = if row_inside && ix >= 0 && ix < w.in_w as isize {
                                    let at = (iy as usize * w.in_w + ix as usize) * c + c0;
                                    Lanes::load(&image[at..at + lanes])
                                } else {
                                    Lanes::ZERO
                                };
                            }
                        }
                    }
                    sandwich!(&d, &mut columns, T::input, A, A);
                    for (point, value) in columns[..A * A].iter().enumerate() {
                        let at = (point * tiles + t) * c + c0;
                        value.store(&mut v[at..at + lanes]);
                    }
                }
            }
        }
    }
}

/// Each tile's products `M[ξ][t][k]` through `Aᵀ · A`, plus the bias, into the output
/// pixels inside the image.
#[inline(always)]
fn transform_output<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
) {
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    let per_image = tiles_h * tiles_w;
    let mut products = [Lanes::ZERO; MAX_POINTS];
    let mut y = [Lanes::ZERO; MAX_POINTS];
    for t in 0..tiles {
        let (n, rest) = (t / per_image, t % per_image);
        let (ty, tx) = (rest / tiles_w, rest % tiles_w);
        for k0 in (0..out_c).step_by(LANES) {
            let lanes = LANES.min(out_c - k0);
            for (point, value) in products[..A * A].iter_mut().enumerate() {
                let at = (point * tiles + t) * out_c + k0;
                *value = Lanes::load(&m[at..at + lanes]);
            }
            sandwich!(&products, &mut y, T::output, A, M);
            let shift = bias.map_or(Lanes::ZERO, |b| Lanes::load(&b[k0..k0 + lanes]));
            for i in 0..M.min(w.out_h - ty * M) {
                let oy = ty * M + i;
                for j in 0..M.min(w.out_w - tx * M) {
                    let ox = tx * M + j;
                    let at = ((n * w.out_h + oy) * w.out_w + ox) * out_c + k0;
                    (y[i * M + j] + shift).store(&mut dst[at..at + lanes]);
                }
            }
        }
    }
}
