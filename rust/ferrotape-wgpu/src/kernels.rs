//! The element-wise, matmul and copy kernels in WGSL, and the [`Backend`] that offers them and
//! the other modules' kernels (`typed`, `reduce`, `norm`, `optim`, `conv`, `gather`) to the
//! core's dispatcher.
//!
//! Floats are float32, and float16 where the adapter has WGSL's `f16` (element-wise maps,
//! binary ops, matmul, reductions): stored as float16, computed in float32 and rounded once
//! when stored, as the CPU kernels compute float16, so both devices agree but for float32
//! rounding differences.
//!
//! Each kernel reads its inputs through their layouts: a parameter buffer carries the output
//! shape and each input's offset and strides (any sign, zero for broadcast axes), so views and
//! broadcasts cost no copy. Ops a kernel does not cover return `None` and run on the CPU.
//! Convolution and pooling kernels live in `conv.rs`; their hooks here delegate to it.

use std::sync::Arc;

use ferrotape_core::device::{Backend, Device, DeviceMemory};
use ferrotape_core::kernels::{
    BatchNormGrads, BinaryOp, CompareOp, OptimizerStep, ReduceOp, UnaryOp, Window2d,
};
use ferrotape_core::{broadcast_shapes, Array, DType, Result};

use crate::context::{to_bytes, Gpu, GpuMemory};
use crate::conv;

/// The most axes a kernel's parameter block has room for (more fall back to the CPU).
pub(crate) const MAX_RANK: usize = 8;

/// Threads per workgroup of the element-wise and reduction kernels.
pub(crate) const GROUP: u32 = 64;

/// The most workgroups along one dispatch dimension (WebGPU's limit).
pub(crate) const MAX_GROUPS: u32 = 65_535;

pub(crate) struct WgpuBackend {
    pub(crate) gpu: Arc<Gpu>,
}

impl WgpuBackend {
    pub(crate) fn new(gpu: Arc<Gpu>) -> WgpuBackend {
        WgpuBackend { gpu }
    }
}

/// The [`GpuMemory`] a device array views.
pub(crate) fn memory(a: &Array) -> Option<&GpuMemory> {
    a.device_memory()?.as_any().downcast_ref()
}

/// Whether the kernels' 32-bit index arithmetic covers `a` (every element offset of its
/// memory fits an `i32`).
pub(crate) fn indexable(a: &Array) -> bool {
    memory(a).is_some_and(|m| m.len() <= i32::MAX as usize) && a.rank() <= MAX_RANK
}

/// `a` with a contiguous layout, copied on the device if it is a strided view (an empty array
/// stays as it is: `Array::contiguous` would make a host one).
pub(crate) fn dense(a: &Array) -> Array {
    if a.is_contiguous() {
        a.clone()
    } else {
        a.contiguous()
    }
}

/// Workgroups for `count` groups, folded into two dimensions past WebGPU's per-dimension cap.
pub(crate) fn groups(count: usize) -> [u32; 3] {
    let count = count.max(1) as u32;
    let x = count.min(MAX_GROUPS);
    [x, count.div_ceil(x), 1]
}

/// `values` padded with zeros to [`MAX_RANK`] words.
fn padded(values: impl IntoIterator<Item = u32>) -> [u32; MAX_RANK] {
    let mut out = [0; MAX_RANK];
    for (o, v) in out.iter_mut().zip(values) {
        *o = v;
    }
    out
}

pub(crate) fn dims(shape: &[usize]) -> [u32; MAX_RANK] {
    padded(shape.iter().map(|&d| d as u32))
}

/// Strides as the kernels read them: `i32` bit patterns in `u32` words.
pub(crate) fn strides(s: &[isize]) -> [u32; MAX_RANK] {
    padded(s.iter().map(|&s| s as i32 as u32))
}

