//! The indexing kernels: gathering runs of elements (gather, pad, gather_nd) and adding runs
//! into zeros (their adjoints: the gradient of a gather, scatter_nd).
//!
//! The core describes both as runs of `inner` consecutive elements with a start offset each,
//! computed and checked on the host from the indices (see `ferrotape_core::device::Backend`);
//! the starts travel to the device as a small word buffer with each kernel.
//!
//! Scattering adds without atomics (WGSL has no float atomics) and in a fixed order: the host
//! inverts the run list into, for each output run, the source runs landing there in increasing
//! order (a compressed row list), and one invocation per output element sums its sources in
//! that order. That is the CPU's order of additions, so both devices give the same bits.

use std::sync::Arc;

use ferrotape_core::{Array, DType, Result};

use crate::context::{Gpu, GpuMemory};
use crate::kernels::{groups, memory, GROUP};

/// The word a missing run (`None`) becomes in the start list.
const NO_RUN: u32 = u32::MAX;

/// out[i] = the element `i % inner` of run `i / inner`, or `fill` for a missing run; any
/// 4-byte dtype, copied as bits.
const GATHER: &str = "
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> xa: array<u32>;
@group(0) @binding(3) var<storage, read> starts: array<u32>;

// p: [n, inner, fill_bits, offset]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= p[0]) { return; }
    let start = starts[i / p[1]];
    if (start == 0xffffffffu) {
        out[i] = p[2];
    } else {
        out[i] = xa[p[3] + start + i % p[1]];
    }
}
";

/// out[i] = the sum over the source runs landing on output run `i / inner` (the compressed
/// list `first`/`sources`) of their element `i % inner`, in increasing source order.
fn scatter_source(element: &str) -> String {
    format!(
        "
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{element}>;
@group(0) @binding(2) var<storage, read> xa: array<{element}>;
@group(0) @binding(3) var<storage, read> first: array<u32>;
@group(0) @binding(4) var<storage, read> sources: array<u32>;

// p: [n, inner, offset]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= p[0]) {{ return; }}
    let inner = p[1];
    let run = i / inner;
    let k = i % inner;
    var acc = {element}(0);
    for (var t = first[run]; t < first[run + 1u]; t = t + 1u) {{
        acc = acc + xa[p[2] + sources[t] * inner + k];
    }}
    out[i] = acc;
}}
"
    )
}

/// Whether the kernels' u32 arithmetic covers `count` elements.
fn fits(count: usize) -> bool {
    count <= i32::MAX as usize
}

/// A contiguous device copy of `a` (a view is copied on the device), `None` where the device
/// has no copy kernel for its dtype.
fn contiguous_on_device(a: &Array) -> Option<Array> {
    let a = a.contiguous();
    memory(&a).is_some().then_some(a)
}

/// The fill value's bits in `dtype`, `None` for a dtype the kernels do not cover.
fn fill_bits(dtype: DType, fill: f64) -> Option<u32> {
    match dtype {
        DType::F32 => Some((fill as f32).to_bits()),
        DType::I32 => Some(fill as i32 as u32),
        _ => None,
    }
}

pub(crate) fn gather_runs(
    gpu: &Arc<Gpu>,
    a: &Array,
    starts: &[Option<usize>],
    inner: usize,
    fill: f64,
    out_shape: &[usize],
) -> Option<Result<Array>> {
    let fill = fill_bits(a.dtype(), fill)?;
    let n = starts.len() * inner;
    if !fits(a.len()) || !fits(n) || memory(a).is_none() {
        return None;
    }
    let a = contiguous_on_device(a)?;
    let run = || -> Result<Array> {
        let out = gpu.alloc(a.dtype(), n)?;
        if n > 0 {
            let words: Vec<u32> = starts
                .iter()
                .map(|s| s.map_or(NO_RUN, |s| s as u32))
                .collect();
            let starts = gpu.params(&words)?;
            let params = gpu.params(&[n as u32, inner as u32, fill, a.offset() as u32])?;
            let pipeline = gpu.pipeline("gather_runs", || GATHER.to_string());
            let input = memory(&a).expect("a device array");
            let count = n.div_ceil(GROUP as usize);
            gpu.run(&pipeline, &[&params, &out, input, &starts], groups(count));
        }
        Array::from_device(Box::new(out), out_shape)
    };
    Some(run())
}

pub(crate) fn scatter_add_runs(
    gpu: &Arc<Gpu>,
    src: &Array,
    starts: &[Option<usize>],
    inner: usize,
    out_shape: &[usize],
) -> Option<Result<Array>> {
    let element = match src.dtype() {
        DType::F32 => "f32",
        DType::I32 => "i32",
        _ => return None,
    };
    let n: usize = out_shape.iter().product();
    if !fits(src.len()) || !fits(n) || memory(src).is_none() || gpu.max_bindings < 5 {
        return None;
    }
    if inner == 0 || n == 0 {
        return Some(zeros(gpu, src.dtype(), out_shape));
    }
    // The compressed inverse of the run list: output run r gets the sources
    // sources[first[r]..first[r + 1]], in increasing order (a counting sort keeps it).
    let out_runs = n / inner;
    let mut first = vec![0u32; out_runs + 1];
    for s in starts.iter().flatten() {
        if s % inner != 0 || s / inner >= out_runs {
            return None; // not a run layout these kernels read; the CPU handles it
        }
        first[s / inner + 1] += 1;
    }
    for r in 0..out_runs {
        first[r + 1] += first[r];
    }
    let mut next = first.clone();
    let mut sources = vec![0u32; first[out_runs] as usize];
    for (j, s) in starts.iter().enumerate() {
        if let Some(s) = s {
            let slot = &mut next[s / inner];
            sources[*slot as usize] = j as u32;
            *slot += 1;
        }
    }
    if sources.is_empty() {
        return Some(zeros(gpu, src.dtype(), out_shape)); // nothing lands anywhere
    }
    let src = contiguous_on_device(src)?;
    let run = || -> Result<Array> {
        let out = gpu.alloc(src.dtype(), n)?;
        let first = gpu.params(&first)?;
        let sources = gpu.params(&sources)?;
        let params = gpu.params(&[n as u32, inner as u32, src.offset() as u32])?;
        let key = format!("scatter_add_runs_{element}");
        let pipeline = gpu.pipeline(&key, || scatter_source(element));
        let input = memory(&src).expect("a device array");
        let count = n.div_ceil(GROUP as usize);
        gpu.run(
            &pipeline,
            &[&params, &out, input, &first, &sources],
            groups(count),
        );
        Array::from_device(Box::new(out), out_shape)
    };
    Some(run())
}

/// Zeros of `shape` on the device (an empty scatter).
fn zeros(gpu: &Arc<Gpu>, dtype: DType, shape: &[usize]) -> Result<Array> {
    let n: usize = shape.iter().product();
    let memory: GpuMemory = gpu.upload_bytes(dtype, n, &vec![0u8; n * dtype.size_in_bytes()])?;
    Array::from_device(Box::new(memory), shape)
}
