//! Convolution and pooling kernels (float32, NHWC images, HWIO filters), mirroring
//! `ferrotape_core::kernels::conv`.
//!
//! Each kernel is direct: one invocation per output element, which loops over the window taps
//! that land inside the image (computed, not searched, as the CPU's `taps_inside` does, so a
//! pooling window far larger than the image costs what the image costs). The filter gradient
//! is a long sum per filter element (over the batch and the output positions), so it gives
//! each element a workgroup whose 64 threads split the sum and add their parts as the `sum`
//! reduction does. Gradients with respect to an image are gathers, never scatters: each input
//! element sums the outputs whose windows hold it, in output order, so no atomics are needed
//! and max pooling's gradient sums overlapping windows in the CPU's order. Max pooling's
//! gradient finds each window's first maximum again from `x` (the rule of the CPU's argmax:
//! the first element not beaten, NaN beating numbers), so it needs no index buffer. Inputs are
//! read through their offsets and strides, so views (a transposed image) cost no copy.
//!
//! Parameters: `p[0]` the output elements, `p[1..16]` the window (see [`window_words`]), then
//! each input's offset and four strides (`i32` bits). Every index is `i32` arithmetic: windows
//! and arrays past it fall back to the CPU.
//!
//! Speed ideas, for a real GPU: tile the forward convolution as the matmul kernel is tiled (a
//! workgroup computes a block of output pixels × output channels from image and filter tiles
//! in workgroup memory, i.e. implicit gemm); do the input gradient the same way as a
//! convolution of `dy` with the flipped filter; split the filter gradient's sum across
//! workgroups for small filters; keep the argmax from the forward pass when a tape records it.

use std::sync::Arc;

use ferrotape_core::kernels::{self, BinaryOp, Window2d};
use ferrotape_core::{Array, DType, Result};

use crate::context::Gpu;
use crate::kernels::{groups, indexable, memory, GROUP, MAX_GROUPS, PRELUDE};

/// Helpers shared by the kernels (after [`PRELUDE`], which binds `p` and defines `linear` and
/// `is_nan`).
const HELPERS: &str = "
// p[1..16]: [batch, in_h, in_w, channels, k_h, k_w, stride_h, stride_w, dilation_h,
//            dilation_w, pad_top, pad_left, out_h, out_w, out_c]
struct Win {
    batch: i32, in_h: i32, in_w: i32, c: i32, k_h: i32, k_w: i32, s_h: i32, s_w: i32,
    d_h: i32, d_w: i32, pad_t: i32, pad_l: i32, out_h: i32, out_w: i32, out_c: i32,
}

fn win() -> Win {
    return Win(i32(p[1]), i32(p[2]), i32(p[3]), i32(p[4]), i32(p[5]), i32(p[6]), i32(p[7]),
               i32(p[8]), i32(p[9]), i32(p[10]), i32(p[11]), i32(p[12]), i32(p[13]),
               i32(p[14]), i32(p[15]));
}

// Where each input's layout (offset, then four strides) starts in p.
const IN_A: u32 = 16u;
const IN_B: u32 = 21u;
const IN_C: u32 = 26u;

// Element [i0, i1, i2, i3] of the input whose layout starts at word l.
fn at(l: u32, i0: i32, i1: i32, i2: i32, i3: i32) -> u32 {
    return u32(bitcast<i32>(p[l]) + i0 * bitcast<i32>(p[l + 1u]) + i1 * bitcast<i32>(p[l + 2u])
        + i2 * bitcast<i32>(p[l + 3u]) + i3 * bitcast<i32>(p[l + 4u]));
}

// The index [i0, i1, i2, i3] of element i of a row-major array of shape [_, d1, d2, d3].
fn split(i: u32, d1: i32, d2: i32, d3: i32) -> vec4<i32> {
    let r = i / u32(d3);
    let q = r / u32(d2);
    return vec4<i32>(i32(q / u32(d1)), i32(q % u32(d1)), i32(r % u32(d2)), i32(i % u32(d3)));
}