/// The WGSL shared by the element-wise kernels: the parameter block, the linear index of an
/// invocation, and the offset of element `i` of the output shape in an input's layout.
pub(crate) const PRELUDE: &str = "
@group(0) @binding(0) var<storage, read> p: array<u32>;

// NaN by its bits: drivers may compile x != x assuming no NaN exists.
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// Element i (row-major over the shape at `shape_at`) in the layout with its offset at
// `offset_at` and its strides at `stride_at`.
fn offset_of(i: u32, rank: u32, shape_at: u32, offset_at: u32, stride_at: u32) -> u32 {
    var rem = i;
    var off = i32(p[offset_at]);
    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
        let s = p[shape_at + u32(d)];
        off = off + i32(rem % s) * bitcast<i32>(p[stride_at + u32(d)]);
        rem = rem / s;
    }
    return u32(off);
}
";

/// A unary op's float32 expression in `x`, `None` where the GPU has no kernel for it.
fn unary_expr(op: UnaryOp) -> Option<&'static str> {
    use UnaryOp::*;
    Some(match op {
        Neg => "-x",
        Abs => "abs(x)",
        // NaN passes through and both zeros give +0, as on the CPU.
        Sign => "select(select(select(0.0, -1.0, x < 0.0), 1.0, x > 0.0), x, is_nan(x))",
        Square => "x * x",
        Exp => "exp(x)",
        // Kahan's forms: accurate near 0, where exp(x) - 1 and log(1 + x) cancel.
        Expm1 => {
            "select(select((exp(x) - 1.0) * x / log(exp(x)), -1.0, exp(x) - 1.0 == -1.0), x, exp(x) == 1.0)"
        }
        Log => "log(x)",
        Log1p => "select(log(1.0 + x) * x / ((1.0 + x) - 1.0), x, 1.0 + x == 1.0)",
        Sqrt => "sqrt(x)",
        // 1 / sqrt rather than inverseSqrt, whose precision WGSL leaves loose.
        Rsqrt => "1.0 / sqrt(x)",
        Reciprocal => "1.0 / x",
        Sin => "sin(x)",
        Cos => "cos(x)",
        Tan => "tan(x)",
        // Through atan2, whose precision WGSL bounds (drivers' asin and acos can be loose).
        Asin => "atan2(x, sqrt((1.0 - x) * (1.0 + x)))",
        Acos => "atan2(sqrt((1.0 - x) * (1.0 + x)), x)",
        Atan => "atan(x)",
        Sinh => "sinh(x)",
        Cosh => "cosh(x)",
        // Past |x| = 10 tanh is ±1 in float32; some drivers' tanh overflows to NaN there.
        Tanh => "select(tanh(x), sign(x), abs(x) > 10.0)",
        Asinh => "asinh(x)",
        Acosh => "acosh(x)",
        Atanh => "atanh(x)",
        // Neither branch overflows: exp(-|x|) <= 1.
        Sigmoid => "select(exp(-abs(x)), 1.0, x >= 0.0) / (1.0 + exp(-abs(x)))",
        // NaN passes through, as in TensorFlow.
        Relu => "select(0.0, x, x > 0.0 || is_nan(x))",
        Softplus => "max(x, 0.0) + log(1.0 + exp(-abs(x)))",
        Floor => "floor(x)",
        Ceil => "ceil(x)",
        // WGSL's round breaks ties to even, as TensorFlow's does.
        Round => "round(x)",
        _ => return None,
    })
}

/// A binary op's float32 expression in `x` and `y`, `None` where the GPU has no kernel.
fn binary_expr(op: BinaryOp) -> Option<&'static str> {
    use BinaryOp::*;
    Some(match op {
        Add => "x + y",
        Sub => "x - y",
        Mul => "x * y",
        Div => "x / y",
        // NaN in either operand propagates, as TensorFlow's maximum and minimum do (WGSL's
        // max and min leave it unspecified).
        Maximum => "select(select(max(x, y), x, is_nan(x)), y, is_nan(y))",
        Minimum => "select(select(min(x, y), x, is_nan(x)), y, is_nan(y))",
        SquaredDifference => "(x - y) * (x - y)",
        FloorDiv => "floor(x / y)",
        Atan2 => "atan2(x, y)",
        _ => return None,
    })
}

