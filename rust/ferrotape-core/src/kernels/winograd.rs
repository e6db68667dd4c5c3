//! Winograd's minimal filtering for 3×3, stride-1, undilated float32 convolutions:
//! F(4×4, 3×3) and F(2×2, 3×3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
//! Networks", 2016).
//!
//! The output is cut into `m × m` tiles; each tile needs the `a × a` input tile under it
//! (`a = m + 2`). With the input tile `d`, the filter `g` (3×3) and the constant matrices of
//! the chosen `m`, one output tile is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`: `a²` products per tile and
//! channel pair instead of `9·m²` (36 instead of 144 for F(4×4); 16 instead of 36 for F(2×2)).
//! Summed over input channels, the elementwise product becomes `a²` independent matrix
//! products, `V_ξ (tiles × in_c) · U_ξ (in_c × out_c)`, one per point ξ of the tile. At 16 to
//! 64 channels these are small: they run through the direct convolution's register-blocked
//! microkernel (`direct.rs`), which reads `V` and `U` where they lie, where `gemm` would first
//! pack both and spend as long on that as on the arithmetic; `gemm` takes them where the
//! microkernel does not apply (output channels not filling whole vectors, or no AVX2).
//!
//! The input and output transforms cost additions only (plus a few constant multiples), on a
//! whole vector register of consecutive channels at a time (`lanes.rs`: AVX-512, AVX2 or
//! SSE2), so a tile's 36 points stay in registers; channels left over past the last whole
//! vector go one at a time. Written on arrays of floats instead, they were split into scalars
//! or spilled, and cost more than the products.
//!
//! Accuracy: the transforms scale and mix input values, so the float32 result is less exact
//! than the direct sum's, and the error scales with the whole tile's values rather than with
//! one output's own products. Against a float64 reference, relative to the sum of the absolute
//! products (the scale float32 rounding works at), the worst errors measured were 1.3e-7 for
//! F(2×2), as exact as im2col, and for F(4×4) 1.4e-6 on the forward pass and 9.6e-6 on the
//! input gradient of a VALID window (whose border pixels have few products of their own in
//! tiles of larger values); the test in `conv.rs` bounds them at 1e-6 and 1.5e-5. The filter
//! transform, with its sixths and twenty-fourths, is computed in float64 and rounded once.
//! float64 convolutions never take this path.
//!
//! Work is split by groups of images sized so that one group's transformed tiles (`V`) and
//! products (`M`) stay in L2, one group per thread; a batch too small for that splits a
//! group's points across the threads instead.

use rayon::prelude::*;

use super::conv::{gemm_strided, Window2d};
use crate::interrupt;
use crate::pool::{self, Scratch};
use crate::simd::{self, SimdLevel};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__m128, __m256, __m512};

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

/// A value of the input and output transforms: one channel (`f32`) or a vector register of
/// consecutive channels ([`Vector`]).
trait Point: Arith<f32> {
    /// Channels per value.
    const WIDTH: usize;
    fn zero() -> Self;
    /// Reads the first `WIDTH` values of `src`.
    fn load(src: &[f32]) -> Self;
    /// Writes the first `WIDTH` values of `dst`.
    fn store(self, dst: &mut [f32]);
}

impl Point for f32 {
    const WIDTH: usize = 1;
    #[inline(always)]
    fn zero() -> Self {
        0.0
    }
    #[inline(always)]
    fn load(src: &[f32]) -> Self {
        src[0]
    }
    #[inline(always)]
    fn store(self, dst: &mut [f32]) {
        dst[0] = self;
    }
}

/// A vector register of channels.
///
/// Soundness: its methods run the register's instructions, so a `Vector<L>` of AVX-512 or
/// AVX2 lanes exists only inside the `*_avx512` / `*_avx2` functions below, entered after
/// `simd::level()` showed the CPU has them (SSE2's are always there); its loads and stores
/// check their slices' lengths first.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Vector<L>(L);

#[cfg(target_arch = "x86_64")]
mod vector_ops {
    use super::{Point, Vector};
    use crate::kernels::lanes::Lanes;