// The taps [first, end) of output position o along one axis that land inside the input:
// 0 <= o * s + k * d - pad < size with 0 <= k < taps.
fn taps(o: i32, s: i32, d: i32, pad: i32, size: i32, count: i32) -> vec2<i32> {
    let start = o * s - pad;
    let first = select(0, (d - 1 - start) / d, start < 0);
    let end = select(0, (size - start + d - 1) / d, size > start);
    return vec2<i32>(min(first, count), min(end, count));
}

// The output positions [first, end) along one axis whose window has a tap at input position
// pos (the caller checks the tap lands on a multiple of the dilation).
fn covering(pos: i32, s: i32, d: i32, pad: i32, count: i32, size: i32) -> vec2<i32> {
    let t = pos + pad;
    let low = t - (count - 1) * d;
    let first = select(0, (low + s - 1) / s, low > 0);
    return vec2<i32>(first, min(size, t / s + 1));
}

// Whether v replaces best as a window's maximum: larger, or NaN over a number (ties keep the
// first, as on the CPU).
fn beats(v: f32, best: f32) -> bool {
    return v > best || (is_nan(v) && !is_nan(best));
}
";

/// The first maximum of a window of `xs` (input A): its input pixel (row, column), or -1s for
/// a window with no tap inside the image.
const FIRST_MAX: &str = "
fn first_max(w: Win, n: i32, oy: i32, ox: i32, ch: i32) -> vec2<i32> {
    let ry = taps(oy, w.s_h, w.d_h, w.pad_t, w.in_h, w.k_h);
    let rx = taps(ox, w.s_w, w.d_w, w.pad_l, w.in_w, w.k_w);
    var best = 0.0;
    var found = vec2<i32>(-1, -1);
    for (var ky = ry.x; ky < ry.y; ky++) {
        let iy = oy * w.s_h + ky * w.d_h - w.pad_t;
        for (var kx = rx.x; kx < rx.y; kx++) {
            let ix = ox * w.s_w + kx * w.d_w - w.pad_l;
            let v = xs[at(IN_A, n, iy, ix, ch)];
            if (found.x < 0 || beats(v, best)) {
                best = v;
                found = vec2<i32>(iy, ix);
            }
        }
    }
    return found;
}
";

/// The entry point of the one-invocation-per-output kernels: `BODY` sees `i` and `w`.
const ELEMENTWISE_MAIN: &str = "
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= p[0]) { return; }
    let w = win();
    BODY
}
";

/// Output element `i` of the convolution of `xs` (A) with `fs` (B); `BINDING` is where the
/// bias's binding goes when there is one.
const CONV2D: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;
@group(0) @binding(3) var<storage, read> fs: array<f32>;
BINDING
fn conv(w: Win, i: u32) -> f32 {
    let o = split(i, w.out_h, w.out_w, w.out_c);
    let ry = taps(o.y, w.s_h, w.d_h, w.pad_t, w.in_h, w.k_h);
    let rx = taps(o.z, w.s_w, w.d_w, w.pad_l, w.in_w, w.k_w);
    var acc = 0.0;
    for (var ky = ry.x; ky < ry.y; ky++) {
        let iy = o.y * w.s_h + ky * w.d_h - w.pad_t;
        for (var kx = rx.x; kx < rx.y; kx++) {
            let ix = o.z * w.s_w + kx * w.d_w - w.pad_l;
            for (var ci = 0; ci < w.c; ci++) {
                acc += xs[at(IN_A, o.x, iy, ix, ci)] * fs[at(IN_B, ky, kx, ci, o.w)];
            }
        }
    }
    return acc;
}
";

/// The input gradient: for input element `e`, the outputs whose window tap lands on it, times
/// the filter `fs` (A), summed against `dys` (B).
const BACKPROP_INPUT: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> fs: array<f32>;
@group(0) @binding(3) var<storage, read> dys: array<f32>;