/// How a kernel holds elements in buffers and computes on them: float32 both ways, float16
/// stored but computed in float32 and rounded once when stored (as the CPU kernels do), or
/// raw 32-bit words for copies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elements {
    F32,
    F16,
    Words,
}

impl Elements {
    /// The kernels' form of `dtype`'s floats, `None` where the device has none.
    pub(crate) fn float(gpu: &Gpu, dtype: DType) -> Option<Elements> {
        match dtype {
            DType::F32 => Some(Elements::F32),
            DType::F16 if gpu.shader_f16 => Some(Elements::F16),
            _ => None,
        }
    }

    /// The WGSL type in buffers.
    pub(crate) fn storage(self) -> &'static str {
        match self {
            Elements::F32 => "f32",
            Elements::F16 => "f16",
            Elements::Words => "u32",
        }
    }

    /// The WGSL type computed in.
    fn compute(self) -> &'static str {
        match self {
            Elements::F32 | Elements::F16 => "f32",
            Elements::Words => "u32",
        }
    }

    /// The directive a module using this type starts with.
    pub(crate) fn enable(self) -> &'static str {
        match self {
            Elements::F16 => "enable f16;",
            _ => "",
        }
    }

    /// A suffix for pipeline keys.
    pub(crate) fn key(self) -> &'static str {
        self.storage()
    }
}

/// The strided map kernel: out[i] = f(a[offset of i]), computed in `elements.compute()`.
fn map_source(elements: Elements, expr: &str) -> String {
    let (enable, t, c) = (elements.enable(), elements.storage(), elements.compute());
    format!(
        "{enable}
{PRELUDE}
@group(0) @binding(1) var<storage, read_write> out: array<{t}>;
@group(0) @binding(2) var<storage, read> xa: array<{t}>;

fn f(x: {c}) -> {c} {{ return {expr}; }}

// p: [n, rank, offset, shape[8], strides[8]]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = linear(gid, nwg);
    if (i >= p[0]) {{ return; }}
    out[i] = {t}(f({c}(xa[offset_of(i, p[1], 3u, 2u, 11u)])));
}}
"
    )
}

fn binary_source(elements: Elements, expr: &str) -> String {
    let (enable, t) = (elements.enable(), elements.storage());
    format!(
        "{enable}
{PRELUDE}
@group(0) @binding(1) var<storage, read_write> out: array<{t}>;
@group(0) @binding(2) var<storage, read> xa: array<{t}>;
@group(0) @binding(3) var<storage, read> xb: array<{t}>;

fn f(x: f32, y: f32) -> f32 {{ return {expr}; }}

// p: [n, rank, offset_a, offset_b, shape[8], strides_a[8], strides_b[8]]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = linear(gid, nwg);
    if (i >= p[0]) {{ return; }}
    out[i] = {t}(f(f32(xa[offset_of(i, p[1], 4u, 2u, 12u)]), f32(xb[offset_of(i, p[1], 4u, 3u, 20u)])));
}}
"
    )
}

/// `source` (MATMUL, SUM) for `elements`: their buffers' type in place of `ELEM` (they
/// accumulate in float32 whatever it is).
fn typed_source(source: &str, elements: Elements) -> String {
    source
        .replace("ENABLE", elements.enable())
        .replace("ELEM", elements.storage())
}

/// Tiled matmul: a 16x16 output tile per workgroup, batches along z; operands are read
/// through their row and column strides (so transposed operands cost no copy) and per-batch
/// strides (zero where a batch axis is broadcast).
const MATMUL: &str = "ENABLE
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<ELEM>;
@group(0) @binding(2) var<storage, read> xa: array<ELEM>;
@group(0) @binding(3) var<storage, read> xb: array<ELEM>;

