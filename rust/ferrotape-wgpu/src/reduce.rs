//! Float reductions (sum, product, maximum, minimum; float32, and float16 computed in float32) along any axes: one workgroup per
//! output element, its 64 threads striding over the reduced elements, then a tree in
//! workgroup memory. The input is read through its layout, so no transpose is made.
//!
//! The rules are the CPU kernel's (TensorFlow's): an empty reduction gives the identity (0, 1,
//! -inf, +inf), reducing no axis gives the input, and a NaN anywhere in a maximum or minimum
//! gives NaN (tested by the bits: drivers may assume there is no NaN). `reduce_mean` is a sum
//! and a division, both on the device.

use ferrotape_core::kernels::ReduceOp;
use ferrotape_core::{Array, Result};

use crate::kernels::{dims, groups, memory, strides, Elements, WgpuBackend};

/// `op`'s identity and combining expression in `a` and `b` (WGSL).
fn rule(op: ReduceOp) -> Option<(&'static str, &'static str)> {
    Some(match op {
        ReduceOp::Sum => ("0.0", "a + b"),
        ReduceOp::Prod => ("1.0", "a * b"),
        ReduceOp::Max => (
            "bitcast<f32>(0xff800000u)",
            "select(select(a, b, b > a || is_nan(b)), a, is_nan(a))",
        ),
        ReduceOp::Min => (
            "bitcast<f32>(0x7f800000u)",
            "select(select(a, b, b < a || is_nan(b)), a, is_nan(a))",
        ),
        ReduceOp::Any | ReduceOp::All => return None,
    })
}

fn source(elements: Elements, init: &str, combine: &str) -> String {
    let (enable, t) = (elements.enable(), elements.storage());
    format!(
        "{enable}
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{t}>;
@group(0) @binding(2) var<storage, read> xa: array<{t}>;

var<workgroup> part: array<f32, 64>;

fn is_nan(x: f32) -> bool {{
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}}

fn combine(a: f32, b: f32) -> f32 {{
    return {combine};
}}

fn offset_in(i: u32, rank: u32, shape_at: u32, stride_at: u32) -> i32 {{
    var rem = i;
    var off = 0;
    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {{
        let s = p[shape_at + u32(d)];
        off = off + i32(rem % s) * bitcast<i32>(p[stride_at + u32(d)]);
        rem = rem / s;
    }}
    return off;
}}

// p: [n_out, n_reduced, kept_rank, reduced_rank, offset,
//     kept_shape[8], kept_strides[8], reduced_shape[8], reduced_strides[8]]
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {{
    let o = w.x + w.y * nwg.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    if (o >= p[0]) {{ return; }}
    let base = i32(p[4]) + offset_in(o, p[2], 5u, 13u);
    var acc = {init};
    for (var r = l.x; r < p[1]; r = r + 64u) {{
        acc = combine(acc, f32(xa[u32(base + offset_in(r, p[3], 21u, 29u))]));
    }}
    part[l.x] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {{
        if (l.x < s) {{
            part[l.x] = combine(part[l.x], part[l.x + s]);
        }}
        workgroupBarrier();
    }}
    if (l.x == 0u) {{
        out[o] = {t}(part[0]);
    }}
}}
"
    )
}

impl WgpuBackend {
    /// `op` of `a` over the axes of `shapes[1]`/`strides[1]` for each index of the kept axes
    /// (`shapes[0]`/`strides[0]`), shaped `out_shape`; `None` for ops without a kernel.
    pub(crate) fn reduce_kernel(
        &self,
        op: ReduceOp,
        a: &Array,
        shapes: [&[usize]; 2],
        strides_of: [&[isize]; 2],
        out_shape: &[usize],
    ) -> Option<Result<Array>> {
        let (init, combine) = rule(op)?;
        Some(self.run_reduce(op, (init, combine), a, shapes, strides_of, out_shape))
    }

    fn run_reduce(
        &self,
        op: ReduceOp,
        (init, combine): (&str, &str),
        a: &Array,
        [kept_shape, red_shape]: [&[usize]; 2],
        [kept_strides, red_strides]: [&[isize]; 2],
        out_shape: &[usize],
    ) -> Result<Array> {
        let n_out: usize = kept_shape.iter().product();
        let n_red: usize = red_shape.iter().product();
        let elements = Elements::float(&self.gpu, a.dtype()).expect("checked by the caller");
        let out = self.gpu.alloc(a.dtype(), n_out)?;
        if n_out > 0 {
            let head = [
                n_out as u32,
                n_red as u32,
                kept_shape.len() as u32,
                red_shape.len() as u32,
                a.offset() as u32,
            ];
            let words = [
                head.as_slice(),
                &dims(kept_shape),
                &strides(kept_strides),
                &dims(red_shape),
                &strides(red_strides),
            ]
            .concat();
            let params = self.gpu.params(&words)?;
            let key = format!("reduce_{}_{}", op.name(), elements.key());
            let pipeline = self.gpu.pipeline(&key, || source(elements, init, combine));
            let input = memory(a).expect("device");
            self.gpu
                .run(&pipeline, &[&params, &out, input], groups(n_out));
        }
        self.wrap(out, out_shape)
    }
}