fn backprop_input(w: Win, i: u32) -> f32 {
    let e = split(i, w.in_h, w.in_w, w.c);
    var acc = 0.0;
    for (var ky = 0; ky < w.k_h; ky++) {
        let ty = e.y + w.pad_t - ky * w.d_h;
        if (ty < 0) { break; }
        if (ty % w.s_h != 0 || ty / w.s_h >= w.out_h) { continue; }
        for (var kx = 0; kx < w.k_w; kx++) {
            let tx = e.z + w.pad_l - kx * w.d_w;
            if (tx < 0) { break; }
            if (tx % w.s_w != 0 || tx / w.s_w >= w.out_w) { continue; }
            for (var co = 0; co < w.out_c; co++) {
                acc += fs[at(IN_A, ky, kx, e.w, co)] * dys[at(IN_B, e.x, ty / w.s_h, tx / w.s_w, co)];
            }
        }
    }
    return acc;
}
";

/// The filter gradient: one workgroup per filter element, its threads striding over the
/// batch's output positions (`xs` A, `dys` B), then a tree sum.
const BACKPROP_FILTER: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;
@group(0) @binding(3) var<storage, read> dys: array<f32>;

var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) g: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x;
    if (i >= p[0]) { return; }
    let w = win();
    let f = split(i, w.k_w, w.c, w.out_c);
    let positions = u32(w.out_h * w.out_w);
    var acc = 0.0;
    for (var r = l.x; r < u32(w.batch) * positions; r += 64u) {
        let n = i32(r / positions);
        let oy = i32((r % positions) / u32(w.out_w));
        let ox = i32(r % u32(w.out_w));
        let iy = oy * w.s_h + f.x * w.d_h - w.pad_t;
        let ix = ox * w.s_w + f.y * w.d_w - w.pad_l;
        if (iy >= 0 && iy < w.in_h && ix >= 0 && ix < w.in_w) {
            acc += xs[at(IN_A, n, iy, ix, f.z)] * dys[at(IN_B, n, oy, ox, f.w)];
        }
    }
    part[l.x] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (l.x < s) {
            part[l.x] = part[l.x] + part[l.x + s];
        }
        workgroupBarrier();
    }
    if (l.x == 0u) {
        out[i] = part[0];
    }
}
";

const MAX_POOL: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;

fn max_pool(w: Win, i: u32) -> f32 {
    let o = split(i, w.out_h, w.out_w, w.c);
    let m = first_max(w, o.x, o.y, o.z, o.w);
    // A window with no tap inside the image is 0, as on the CPU.
    return select(0.0, xs[at(IN_A, o.x, max(m.x, 0), max(m.y, 0), o.w)], m.x >= 0);
}
";

/// Max pooling's gradient: input element `e` sums `dys` (B) over the windows whose first
/// maximum of `xs` (A) it is.
const MAX_POOL_GRAD: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;
@group(0) @binding(3) var<storage, read> dys: array<f32>;

fn max_pool_grad(w: Win, i: u32) -> f32 {
    let e = split(i, w.in_h, w.in_w, w.c);
    let cy = covering(e.y, w.s_h, w.d_h, w.pad_t, w.k_h, w.out_h);
    let cx = covering(e.z, w.s_w, w.d_w, w.pad_l, w.k_w, w.out_w);
    var acc = 0.0;
    for (var oy = cy.x; oy < cy.y; oy++) {
        if ((e.y + w.pad_t - oy * w.s_h) % w.d_h != 0) { continue; }
        for (var ox = cx.x; ox < cx.y; ox++) {
            if ((e.z + w.pad_l - ox * w.s_w) % w.d_w != 0) { continue; }
            let m = first_max(w, e.x, oy, ox, e.w);
            if (m.x == e.y && m.y == e.z) {
                acc += dys[at(IN_B, e.x, oy, ox, e.w)];
            }
        }
    }
    return acc;
}
";

/// The adjoint of the gradient: each window's `gs` (B) at its first maximum of `xs` (A).
const MAX_POOL_GRAD_GRAD: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;
@group(0) @binding(3) var<storage, read> gs: array<f32>;

fn max_pool_grad_grad(w: Win, i: u32) -> f32 {
    let o = split(i, w.out_h, w.out_w, w.c);
    let m = first_max(w, o.x, o.y, o.z, o.w);
    return select(0.0, gs[at(IN_B, o.x, max(m.x, 0), max(m.y, 0), o.w)], m.x >= 0);
}
";