var<workgroup> tile_a: array<array<f32, 16>, 16>;
var<workgroup> tile_b: array<array<f32, 16>, 16>;

// p: [m, n, k, batch_rank, offset_a, offset_b, a_row, a_col, b_row, b_col,
//     batch_shape[6], a_batch_strides[6], b_batch_strides[6]]
@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
    let m = p[0];
    let n = p[1];
    let k = p[2];
    let row = w.y * 16u + l.y;
    let col = w.x * 16u + l.x;
    var rem = w.z;
    var oa = i32(p[4]);
    var ob = i32(p[5]);
    for (var d = i32(p[3]) - 1; d >= 0; d = d - 1) {
        let s = p[10u + u32(d)];
        let idx = i32(rem % s);
        rem = rem / s;
        oa = oa + idx * bitcast<i32>(p[16u + u32(d)]);
        ob = ob + idx * bitcast<i32>(p[22u + u32(d)]);
    }
    let a_row = bitcast<i32>(p[6]);
    let a_col = bitcast<i32>(p[7]);
    let b_row = bitcast<i32>(p[8]);
    let b_col = bitcast<i32>(p[9]);
    var acc = 0.0;
    for (var t = 0u; t < (k + 15u) / 16u; t = t + 1u) {
        let ka = t * 16u + l.x;
        if (row < m && ka < k) {
            tile_a[l.y][l.x] = f32(xa[u32(oa + i32(row) * a_row + i32(ka) * a_col)]);
        } else {
            tile_a[l.y][l.x] = 0.0;
        }
        let kb = t * 16u + l.y;
        if (kb < k && col < n) {
            tile_b[l.y][l.x] = f32(xb[u32(ob + i32(kb) * b_row + i32(col) * b_col)]);
        } else {
            tile_b[l.y][l.x] = 0.0;
        }
        workgroupBarrier();
        for (var q = 0u; q < 16u; q = q + 1u) {
            acc = acc + tile_a[l.y][q] * tile_b[q][l.x];
        }
        workgroupBarrier();
    }
    if (row < m && col < n) {
        out[(w.z * m + row) * n + col] = ELEM(acc);
    }
}
";

impl WgpuBackend {
    /// A device array of `shape` holding `out`.
    pub(crate) fn wrap(&self, out: GpuMemory, shape: &[usize]) -> Result<Array> {
        Array::from_device(Box::new(out), shape)
    }

    /// The strided map of `a` through `expr` (`Words` with `x` for a copy of any 4-byte dtype).
    fn map(&self, key: &str, elements: Elements, expr: &str, a: &Array) -> Result<Array> {
        let out = self.gpu.alloc(a.dtype(), a.len())?;
        if !a.is_empty() {
            let params = self.gpu.params(
                &[
                    [a.len() as u32, a.rank() as u32, a.offset() as u32].as_slice(),
                    &dims(a.shape()),
                    &strides(a.strides()),
                ]
                .concat(),
            )?;
            let key = format!("{key}_{}", elements.key());
            let pipeline = self.gpu.pipeline(&key, || map_source(elements, expr));
            let input = memory(a).expect("a device input");
            let n = a.len().div_ceil(GROUP as usize);
            self.gpu.run(&pipeline, &[&params, &out, input], groups(n));
        }
        self.wrap(out, a.shape())
    }