    // SAFETY (every `unsafe` block here): see `Vector`'s soundness note.
    impl<L: Lanes> std::ops::Add for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Vector(unsafe { self.0.add(o.0) })
        }
    }

    impl<L: Lanes> std::ops::Sub for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            Vector(unsafe { self.0.sub(o.0) })
        }
    }

    impl<L: Lanes> std::ops::Mul<f32> for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn mul(self, k: f32) -> Self {
            Vector(unsafe { self.0.scale(k) })
        }
    }

    impl<L: Lanes> Point for Vector<L> {
        const WIDTH: usize = L::WIDTH;
        #[inline(always)]
        fn zero() -> Self {
            Vector(unsafe { L::zero() })
        }
        #[inline(always)]
        fn load(src: &[f32]) -> Self {
            assert!(src.len() >= L::WIDTH, "winograd: vector load out of range");
            Vector(unsafe { L::load(src.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, dst: &mut [f32]) {
            assert!(dst.len() >= L::WIDTH, "winograd: vector store out of range");
            unsafe { self.0.store(dst.as_mut_ptr()) }
        }
    }
}

/// What the 1-D transforms compute with: sums, differences and constant multiples of values
/// (plain numbers or blocks of lanes) with scalar type `S`.
trait Arith<S>:
    Copy + std::ops::Add<Output = Self> + std::ops::Sub<Output = Self> + std::ops::Mul<S, Output = Self>
{
}

impl<S, X> Arith<S> for X where
    X: Copy + std::ops::Add<Output = X> + std::ops::Sub<Output = X> + std::ops::Mul<S, Output = X>
{
}

/// One tile size's three 1-D transforms. `A` is the input tile's side, `M` the output tile's.
trait Tile<const A: usize, const M: usize> {
    /// `Bᵀ d`: an input column to its transformed points.
    fn input<X: Arith<f32>>(d: [X; A]) -> [X; A];
    /// `G g`: three filter taps to their transformed points (float64, rounded once later).
    fn filter<X: Arith<f64>>(g: [X; 3]) -> [X; A];
    /// `Aᵀ m`: transformed points back to output values.
    fn output<X: Arith<f32>>(m: [X; A]) -> [X; M];
}

/// `L x Lᵀ` for the row-major `R × R` tile `x`, where `L` (`S × R`) is the 1-D transform
/// `transform`: each column through it, then each resulting row, into the row-major `S × S`
/// tile returned by `out(i, j, value)`. Every value is a block of lanes, so the arithmetic is
/// whole-vector operations and the tile stays in registers.
///
/// Every closure, here and at the callers, is `#[inline(always)]`, and the arrays are filled
/// by plain loops: any piece left out of line runs without the caller's SIMD level, where a
/// block of lanes is copied by `memcpy` (measured: half the time went to such calls).
#[inline(always)]
fn sandwich<X: Copy, const R: usize, const S: usize>(
    x: impl Fn(usize, usize) -> X,
    transform: impl Fn([X; R]) -> [X; S],
    mut out: impl FnMut(usize, usize, X),
) {
    // columns[j][i]: point i of column j after the first pass.
    let mut columns = [[x(0, 0); S]; R];
    for (j, column) in columns.iter_mut().enumerate() {
        let mut input = [x(0, j); R];
        for (i, value) in input.iter_mut().enumerate().skip(1) {
            *value = x(i, j);
        }
        *column = transform(input);
    }
    // `i` picks point i of every column: an index into the inner arrays, not an iteration.
    #[allow(clippy::needless_range_loop)]
    for i in 0..S {
        let mut input = [columns[0][i]; R];
        for (j, value) in input.iter_mut().enumerate().skip(1) {
            *value = columns[j][i];
        }
        let row = transform(input);
        for (j, &value) in row.iter().enumerate() {
            out(i, j, value);
        }
    }
}

/// F(2, 3) with interpolation points 0, 1, -1 and ∞.
struct F2;

impl Tile<4, 2> for F2 {
    #[inline(always)]
    fn input<X: Arith<f32>>([d0, d1, d2, d3]: [X; 4]) -> [X; 4] {
        [d0 - d2, d1 + d2, d2 - d1, d1 - d3]
    }

    #[inline(always)]
    fn filter<X: Arith<f64>>([g0, g1, g2]: [X; 3]) -> [X; 4] {
        [g0, (g0 + g1 + g2) * 0.5, (g0 - g1 + g2) * 0.5, g2]
    }

    #[inline(always)]
    fn output<X: Arith<f32>>([m0, m1, m2, m3]: [X; 4]) -> [X; 2] {
        [m0 + m1 + m2, m1 - m2 - m3]
    }
}

/// F(4, 3) with interpolation points 0, 1, -1, 2, -2 and ∞.
struct F4;

impl Tile<6, 4> for F4 {
    #[inline(always)]
    fn input<X: Arith<f32>>([d0, d1, d2, d3, d4, d5]: [X; 6]) -> [X; 6] {
        // Shared partial sums: points 1/2 and 3/4 differ only in the sign of one half.
        let (s12, s34) = (d4 - d2 * 4.0, d3 - d1 * 4.0);
        let (t12, t34) = (d4 - d2, (d3 - d1) * 2.0);
        [
            d0 * 4.0 - d2 * 5.0 + d4,
            s12 + s34,
            s12 - s34,
            t12 + t34,
            t12 - t34,
            d1 * 4.0 - d3 * 5.0 + d5,
        ]
    }

    #[inline(always)]
    fn filter<X: Arith<f64>>([g0, g1, g2]: [X; 3]) -> [X; 6] {
        // Products with the reciprocals, not divisions: exact to far below float32's rounding.
        const SIXTH: f64 = 1.0 / 6.0;
        const TWELFTH: f64 = 1.0 / 12.0;
        const TWENTY_FOURTH: f64 = 1.0 / 24.0;
        [
            g0 * 0.25,
            (g0 + g1 + g2) * -SIXTH,
            (g0 - g1 + g2) * -SIXTH,
            g0 * TWENTY_FOURTH + g1 * TWELFTH + g2 * SIXTH,
            g0 * TWENTY_FOURTH - g1 * TWELFTH + g2 * SIXTH,
            g2,
        ]
    }

    #[inline(always)]
    fn output<X: Arith<f32>>([m0, m1, m2, m3, m4, m5]: [X; 6]) -> [X; 4] {
        let (p12, n12) = (m1 + m2, m1 - m2);
        let (p34, n34) = (m3 + m4, m3 - m4);
        [
            m0 + p12 + p34,
            n12 + n34 * 2.0,
            p12 + p34 * 4.0,
            n12 + n34 * 8.0 + m5,
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

/// Filter channel pairs the filter transform carries at once.
const PAIR_BLOCK: usize = 64;

/// `U[ξ][ci][co] = (G g Gᵀ)[ξ]` for each channel pair's 3×3 filter `g`, in float64 and rounded
/// once.
///
/// Written as two small matrix products over a block of [`PAIR_BLOCK`] consecutive pairs
/// (consecutive in the HWIO filter and in `U` alike), each innermost loop running along the
/// block, so it vectorises: `G`'s entries come from [`Tile::filter`] applied to unit taps.
fn transform_filter<const A: usize, const M: usize, T: Tile<A, M>>(
    filter: &[f32],
    in_c: usize,
    out_c: usize,
) -> Vec<f32> {
    let plane = in_c * out_c;
    // g_matrix[r][k]: point r of the transform of the unit tap k.
    let units = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(T::filter::<f64>);
    let g_matrix: [[f64; 3]; A] = std::array::from_fn(|r| [units[0][r], units[1][r], units[2][r]]);
    // Every element is written below.
    let mut u = pool::overwritten::<f32>(A * A * plane);
    simd::dispatch(
        #[inline(always)]
        || {
            for p0 in (0..plane).step_by(PAIR_BLOCK) {
                let lanes = PAIR_BLOCK.min(plane - p0);
                // g[ky][kx][pair], HWIO: filter[tap·plane + pair].
                let mut g = [[[0.0f64; PAIR_BLOCK]; 3]; 3];
                for (tap, g) in g.as_flattened_mut().iter_mut().enumerate() {
                    let src = &filter[tap * plane + p0..][..lanes];
                    for (g, &f) in g.iter_mut().zip(src) {
                        *g = f64::from(f);
                    }
                }
                // columns[r][kx] = Σ_ky G[r][ky] · g[ky][kx]: each filter column through G.
                let mut columns = [[[0.0f64; PAIR_BLOCK]; 3]; A];
                for (row, column) in g_matrix.iter().zip(&mut columns) {
                    for (ky, &k) in row.iter().enumerate() {
                        for (t, g) in column.iter_mut().zip(&g[ky]) {
                            for l in 0..PAIR_BLOCK {
                                t[l] += k * g[l];
                            }
                        }
                    }
                }
                // U[r][s] = Σ_kx G[s][kx] · columns[r][kx]: then each row.
                for (r, column) in columns.iter().enumerate() {
                    for (s, row) in g_matrix.iter().enumerate() {
                        let mut point = [0.0f64; PAIR_BLOCK];
                        for (kx, &k) in row.iter().enumerate() {
                            for l in 0..PAIR_BLOCK {
                                point[l] += k * column[kx][l];
                            }
                        }
                        let dst = &mut u[(r * A + s) * plane + p0..][..lanes];
                        for (u, &p) in dst.iter_mut().zip(&point) {
                            *u = p as f32;
                        }
                    }
                }
            }
        },
    );
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
    // Otherwise a group's points are split across the threads.
    let parallel_points = threads > 1 && work >= super::PARALLEL_THRESHOLD;
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
        transform_input::<A, M, T>(w, x, first, images, v);
        let (v, u) = (&*v, &u);
        let one_point = |xi: usize, mx: &mut [f32]| {
            let vx = &v[xi * tiles * in_c..(xi + 1) * tiles * in_c];
            let ux = &u[xi * in_c * out_c..(xi + 1) * in_c * out_c];
            point_product(vx, ux, (tiles, in_c, out_c), mx);
        };
        if parallel_groups || !parallel_points {
            m.chunks_mut(tiles * out_c)
                .enumerate()
                .for_each(|(xi, mx)| one_point(xi, mx));
        } else {
            m.par_chunks_mut(tiles * out_c)
                .enumerate()
                .for_each(|(xi, mx)| one_point(xi, mx));
        }
        transform_output::<A, M, T>(w, m, tiles, out_c, bias, dst);
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

/// `m (tiles × out_c) = v (tiles × in_c) · u (in_c × out_c)`: one point's products, summed
/// over the input channels. The direct kernel's microkernel takes them where the output
/// channels fill its vectors: it reads `v` and `u` where they lie, where the gemm would first
/// pack both, which at 16 to 64 channels costs as much as the arithmetic.
fn point_product(v: &[f32], u: &[f32], (tiles, in_c, out_c): (usize, usize, usize), m: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if super::direct::small_product(v, in_c, u, (tiles, in_c, out_c), m) {
        return;
    }
    gemm_strided(
        tiles,
        out_c,
        in_c,
        m,
        false,
        (v, in_c as isize, 1),
        (u, out_c as isize, 1),
        false,
    );
}

/// The channels `0..c` as `(vectors, rest)`: the whole vectors of `width` channels, then the
/// channels left over, which the transforms take one at a time.
fn split_channels(c: usize, width: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let whole = c / width * width;
    (0..whole, whole..c)
}

/// `V[ξ][t][c]` for the tiles `t` of images `first..first + images`: each tile's input
/// (zeros outside the image) through `Bᵀ · B`, whole vectors of channels at the SIMD level in
/// force.
fn transform_input<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
) {
    let c = w.channels;
    let rest = match simd::level() {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let (vectors, rest) = split_channels(c, 16);
            // SAFETY: the level in force never exceeds what the CPU has.
            unsafe { input_avx512::<A, M, T>(w, x, first, images, v, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let (vectors, rest) = split_channels(c, 8);
            // SAFETY: as above.
            unsafe { input_avx2::<A, M, T>(w, x, first, images, v, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Baseline => {
            // SSE2, x86-64's baseline: no target feature to enable.
            let (vectors, rest) = split_channels(c, 4);
            input_points::<Vector<__m128>, A, M, T>(w, x, first, images, v, vectors);
            rest
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => 0..c,
    };
    input_points::<f32, A, M, T>(w, x, first, images, v, rest);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,fma")]
unsafe fn input_avx512<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    input_points::<Vector<__m512>, A, M, T>(w, x, first, images, v, channels)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn input_avx2<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    input_points::<Vector<__m256>, A, M, T>(w, x, first, images, v, channels)
}

/// [`transform_input`] for the channels `channels` (a multiple of `X::WIDTH` long), `X::WIDTH`
/// at a time.
#[inline(always)]
fn input_points<X: Point, const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    if channels.is_empty() {
        return;
    }
    let c = w.channels;
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    let tiles = images * tiles_h * tiles_w;
    let image_len = w.in_h * w.in_w * c;
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
                for c0 in channels.clone().step_by(X::WIDTH) {
                    sandwich(
                        #[inline(always)]
                        |i: usize, j: usize| -> X {
                            if inside {
                                let at = ((top as usize + i) * w.in_w + left as usize + j) * c;
                                return X::load(&image[at + c0..]);
                            }
                            // Points outside the image are the zero padding.
                            let (iy, ix) = (top + i as isize, left + j as isize);
                            if iy >= 0 && iy < w.in_h as isize && ix >= 0 && ix < w.in_w as isize {
                                let at = (iy as usize * w.in_w + ix as usize) * c;
                                X::load(&image[at + c0..])
                            } else {
                                X::zero()
                            }
                        },
                        #[inline(always)]
                        |d| T::input(d),
                        #[inline(always)]
                        |i: usize, j: usize, value: X| {
                            value.store(&mut v[((i * A + j) * tiles + t) * c + c0..]);
                        },
                    );
                }
            }
        }
    }
}

/// Each tile's products `M[ξ][t][k]` through `Aᵀ · A`, plus the bias, into the output
/// pixels inside the image; whole vectors of channels at the SIMD level in force.
fn transform_output<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
) {
    let rest = match simd::level() {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let (vectors, rest) = split_channels(out_c, 16);
            // SAFETY: the level in force never exceeds what the CPU has.
            unsafe { output_avx512::<A, M, T>(w, m, tiles, out_c, bias, dst, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let (vectors, rest) = split_channels(out_c, 8);
            // SAFETY: as above.
            unsafe { output_avx2::<A, M, T>(w, m, tiles, out_c, bias, dst, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Baseline => {
            // SSE2, x86-64's baseline: no target feature to enable.
            let (vectors, rest) = split_channels(out_c, 4);
            output_points::<Vector<__m128>, A, M, T>(w, m, tiles, out_c, bias, dst, vectors);
            rest
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => 0..out_c,
    };
    output_points::<f32, A, M, T>(w, m, tiles, out_c, bias, dst, rest);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,fma")]
unsafe fn output_avx512<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    output_points::<Vector<__m512>, A, M, T>(w, m, tiles, out_c, bias, dst, channels)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn output_avx2<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    output_points::<Vector<__m256>, A, M, T>(w, m, tiles, out_c, bias, dst, channels)
}

/// [`transform_output`] for the output channels `channels` (a multiple of `X::WIDTH` long),
/// `X::WIDTH` at a time.
#[inline(always)]
fn output_points<X: Point, const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
    channels: std::ops::Range<usize>,
) {
    if channels.is_empty() {
        return;
    }
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    let per_image = tiles_h * tiles_w;
    for t in 0..tiles {
        let (n, rest) = (t / per_image, t % per_image);
        let (ty, tx) = (rest / tiles_w, rest % tiles_w);
        // The output pixels of this tile inside the image.
        let (rows, columns) = (M.min(w.out_h - ty * M), M.min(w.out_w - tx * M));
        for k0 in channels.clone().step_by(X::WIDTH) {
            let shift = bias.map_or(X::zero(), |b| X::load(&b[k0..]));
            sandwich(
                #[inline(always)]
                |i: usize, j: usize| X::load(&m[((i * A + j) * tiles + t) * out_c + k0..]),
                #[inline(always)]
                |d| T::output(d),
                #[inline(always)]
                |i: usize, j: usize, value: X| {
                    if i < rows && j < columns {
                        let (oy, ox) = (ty * M + i, tx * M + j);
                        let at = ((n * w.out_h + oy) * w.out_w + ox) * out_c + k0;
                        (value + shift).store(&mut dst[at..]);
                    }
                },
            );
        }
    }
}