/// Average pooling: the sum of a window's taps inside the image over their count.
const AVG_POOL: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xs: array<f32>;

fn avg_pool(w: Win, i: u32) -> f32 {
    let o = split(i, w.out_h, w.out_w, w.c);
    let ry = taps(o.y, w.s_h, w.d_h, w.pad_t, w.in_h, w.k_h);
    let rx = taps(o.z, w.s_w, w.d_w, w.pad_l, w.in_w, w.k_w);
    var acc = 0.0;
    for (var ky = ry.x; ky < ry.y; ky++) {
        let iy = o.y * w.s_h + ky * w.d_h - w.pad_t;
        for (var kx = rx.x; kx < rx.y; kx++) {
            acc += xs[at(IN_A, o.x, iy, o.z * w.s_w + kx * w.d_w - w.pad_l, o.w)];
        }
    }
    return acc * (1.0 / f32((ry.y - ry.x) * (rx.y - rx.x)));
}
";

/// Its gradient: input element `e` sums `dys` (A) over the windows holding it, each over its
/// window's count.
const AVG_POOL_GRAD: &str = "
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> dys: array<f32>;

fn avg_pool_grad(w: Win, i: u32) -> f32 {
    let e = split(i, w.in_h, w.in_w, w.c);
    let cy = covering(e.y, w.s_h, w.d_h, w.pad_t, w.k_h, w.out_h);
    let cx = covering(e.z, w.s_w, w.d_w, w.pad_l, w.k_w, w.out_w);
    var acc = 0.0;
    for (var oy = cy.x; oy < cy.y; oy++) {
        if ((e.y + w.pad_t - oy * w.s_h) % w.d_h != 0) { continue; }
        let ry = taps(oy, w.s_h, w.d_h, w.pad_t, w.in_h, w.k_h);
        for (var ox = cx.x; ox < cx.y; ox++) {
            if ((e.z + w.pad_l - ox * w.s_w) % w.d_w != 0) { continue; }
            let rx = taps(ox, w.s_w, w.d_w, w.pad_l, w.in_w, w.k_w);
            let scale = 1.0 / f32((ry.y - ry.x) * (rx.y - rx.x));
            acc += dys[at(IN_A, e.x, oy, ox, e.w)] * scale;
        }
    }
    return acc;
}
";

/// The WGSL of an elementwise kernel: `parts` after the shared helpers, and a `main` storing
/// `store` (an expression in `w` and `i`) to `out[i]`.
fn source(parts: &[&str], store: &str) -> String {
    let main = ELEMENTWISE_MAIN.replace("BODY", &format!("out[i] = {store};"));
    [PRELUDE, HELPERS, &parts.concat(), &main].concat()
}

/// The window as the kernels' `p[1..16]`, `None` where some index of it could pass `i32`.
fn window_words(w: &Window2d, out_c: usize) -> Option<[u32; 15]> {
    let fits = |v: u128| v <= i32::MAX as u128;
    // The furthest position an axis's arithmetic reaches: past the input, the padding, the
    // dilated window and the strided outputs together.
    let axes = [
        [
            w.in_h,
            w.pad_top,
            w.k_h,
            w.dilation[0],
            w.out_h,
            w.stride[0],
        ],
        [
            w.in_w,
            w.pad_left,
            w.k_w,
            w.dilation[1],
            w.out_w,
            w.stride[1],
        ],
    ];
    let reach = |[size, pad, k, d, out, s]: [usize; 6]| {
        let [size, pad, k, d, out, s] = [size, pad, k, d, out, s].map(|v| v as u128);
        size + pad + (k + 1) * d + out * s
    };
    let ok = axes.into_iter().all(|a| fits(reach(a)))
        && [w.batch, w.channels, out_c]
            .iter()
            .all(|&v| fits(v as u128));
    ok.then(|| {
        [
            w.batch,
            w.in_h,
            w.in_w,
            w.channels,
            w.k_h,
            w.k_w,
            w.stride[0],
            w.stride[1],
            w.dilation[0],
            w.dilation[1],
            w.pad_top,
            w.pad_left,
            w.out_h,
            w.out_w,
            out_c,
        ]
        .map(|v| v as u32)
    })
}