    fn binary_kernel(
        &self,
        (op, elements): (BinaryOp, Elements),
        expr: &str,
        a: &Array,
        b: &Array,
        shape: &[usize],
    ) -> Result<Array> {
        let n: usize = shape.iter().product();
        let out = self.gpu.alloc(a.dtype(), n)?;
        if n > 0 {
            // Callers' shapes broadcast, so these views cannot fail.
            let a = a.broadcast_to(shape)?;
            let b = b.broadcast_to(shape)?;
            let head = [
                n as u32,
                shape.len() as u32,
                a.offset() as u32,
                b.offset() as u32,
            ];
            let params = self.gpu.params(
                &[
                    head.as_slice(),
                    &dims(shape),
                    &strides(a.strides()),
                    &strides(b.strides()),
                ]
                .concat(),
            )?;
            let key = format!("binary_{}_{}", op.name(), elements.key());
            let pipeline = self.gpu.pipeline(&key, || binary_source(elements, expr));
            let (x, y) = (memory(&a).expect("device"), memory(&b).expect("device"));
            self.gpu.run(
                &pipeline,
                &[&params, &out, x, y],
                groups(n.div_ceil(GROUP as usize)),
            );
        }
        self.wrap(out, shape)
    }

    /// `a @ b` with the row and column axes `rc` of each operand, sizes `[m, n, k]` and the
    /// broadcast batch shape `batch`.
    fn matmul_kernel(
        &self,
        a: &Array,
        b: &Array,
        rc: [[usize; 2]; 2],
        [m, n, k]: [usize; 3],
        (batch, elements): (&[usize], Elements),
    ) -> Result<Array> {
        let [a_rc, b_rc] = rc;
        let count: usize = batch.iter().product();
        let mut out_shape = batch.to_vec();
        out_shape.extend([m, n]);
        let out = self.gpu.alloc(a.dtype(), count * m * n)?;
        if count * m * n > 0 {
            // Batch strides of each operand broadcast to `batch` (zero on repeated axes).
            let batch_strides = |x: &Array| -> [u32; 6] {
                let lead = &x.shape()[..x.rank() - 2];
                let pad = batch.len() - lead.len();
                let mut s = [0u32; 6];
                for (i, (&d, &st)) in lead.iter().zip(x.strides()).enumerate() {
                    if d != 1 {
                        s[pad + i] = st as i32 as u32;
                    }
                }
                s
            };
            let (sa, sb) = (batch_strides(a), batch_strides(b));
            let mut words = vec![
                m as u32,
                n as u32,
                k as u32,
                batch.len() as u32,
                a.offset() as u32,
                b.offset() as u32,
                a.strides()[a_rc[0]] as i32 as u32,
                a.strides()[a_rc[1]] as i32 as u32,
                b.strides()[b_rc[0]] as i32 as u32,
                b.strides()[b_rc[1]] as i32 as u32,
            ];
            let mut shape6 = [1u32; 6];
            for (s, &d) in shape6.iter_mut().zip(batch.iter()) {
                *s = d as u32;
            }
            words.extend(shape6);
            words.extend(sa);
            words.extend(sb);
            let params = self.gpu.params(&words)?;
            let key = format!("matmul_{}", elements.key());
            let pipeline = self.gpu.pipeline(&key, || typed_source(MATMUL, elements));
            let (x, y) = (memory(a).expect("device"), memory(b).expect("device"));
            let grid = [n.div_ceil(16) as u32, m.div_ceil(16) as u32, count as u32];
            self.gpu.run(&pipeline, &[&params, &out, x, y], grid);
        }
        self.wrap(out, &out_shape)
    }
}

impl Backend for WgpuBackend {
    fn device(&self) -> Device {
        self.gpu.device_id()
    }

    fn name(&self) -> String {
        self.gpu.info.name.clone()
    }

    fn upload(&self, a: &Array) -> Result<Array> {
        let memory = self.gpu.upload_bytes(a.dtype(), a.len(), &to_bytes(a))?;
        self.wrap(memory, a.shape())
    }

    fn contiguous(&self, a: &Array) -> Option<Result<Array>> {
        if a.dtype() == DType::Bool {
            return self.copy_bool(a);
        }
        if !indexable(a) {
            return None;
        }
        let elements = match a.dtype() {
            DType::F32 | DType::I32 => Elements::Words,
            DType::F16 if self.gpu.shader_f16 => Elements::F16,
            _ => return None,
        };
        Some(self.map("copy", elements, "x", a))
    }

