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
//! The filter gradient ([`backprop_filter3x3`]) runs the same transforms the other way: the
//! output gradient's tiles through the adjoint of the output transform, per point a product
//! summed over the tiles, and only the per-pair sums back through the filter transform's
//! adjoint.
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

    // Every `unsafe` block here relies on `Vector`'s soundness note: the CPU has `L`'s
    // instructions wherever a `Vector<L>` exists.
    impl<L: Lanes> std::ops::Add for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note).
            Vector(unsafe { self.0.add(o.0) })
        }
    }

    impl<L: Lanes> std::ops::Sub for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note).
            Vector(unsafe { self.0.sub(o.0) })
        }
    }

    impl<L: Lanes> std::ops::Mul<f32> for Vector<L> {
        type Output = Self;
        #[inline(always)]
        fn mul(self, k: f32) -> Self {
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note).
            Vector(unsafe { self.0.scale(k) })
        }
    }

    impl<L: Lanes> Point for Vector<L> {
        const WIDTH: usize = L::WIDTH;
        #[inline(always)]
        fn zero() -> Self {
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note).
            Vector(unsafe { L::zero() })
        }
        #[inline(always)]
        fn load(src: &[f32]) -> Self {
            assert!(src.len() >= L::WIDTH, "winograd: vector load out of range");
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note), and the
            // unaligned load reads `L::WIDTH` floats, all inside `src` by the assert.
            Vector(unsafe { L::load(src.as_ptr()) })
        }
        #[inline(always)]
        fn store(self, dst: &mut [f32]) {
            assert!(dst.len() >= L::WIDTH, "winograd: vector store out of range");
            // SAFETY: the CPU has `L`'s instructions (`Vector`'s soundness note), and the
            // unaligned store writes `L::WIDTH` floats, all inside `dst` by the assert.
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
    /// `A y`, the adjoint of [`Tile::output`]: an output column's gradient to the gradient of
    /// its transformed points.
    fn output_adjoint<X: Arith<f32>>(y: [X; M]) -> [X; A];
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

    #[inline(always)]
    fn output_adjoint<X: Arith<f32>>([y0, y1]: [X; 2]) -> [X; 4] {
        [y0, y0 + y1, y0 - y1, y1 * -1.0]
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

    #[inline(always)]
    fn output_adjoint<X: Arith<f32>>([y0, y1, y2, y3]: [X; 4]) -> [X; 6] {
        // Points 1/2 and 3/4 differ only in the sign of the odd terms.
        let (even1, odd1) = (y0 + y2, y1 + y3);
        let (even2, odd2) = (y0 + y2 * 4.0, y1 * 2.0 + y3 * 8.0);
        [
            y0,
            even1 + odd1,
            even1 - odd1,
            even2 + odd2,
            even2 - odd2,
            y3,
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

/// Filter channel pairs the filter transforms carry at once.
const PAIR_BLOCK: usize = 64;

/// `G`'s entries (`A × 3`): `g_matrix()[r][k]` is point `r` of the transform of the unit tap `k`.
fn g_matrix<const A: usize, const M: usize, T: Tile<A, M>>() -> [[f64; 3]; A] {
    let units = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(T::filter::<f64>);
    std::array::from_fn(|r| [units[0][r], units[1][r], units[2][r]])
}

/// The rows of a row-major matrix with `plane` columns, cut into blocks of [`PAIR_BLOCK`]
/// columns: for each block of channel pairs, its piece of every row. The filter transforms
/// work on one block of pairs at a time, and their inputs and outputs are laid out by rows (a
/// tap or a point) of `plane` pairs, so this hands each block's pieces to one thread.
fn pair_blocks<T>(data: &mut [T], plane: usize) -> Vec<Vec<&mut [T]>> {
    let mut blocks: Vec<Vec<&mut [T]>> = (0..plane.div_ceil(PAIR_BLOCK))
        .map(|_| Vec::new())
        .collect();
    for row in data.chunks_mut(plane) {
        for (block, piece) in blocks.iter_mut().zip(row.chunks_mut(PAIR_BLOCK)) {
            block.push(piece);
        }
    }
    blocks
}

/// Runs `block(index, pieces)` on every block of [`pair_blocks`], across the pool when the
/// `A²`-row matrix of `plane` pairs is large enough to pay for the split, each block compiled
/// for the SIMD level in force (so `block` must be `#[inline(always)]`: out of line, it would
/// run at the baseline level, and did, at half the speed).
fn for_pair_blocks<D: Send>(
    data: &mut [D],
    plane: usize,
    rows: usize,
    block: impl Fn(usize, Vec<&mut [D]>) + Sync,
) {
    let blocks = pair_blocks(data, plane);
    let run = |(b, pieces): (usize, Vec<&mut [D]>)| {
        simd::dispatch(
            #[inline(always)]
            || block(b * PAIR_BLOCK, pieces),
        )
    };
    if rows * plane >= super::PARALLEL_THRESHOLD && rayon::current_num_threads() > 1 {
        blocks.into_par_iter().enumerate().for_each(run);
    } else {
        blocks.into_iter().enumerate().for_each(run);
    }
}

/// `U[ξ][ci][co] = (G g Gᵀ)[ξ]` for each channel pair's 3×3 filter `g`, in float64 and rounded
/// once.
///
/// Written as two small matrix products over a block of [`PAIR_BLOCK`] consecutive pairs
/// (consecutive in the HWIO filter and in `U` alike), each innermost loop running along the
/// block, so it vectorises; blocks run in parallel (for 64×64 channels, 74 µs on one thread
/// and 53 µs on two, measured alone; a fifth of the convolution).
fn transform_filter<const A: usize, const M: usize, T: Tile<A, M>>(
    filter: &[f32],
    in_c: usize,
    out_c: usize,
) -> Vec<f32> {
    let plane = in_c * out_c;
    let g_matrix = g_matrix::<A, M, T>();
    // Every element is written below.
    let mut u = pool::overwritten::<f32>(A * A * plane);
    for_pair_blocks(
        &mut u,
        plane,
        A * A,
        #[inline(always)]
        |p0, mut points| {
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
                    for (u, &p) in points[r * A + s].iter_mut().zip(&point) {
                        *u = p as f32;
                    }
                }
            }
        },
    );
    u
}

/// The filter gradient from the threads' partial sums `S[ξ][ci][co]` (each `A² × plane`): the
/// sums added in float64 (in the order of `partial`), then through the filter transform's
/// adjoint, `Gᵀ S G`, and rounded once. The same two small matrix products over blocks of
/// pairs as [`transform_filter`], and for the same reason: serial, one tap at a time over all
/// pairs, this took 196 µs for 64×64 channels in the seed CNN's traced step, 74 µs now.
fn filter_gradient<const A: usize, const M: usize, T: Tile<A, M>>(
    partial: &[Vec<f32>],
    plane: usize,
) -> Vec<f32> {
    let g_matrix = g_matrix::<A, M, T>();
    // Every element is written below.
    let mut grad = pool::overwritten::<f32>(9 * plane);
    for_pair_blocks(
        &mut grad,
        plane,
        A * A,
        #[inline(always)]
        |p0, mut taps| {
            let lanes = PAIR_BLOCK.min(plane - p0);
            // sums[r][s][pair] = Σ over the parts of S[r][s][pair].
            let mut sums = [[[0.0f64; PAIR_BLOCK]; A]; A];
            for (xi, sums) in sums.as_flattened_mut().iter_mut().enumerate() {
                for part in partial {
                    let src = &part[xi * plane + p0..][..lanes];
                    for (s, &p) in sums.iter_mut().zip(src) {
                        *s += f64::from(p);
                    }
                }
            }
            // rows[ky][s] = Σ_r G[r][ky] · sums[r][s]: each column of S through Gᵀ.
            let mut rows = [[[0.0f64; PAIR_BLOCK]; A]; 3];
            for (r, sums) in sums.iter().enumerate() {
                for (ky, row) in rows.iter_mut().enumerate() {
                    let k = g_matrix[r][ky];
                    if k == 0.0 {
                        continue;
                    }
                    for (t, s) in row.iter_mut().zip(sums) {
                        for l in 0..PAIR_BLOCK {
                            t[l] += k * s[l];
                        }
                    }
                }
            }
            // grad[ky][kx] = Σ_s rows[ky][s] · G[s][kx]: then each row through G.
            for (ky, row) in rows.iter().enumerate() {
                for kx in 0..3 {
                    let mut tap = [0.0f64; PAIR_BLOCK];
                    for (s, point) in row.iter().enumerate() {
                        let k = g_matrix[s][kx];
                        if k == 0.0 {
                            continue;
                        }
                        for l in 0..PAIR_BLOCK {
                            tap[l] += k * point[l];
                        }
                    }
                    for (d, &t) in taps[ky * 3 + kx].iter_mut().zip(&tap) {
                        *d = t as f32;
                    }
                }
            }
        },
    );
    grad
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
    pool::give(u);
    out
}

/// `m (tiles × out_c) = v (tiles × in_c) · u (in_c × out_c)`: one point's products, summed
/// over the input channels. The direct kernel's microkernel takes them where the output
/// channels fill its vectors: it reads `v` and `u` where they lie, where the gemm would first
/// pack both, which at 16 to 64 channels costs as much as the arithmetic.
fn point_product(v: &[f32], u: &[f32], (tiles, in_c, out_c): (usize, usize, usize), m: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if super::direct::small_product(v, (in_c, 1), u, (tiles, in_c, out_c), m, false) {
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

/// A transform over a range of channels, generic in the value type so that [`by_vectors`]
/// can run it on whole vector registers at the SIMD level in force and on single channels.
trait ChannelPass {
    /// Runs over `channels` (a multiple of `X::WIDTH` long), `X::WIDTH` channels at a time.
    /// Implementations are `#[inline(always)]`, so that they compile with the level's
    /// instructions inside the `pass_*` functions below.
    fn run<X: Point>(&mut self, channels: std::ops::Range<usize>);
}

/// Runs `pass` over the channels `0..c`: whole vectors at the level in force, then the
/// channels left over one at a time.
fn by_vectors(c: usize, pass: &mut impl ChannelPass) {
    let split = |width: usize| (0..c / width * width, c / width * width..c);
    let rest = match simd::level() {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let (vectors, rest) = split(16);
            // SAFETY: the level in force never exceeds what the CPU has.
            unsafe { pass_avx512(pass, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let (vectors, rest) = split(8);
            // SAFETY: as above (AVX2 and FMA).
            unsafe { pass_avx2(pass, vectors) };
            rest
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Baseline => {
            // SSE2, x86-64's baseline: no target feature to enable.
            let (vectors, rest) = split(4);
            pass.run::<Vector<__m128>>(vectors);
            rest
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => 0..c,
    };
    pass.run::<f32>(rest);
}

/// `pass` over `channels` on AVX-512 vectors.
///
/// # Safety
/// The CPU has AVX-512 F/VL and FMA (`simd::level()` is [`SimdLevel::Avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,fma")]
unsafe fn pass_avx512(pass: &mut impl ChannelPass, channels: std::ops::Range<usize>) {
    pass.run::<Vector<__m512>>(channels)
}

/// `pass` over `channels` on AVX2 vectors.
///
/// # Safety
/// The CPU has AVX2 and FMA (`simd::level()` is at least [`SimdLevel::Avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn pass_avx2(pass: &mut impl ChannelPass, channels: std::ops::Range<usize>) {
    pass.run::<Vector<__m256>>(channels)
}

/// A tile's position: its image `n` (within the group), and the first output row and column.
#[derive(Clone, Copy)]
struct TileAt {
    n: usize,
    oy: usize,
    ox: usize,
}

/// The tiles of `images` images, in the order of `V`'s and `M`'s rows.
fn tiles_of<const M: usize>(w: &Window2d, images: usize) -> impl Iterator<Item = TileAt> {
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    (0..images * tiles_h * tiles_w).map(move |t| {
        let (n, rest) = (t / (tiles_h * tiles_w), t % (tiles_h * tiles_w));
        TileAt {
            n,
            oy: rest / tiles_w * M,
            ox: rest % tiles_w * M,
        }
    })
}

/// `V[ξ][t][c]` for the tiles `t` of images `first..first + images`: each tile's input
/// (zeros outside the image) through `Bᵀ · B`.
struct InputTransform<'a, const A: usize, const M: usize, T> {
    w: &'a Window2d,
    x: &'a [f32],
    first: usize,
    images: usize,
    v: &'a mut [f32],
    tile: std::marker::PhantomData<T>,
}

impl<const A: usize, const M: usize, T: Tile<A, M>> ChannelPass for InputTransform<'_, A, M, T> {
    #[inline(always)]
    fn run<X: Point>(&mut self, channels: std::ops::Range<usize>) {
        let w = self.w;
        let c = w.channels;
        let image_len = w.in_h * w.in_w * c;
        let tiles = self.images * tile_count::<M>(w);
        for (t, at) in tiles_of::<M>(w, self.images).enumerate() {
            let image = &self.x[(self.first + at.n) * image_len..][..image_len];
            let top = at.oy as isize - w.pad_top as isize;
            let left = at.ox as isize - w.pad_left as isize;
            let inside = top >= 0
                && left >= 0
                && top + A as isize <= w.in_h as isize
                && left + A as isize <= w.in_w as isize;
            for c0 in channels.clone().step_by(X::WIDTH) {
                let v = &mut *self.v;
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
                            X::load(&image[(iy as usize * w.in_w + ix as usize) * c + c0..])
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

/// Each tile's products `M[ξ][t][k]` through `Aᵀ · A`, plus the bias, into the output
/// pixels inside the image (`dst`: the group's images).
struct OutputTransform<'a, const A: usize, const M: usize, T> {
    w: &'a Window2d,
    m: &'a [f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&'a [f32]>,
    dst: &'a mut [f32],
    tile: std::marker::PhantomData<T>,
}

impl<const A: usize, const M: usize, T: Tile<A, M>> ChannelPass for OutputTransform<'_, A, M, T> {
    #[inline(always)]
    fn run<X: Point>(&mut self, channels: std::ops::Range<usize>) {
        let (w, out_c, m) = (self.w, self.out_c, self.m);
        let tiles = self.tiles;
        for (t, at) in tiles_of::<M>(w, tiles / tile_count::<M>(w)).enumerate() {
            // The output pixels of this tile inside the image.
            let (rows, columns) = (M.min(w.out_h - at.oy), M.min(w.out_w - at.ox));
            for k0 in channels.clone().step_by(X::WIDTH) {
                let shift = self.bias.map_or(X::zero(), |b| X::load(&b[k0..]));
                let dst = &mut *self.dst;
                sandwich(
                    #[inline(always)]
                    |i: usize, j: usize| X::load(&m[((i * A + j) * tiles + t) * out_c + k0..]),
                    #[inline(always)]
                    |d| T::output(d),
                    #[inline(always)]
                    |i: usize, j: usize, value: X| {
                        if i < rows && j < columns {
                            let (oy, ox) = (at.oy + i, at.ox + j);
                            let pixel = ((at.n * w.out_h + oy) * w.out_w + ox) * out_c;
                            (value + shift).store(&mut dst[pixel + k0..]);
                        }
                    },
                );
            }
        }
    }
}

/// `Y[ξ][t][k]` for the tiles `t` of images `first..first + images`: each tile's output
/// gradient (zeros past the image's edge) through `A · Aᵀ`, the adjoint of the output
/// transform.
struct GradientTransform<'a, const A: usize, const M: usize, T> {
    w: &'a Window2d,
    dy: &'a [f32],
    out_c: usize,
    first: usize,
    images: usize,
    y: &'a mut [f32],
    tile: std::marker::PhantomData<T>,
}

impl<const A: usize, const M: usize, T: Tile<A, M>> ChannelPass for GradientTransform<'_, A, M, T> {
    #[inline(always)]
    fn run<X: Point>(&mut self, channels: std::ops::Range<usize>) {
        let (w, out_c) = (self.w, self.out_c);
        let image_len = w.out_h * w.out_w * out_c;
        let tiles = self.images * tile_count::<M>(w);
        for (t, at) in tiles_of::<M>(w, self.images).enumerate() {
            let image = &self.dy[(self.first + at.n) * image_len..][..image_len];
            let (rows, columns) = (M.min(w.out_h - at.oy), M.min(w.out_w - at.ox));
            for k0 in channels.clone().step_by(X::WIDTH) {
                let y = &mut *self.y;
                sandwich(
                    #[inline(always)]
                    |i: usize, j: usize| -> X {
                        if i < rows && j < columns {
                            let pixel = ((at.oy + i) * w.out_w + at.ox + j) * out_c;
                            X::load(&image[pixel + k0..])
                        } else {
                            X::zero()
                        }
                    },
                    #[inline(always)]
                    |g| T::output_adjoint(g),
                    #[inline(always)]
                    |i: usize, j: usize, value: X| {
                        value.store(&mut y[((i * A + j) * tiles + t) * out_c + k0..]);
                    },
                );
            }
        }
    }
}

/// Tiles per image.
fn tile_count<const M: usize>(w: &Window2d) -> usize {
    let (tiles_h, tiles_w) = tile_counts::<M>(w);
    tiles_h * tiles_w
}

/// `V[ξ][t][c]` for the tiles of images `first..first + images` (see [`InputTransform`]).
fn transform_input<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    first: usize,
    images: usize,
    v: &mut [f32],
) {
    let mut pass = InputTransform::<A, M, T> {
        w,
        x,
        first,
        images,
        v,
        tile: std::marker::PhantomData,
    };
    by_vectors(w.channels, &mut pass);
}

/// The output pixels of a group from its products (see [`OutputTransform`]).
fn transform_output<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    m: &[f32],
    tiles: usize,
    out_c: usize,
    bias: Option<&[f32]>,
    dst: &mut [f32],
) {
    let mut pass = OutputTransform::<A, M, T> {
        w,
        m,
        tiles,
        out_c,
        bias,
        dst,
        tile: std::marker::PhantomData,
    };
    by_vectors(out_c, &mut pass);
}

/// The gradient of [`conv3x3`] in its HWIO filter, by F(m×m, 3×3), given the output gradient
/// `dy`. The caller checks [`applies`].
///
/// The forward pass is `y = Aᵀ [U ⊙ V] A` per tile with `U = G g Gᵀ`, so the filter's
/// gradient is `Gᵀ [Σ_tiles (A dy Aᵀ) ⊙ V] G`: the output gradient's tiles go through the
/// adjoint of the output transform (`Y`), each point ξ's `Σ_t V[ξ][t][ci] · Y[ξ][t][co]` is one
/// product over the tiles (the direct kernel's microkernel, rows of input channels), and
/// only the per-pair sums, not the tiles, go back through `G`'s adjoint, in float64. Groups of
/// images are split across threads, each summing a fixed range into its own sums, added in
/// order, so the result does not depend on the schedule.
pub fn backprop_filter3x3(
    w: &Window2d,
    x: &[f32],
    dy: &[f32],
    out_c: usize,
    tile: WinogradTile,
) -> Vec<f32> {
    match tile {
        WinogradTile::F2 => backprop_filter::<4, 2, F2>(w, x, dy, out_c),
        WinogradTile::F4 => backprop_filter::<6, 4, F4>(w, x, dy, out_c),
    }
}

fn backprop_filter<const A: usize, const M: usize, T: Tile<A, M>>(
    w: &Window2d,
    x: &[f32],
    dy: &[f32],
    out_c: usize,
) -> Vec<f32> {
    let in_c = w.channels;
    let plane = in_c * out_c;
    let tiles_per_image = tile_count::<M>(w);
    let per_image_floats = A * A * tiles_per_image * (in_c + out_c);
    let group = (GROUP_FLOATS / per_image_floats.max(1)).clamp(1, w.batch);
    let groups = w.batch.div_ceil(group);
    let work = w.batch * w.out_h * w.out_w * out_c * in_c;
    let parts = if work >= super::PARALLEL_THRESHOLD {
        rayon::current_num_threads().min(groups)
    } else {
        1
    };
    let per_part = groups.div_ceil(parts);
    // Σ over the part's groups of each point's products: dU[ξ][ci][co].
    // Working buffers come from the pool and go back to it: fresh ones of this size would be
    // new pages, cleared by the system on every call.
    let sum_part = |part: usize| {
        let mut sums = pool::overwritten::<f32>(A * A * plane);
        sums.fill(0.0);
        let (mut v, mut y) = (Scratch::<f32>::new(), Scratch::<f32>::new());
        for g in part * per_part..((part + 1) * per_part).min(groups) {
            if interrupt::requested() {
                break; // the caller turns the unfinished gradient into `Cancelled`.
            }
            let first = g * group;
            let images = group.min(w.batch - first);
            let tiles = images * tiles_per_image;
            let v = v.resize(A * A * tiles * in_c);
            let y = y.resize(A * A * tiles * out_c);
            transform_input::<A, M, T>(w, x, first, images, v);
            let mut pass = GradientTransform::<A, M, T> {
                w,
                dy,
                out_c,
                first,
                images,
                y,
                tile: std::marker::PhantomData,
            };
            by_vectors(out_c, &mut pass);
            for (xi, sums) in sums.chunks_exact_mut(plane).enumerate() {
                let vx = &v[xi * tiles * in_c..][..tiles * in_c];
                let yx = &y[xi * tiles * out_c..][..tiles * out_c];
                point_product_over_tiles(vx, yx, (tiles, in_c, out_c), sums);
            }
        }
        sums
    };
    let partial: Vec<Vec<f32>> = if parts > 1 {
        (0..parts).into_par_iter().map(sum_part).collect()
    } else {
        vec![sum_part(0)]
    };
    let grad = filter_gradient::<A, M, T>(&partial, plane);
    partial.into_iter().for_each(pool::give);
    grad
}

/// `sums (in_c × out_c) += v (tiles × in_c)ᵀ · y (tiles × out_c)`: one point's products summed
/// over the tiles, by the direct kernel's microkernel where the output channels fill its
/// vectors (rows of input channels, one run over the tiles), else by the gemm.
fn point_product_over_tiles(
    v: &[f32],
    y: &[f32],
    (tiles, in_c, out_c): (usize, usize, usize),
    sums: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if super::direct::small_product(v, (1, in_c), y, (in_c, tiles, out_c), sums, true) {
        return;
    }
    gemm_strided(
        in_c,
        out_c,
        tiles,
        sums,
        true,
        (v, 1, in_c as isize),
        (y, out_c as isize, 1),
        false,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `⟨Aᵀ m, y⟩ = ⟨m, A y⟩` for every pair of unit vectors: `output_adjoint` is the transpose
    /// of `output`, entry by entry (the filter gradient relies on it).
    fn adjoint_matches<const A: usize, const M: usize, T: Tile<A, M>>() {
        for xi in 0..A {
            for i in 0..M {
                let mut m = [0.0f32; A];
                m[xi] = 1.0;
                let mut y = [0.0f32; M];
                y[i] = 1.0;
                assert_eq!(
                    T::output(m)[i],
                    T::output_adjoint(y)[xi],
                    "point {xi}, output {i}"
                );
            }
        }
    }

    #[test]
    fn the_output_adjoint_is_the_transposed_output_transform() {
        adjoint_matches::<4, 2, F2>();
        adjoint_matches::<6, 4, F4>();
    }
}