/// An input's layout words: its offset and its (up to four) strides, as `i32` bits.
fn layout(a: &Array) -> [u32; 5] {
    let mut words = [a.offset() as u32, 0, 0, 0, 0];
    for (word, &s) in words[1..].iter_mut().zip(a.strides()) {
        *word = s as i32 as u32;
    }
    words
}

/// One kernel launch: its pipeline key and source, inputs (bindings 2, 3, ...) and output.
struct Launch<'a> {
    key: &'a str,
    source: fn() -> String,
    inputs: &'a [&'a Array],
    out_shape: [usize; 4],
    /// A workgroup per output element (a reduction), else one invocation each.
    per_group: bool,
}

/// Runs `k` for window `w`, or `None` (the CPU kernel runs) for inputs the kernels do not
/// cover: another dtype than float32, or sizes past their 32-bit indexing.
fn launch(gpu: &Arc<Gpu>, w: &Window2d, out_c: usize, k: Launch) -> Option<Result<Array>> {
    let covered = |a: &&Array| a.dtype() == DType::F32 && indexable(a) && a.rank() <= 4;
    if !k.inputs.iter().all(covered) {
        return None;
    }
    let words = window_words(w, out_c)?;
    let n: usize = k.out_shape.iter().product();
    let count = if k.per_group {
        n
    } else {
        n.div_ceil(GROUP as usize)
    };
    if n > i32::MAX as usize || count > (MAX_GROUPS as usize).pow(2) {
        return None;
    }
    let run = || {
        let out = gpu.alloc(DType::F32, n)?;
        if n > 0 {
            let mut params = vec![n as u32];
            params.extend(words);
            params.extend(k.inputs.iter().flat_map(|a| layout(a)));
            let params = gpu.params(&params)?;
            let pipeline = gpu.pipeline(k.key, k.source);
            let mut bindings = vec![&params, &out];
            bindings.extend(k.inputs.iter().map(|a| memory(a).expect("a device input")));
            gpu.run(&pipeline, &bindings, groups(count));
        }
        Array::from_device(Box::new(out), &k.out_shape)
    };
    Some(run())
}

/// Whether `x` is the image `w` was made for (the core checks this for the convolutions; the
/// pooling kernels take the window as given).
fn is_input(x: &Array, w: &Window2d) -> bool {
    x.shape() == [w.batch, w.in_h, w.in_w, w.channels]
}

/// A one-invocation-per-output launch.
fn elementwise<'a>(
    key: &'a str,
    source: fn() -> String,
    inputs: &'a [&'a Array],
    out_shape: [usize; 4],
) -> Launch<'a> {
    Launch {
        key,
        source,
        inputs,
        out_shape,
        per_group: false,
    }
}

pub(crate) fn conv2d(
    gpu: &Arc<Gpu>,
    x: &Array,
    filter: &Array,
    bias: Option<&Array>,
    w: &Window2d,
) -> Option<Result<Array>> {
    let out_c = filter.shape()[3];
    let out_shape = [w.batch, w.out_h, w.out_w, out_c];
    let Some(bias) = bias else {
        let src = || source(&[&CONV2D.replace("BINDING", "")], "conv(w, i)");
        let inputs = [x, filter];
        return launch(
            gpu,
            w,
            out_c,
            elementwise("conv2d", src, &inputs, out_shape),
        );
    };
    if gpu.max_bindings < 5 {
        // Too few bindings to fuse the bias: add it in a second pass, still on the device.
        let y = conv2d(gpu, x, filter, None, w)?;
        return Some(y.and_then(|y| kernels::binary(BinaryOp::Add, &y, bias)));
    }
    let src = || {
        let binding = "@group(0) @binding(4) var<storage, read> bs: array<f32>;";
        let conv = CONV2D.replace("BINDING", binding);
        source(
            &[&conv],
            "conv(w, i) + bs[at(IN_C, i32(i % p[15]), 0, 0, 0)]",
        )
    };
    let inputs = [x, filter, bias];
    launch(
        gpu,
        w,
        out_c,
        elementwise("conv2d_bias", src, &inputs, out_shape),
    )
}