    fn unary(&self, op: UnaryOp, a: &Array) -> Option<Result<Array>> {
        let elements = Elements::float(&self.gpu, a.dtype())?;
        if !indexable(a) {
            return None;
        }
        let expr = unary_expr(op)?;
        Some(self.map(op.name(), elements, expr, a))
    }

    fn binary(&self, op: BinaryOp, a: &Array, b: &Array) -> Option<Result<Array>> {
        let elements = Elements::float(&self.gpu, a.dtype())?;
        if a.dtype() != b.dtype() || !indexable(a) || !indexable(b) {
            return None;
        }
        let expr = binary_expr(op)?;
        let shape = broadcast_shapes(op.name(), a.shape(), b.shape()).ok()?;
        let n: usize = shape.iter().product();
        if shape.len() > MAX_RANK || n > u32::MAX as usize {
            return None;
        }
        Some(self.binary_kernel((op, elements), expr, a, b, &shape))
    }

    fn matmul(&self, a: &Array, b: &Array, ta: bool, tb: bool) -> Option<Result<Array>> {
        let elements = Elements::float(&self.gpu, a.dtype())?;
        if a.dtype() != b.dtype() || !indexable(a) || !indexable(b) {
            return None;
        }
        if a.rank() < 2 || b.rank() < 2 {
            return None; // the CPU kernel reports the error
        }
        let (ra, rb) = (a.rank(), b.rank());
        // Transposing swaps the last two axes' sizes and strides: a view, no copy.
        let (mut a_rc, mut b_rc) = ([ra - 2, ra - 1], [rb - 2, rb - 1]);
        if ta {
            a_rc.reverse();
        }
        if tb {
            b_rc.reverse();
        }
        let (m, k) = (a.shape()[a_rc[0]], a.shape()[a_rc[1]]);
        let (k2, n) = (b.shape()[b_rc[0]], b.shape()[b_rc[1]]);
        if k != k2 {
            return None;
        }
        let batch = broadcast_shapes("MatMul", &a.shape()[..ra - 2], &b.shape()[..rb - 2]).ok()?;
        let count: usize = batch.iter().product();
        let total = count.checked_mul(m).and_then(|x| x.checked_mul(n));
        if batch.len() > 6
            || count > MAX_GROUPS as usize
            || total.is_none_or(|t| t > u32::MAX as usize)
        {
            return None;
        }
        if m.div_ceil(16) > MAX_GROUPS as usize || n.div_ceil(16) > MAX_GROUPS as usize {
            return None;
        }
        Some(self.matmul_kernel(a, b, [a_rc, b_rc], [m, n, k], (&batch, elements)))
    }

    fn reduce(
        &self,
        op: ReduceOp,
        a: &Array,
        mask: &[bool],
        keepdims: bool,
    ) -> Option<Result<Array>> {
        Elements::float(&self.gpu, a.dtype())?;
        if !indexable(a) || mask.len() != a.rank() {
            return None;
        }
        let (mut kept_shape, mut kept_strides, mut red_shape, mut red_strides) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut out_shape = Vec::new();
        for ((&d, &s), &r) in a.shape().iter().zip(a.strides()).zip(mask) {
            if r {
                red_shape.push(d);
                red_strides.push(s);
                if keepdims {
                    out_shape.push(1);
                }
            } else {
                kept_shape.push(d);
                kept_strides.push(s);
                out_shape.push(d);
            }
        }
        let n_out: usize = kept_shape.iter().product();
        if n_out > (MAX_GROUPS as usize).pow(2) {
            return None;
        }
        self.reduce_kernel(
            op,
            a,
            [&kept_shape, &red_shape],
            [&kept_strides, &red_strides],
            &out_shape,
        )
    }

    // The training step's other kernels (typed.rs, norm.rs, optim.rs).

    fn relu_grad(&self, g: &Array, y: &Array) -> Option<Result<Array>> {
        self.relu_grad_kernel(g, y)
    }