pub(crate) fn conv2d_backprop_input(
    gpu: &Arc<Gpu>,
    filter: &Array,
    dy: &Array,
    w: &Window2d,
) -> Option<Result<Array>> {
    let src = || source(&[BACKPROP_INPUT], "backprop_input(w, i)");
    let out_shape = [w.batch, w.in_h, w.in_w, w.channels];
    let inputs = [filter, dy];
    let k = elementwise("conv2d_backprop_input", src, &inputs, out_shape);
    launch(gpu, w, filter.shape()[3], k)
}

pub(crate) fn conv2d_backprop_filter(
    gpu: &Arc<Gpu>,
    x: &Array,
    dy: &Array,
    w: &Window2d,
) -> Option<Result<Array>> {
    let out_c = dy.shape()[3];
    let inputs = [x, dy];
    let k = Launch {
        key: "conv2d_backprop_filter",
        source: || [PRELUDE, HELPERS, BACKPROP_FILTER].concat(),
        inputs: &inputs,
        out_shape: [w.k_h, w.k_w, w.channels, out_c],
        per_group: true,
    };
    launch(gpu, w, out_c, k)
}

pub(crate) fn max_pool(gpu: &Arc<Gpu>, x: &Array, w: &Window2d) -> Option<Result<Array>> {
    if !is_input(x, w) {
        return None;
    }
    let src = || source(&[FIRST_MAX, MAX_POOL], "max_pool(w, i)");
    let out_shape = [w.batch, w.out_h, w.out_w, w.channels];
    let inputs = [x];
    let k = elementwise("max_pool", src, &inputs, out_shape);
    launch(gpu, w, w.channels, k)
}

/// `_y` (the pooled output) goes unused: the kernel finds each window's maximum again, which
/// costs a window's reads where comparing with `y` would cost as many.
pub(crate) fn max_pool_grad(
    gpu: &Arc<Gpu>,
    x: &Array,
    _y: &Array,
    dy: &Array,
    w: &Window2d,
) -> Option<Result<Array>> {
    let src = || source(&[FIRST_MAX, MAX_POOL_GRAD], "max_pool_grad(w, i)");
    let out_shape = [w.batch, w.in_h, w.in_w, w.channels];
    let inputs = [x, dy];
    let k = elementwise("max_pool_grad", src, &inputs, out_shape);
    launch(gpu, w, w.channels, k)
}

pub(crate) fn max_pool_grad_grad(
    gpu: &Arc<Gpu>,
    x: &Array,
    _y: &Array,
    g: &Array,
    w: &Window2d,
) -> Option<Result<Array>> {
    let src = || source(&[FIRST_MAX, MAX_POOL_GRAD_GRAD], "max_pool_grad_grad(w, i)");
    let out_shape = [w.batch, w.out_h, w.out_w, w.channels];
    let inputs = [x, g];
    let k = elementwise("max_pool_grad_grad", src, &inputs, out_shape);
    launch(gpu, w, w.channels, k)
}

pub(crate) fn avg_pool(gpu: &Arc<Gpu>, x: &Array, w: &Window2d) -> Option<Result<Array>> {
    if !is_input(x, w) {
        return None;
    }
    let src = || source(&[AVG_POOL], "avg_pool(w, i)");
    let out_shape = [w.batch, w.out_h, w.out_w, w.channels];
    let inputs = [x];
    let k = elementwise("avg_pool", src, &inputs, out_shape);
    launch(gpu, w, w.channels, k)
}

pub(crate) fn avg_pool_grad(gpu: &Arc<Gpu>, dy: &Array, w: &Window2d) -> Option<Result<Array>> {
    let src = || source(&[AVG_POOL_GRAD], "avg_pool_grad(w, i)");
    let out_shape = [w.batch, w.in_h, w.in_w, w.channels];
    let inputs = [dy];
    let k = elementwise("avg_pool_grad", src, &inputs, out_shape);
    launch(gpu, w, w.channels, k)
}