    fn compare(&self, op: CompareOp, a: &Array, b: &Array) -> Option<Result<Array>> {
        self.compare_kernel(op, a, b)
    }

    fn select(&self, cond: &Array, x: &Array, y: &Array) -> Option<Result<Array>> {
        self.select_kernel(cond, x, y)
    }

    fn cast(&self, a: &Array, dtype: DType) -> Option<Result<Array>> {
        self.cast_kernel(a, dtype)
    }

    fn batch_norm_statistics(&self, x: &Array, axis: usize) -> Option<Result<[Vec<f64>; 2]>> {
        self.batch_norm_statistics_kernel(x, axis)
    }

    fn batch_norm_apply(
        &self,
        x: &Array,
        axis: usize,
        scale: &[f64],
        shift: &[f64],
    ) -> Option<Result<Array>> {
        self.batch_norm_apply_kernel(x, axis, scale, shift)
    }

    fn batch_norm_backward(
        &self,
        x: &Array,
        dy: &Array,
        axis: usize,
        stats: [&[f64]; 3],
    ) -> Option<Result<BatchNormGrads>> {
        self.batch_norm_backward_kernel(x, dy, axis, stats)
    }

    fn optimizer_step(
        &self,
        step: &OptimizerStep,
        param: &Array,
        slots: &[&Array],
        grad: &Array,
    ) -> Option<Result<Vec<Array>>> {
        self.optimizer_step_kernel(step, param, slots, grad)
    }

    // Indexing (gather.rs).

    fn gather_runs(
        &self,
        a: &Array,
        starts: &[Option<usize>],
        inner: usize,
        fill: f64,
        out_shape: &[usize],
    ) -> Option<Result<Array>> {
        crate::gather::gather_runs(&self.gpu, a, starts, inner, fill, out_shape)
    }

    fn scatter_add_runs(
        &self,
        src: &Array,
        starts: &[Option<usize>],
        inner: usize,
        out_shape: &[usize],
    ) -> Option<Result<Array>> {
        crate::gather::scatter_add_runs(&self.gpu, src, starts, inner, out_shape)
    }

    // Convolution and pooling: the kernels are in `conv.rs`.

    fn conv2d(
        &self,
        x: &Array,
        filter: &Array,
        bias: Option<&Array>,
        w: &Window2d,
    ) -> Option<Result<Array>> {
        conv::conv2d(&self.gpu, x, filter, bias, w)
    }

    fn conv2d_backprop_input(
        &self,
        filter: &Array,
        dy: &Array,
        w: &Window2d,
    ) -> Option<Result<Array>> {
        conv::conv2d_backprop_input(&self.gpu, filter, dy, w)
    }

    fn conv2d_backprop_filter(&self, x: &Array, dy: &Array, w: &Window2d) -> Option<Result<Array>> {
        conv::conv2d_backprop_filter(&self.gpu, x, dy, w)
    }

    fn max_pool(&self, x: &Array, w: &Window2d) -> Option<Result<Array>> {
        conv::max_pool(&self.gpu, x, w)
    }

    fn max_pool_grad(
        &self,
        x: &Array,
        y: &Array,
        dy: &Array,
        w: &Window2d,
    ) -> Option<Result<Array>> {
        conv::max_pool_grad(&self.gpu, x, y, dy, w)
    }

    fn max_pool_grad_grad(
        &self,
        x: &Array,
        y: &Array,
        g: &Array,
        w: &Window2d,
    ) -> Option<Result<Array>> {
        conv::max_pool_grad_grad(&self.gpu, x, y, g, w)
    }

    fn avg_pool(&self, x: &Array, w: &Window2d) -> Option<Result<Array>> {
        conv::avg_pool(&self.gpu, x, w)
    }

    fn avg_pool_grad(&self, dy: &Array, w: &Window2d) -> Option<Result<Array>> {
        conv::avg_pool_grad(&self.gpu, dy, w)
    }
}
