//! Batch normalisation (float32): the per-feature statistics, the normalisation, and the
//! backward pass, matching `ferrotape_core::kernels::batch_norm_*`.
//!
//! The input is seen as `[outer, features, inner]` around the feature axis, as on the CPU
//! (inputs that are not contiguous are copied on the device first). Per-feature sums take one
//! workgroup per feature: its threads stride over the feature's elements and a tree in
//! workgroup memory adds their partial sums; the variance is taken around the mean (two
//! passes), as on the CPU, in float32 where the CPU sums in float64.
//!
//! Choice: the statistics come back to the host as vectors, as the core's interface has them
//! (the fused op computes its scale and shift from them, and from γ and β read to the host
//! too, in float64, and its backward pass keeps them). So a training step's forward pass
//! synchronises once per batch-norm layer (the first read waits for the queued work; γ's and
//! β's reads then wait only for their copies), and inference reads the moving statistics,
//! γ and β the same way; everything else stays queued. Device arrays instead would need the
//! op's per-feature arithmetic written in ops on both devices, changing the CPU's float64
//! path that the CPU's training speed and TensorFlow's values rely on: the next step, left
//! for later. The backward pass keeps its per-feature sums on the device between its two
//! kernels and returns `dgamma` and `dbeta` as device arrays, so it never waits.

use ferrotape_core::device::DeviceMemory;
use ferrotape_core::kernels::{BatchNormGrads, FeatureLayout};
use ferrotape_core::{Array, DType, Result};

use crate::context::GpuMemory;
use crate::kernels::{dense, groups, indexable, memory, WgpuBackend, GROUP};

/// Shared by the kernels: the parameter block and the index of element `r` (of a feature's
/// `count`) of feature `c` in a contiguous input at offset `off`.
/// p: [features, inner, count, n, offset_x, offset_dy]
const HEAD: &str = "
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> xa: array<f32>;

fn at(c: u32, r: u32, off: u32) -> u32 {
    let inner = p[1];
    return off + ((r / inner) * p[0] + c) * inner + r % inner;
}
";

/// The tree sum over a workgroup of 64 threads, for features (one per workgroup).
const TOTAL: &str = "
var<workgroup> part: array<f32, 64>;

// The sum of every thread's `v`, seen by every thread (called in uniform control flow).
fn total(l: u32, v: f32) -> f32 {
    part[l] = v;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (l < s) {
            part[l] = part[l] + part[l + s];
        }
        workgroupBarrier();
    }
    let t = part[0];
    workgroupBarrier();
    return t;
}

fn feature(w: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return w.x + w.y * nwg.x;
}
";

/// Mean and variance per feature into `out` ([mean..., variance...]).
const STATISTICS: &str = "
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = feature(w, nwg);
    if (c >= p[0]) { return; }
    let n = p[2];
    // An empty batch has mean and variance 0, as on the CPU.
    let count = f32(max(n, 1u));
    var s = 0.0;
    for (var r = l.x; r < n; r = r + 64u) {
        s = s + xa[at(c, r, p[4])];
    }
    let mean = total(l.x, s) / count;
    var q = 0.0;
    for (var r = l.x; r < n; r = r + 64u) {
        let d = xa[at(c, r, p[4])] - mean;
        q = q + d * d;
    }
    let variance = total(l.x, q) / count;
    if (l.x == 0u) {
        out[c] = mean;
        out[p[0] + c] = variance;
    }
}
";

/// `x·scale + shift` per feature; `ss` is [scale..., shift...].
const APPLY: &str = "
@group(0) @binding(3) var<storage, read> ss: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = gid.x + gid.y * nwg.x * 64u;
    if (e >= p[3]) { return; }
    let c = (e / p[1]) % p[0];
    out[e] = xa[p[4] + e] * ss[c] + ss[p[0] + c];
}
";

/// The backward pass's inputs beside `x`: `dy`, and `st` = [mean..., inv_std..., gamma...].
const BACKWARD_INPUTS: &str = "
@group(0) @binding(3) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read> st: array<f32>;

fn x_hat(c: u32, x: f32) -> f32 {
    return (x - st[c]) * st[p[0] + c];
}
";

/// Per feature Σ dy·x̂ and Σ dy into `out` ([dgamma..., dbeta...]).
const BACKWARD_SUMS: &str = "
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = feature(w, nwg);
    if (c >= p[0]) { return; }
    var s = 0.0;
    var sx = 0.0;
    for (var r = l.x; r < p[2]; r = r + 64u) {
        let g = dy[at(c, r, p[5])];
        s = s + g;
        sx = sx + g * x_hat(c, xa[at(c, r, p[4])]);
    }
    let dbeta = total(l.x, s);
    let dgamma = total(l.x, sx);
    if (l.x == 0u) {
        out[c] = dgamma;
        out[p[0] + c] = dbeta;
    }
}
";

/// `dx = γ·inv_std·(dy - mean(dy) - x̂·mean(dy·x̂))`, the means from `sums`.
const BACKWARD_DX: &str = "
@group(0) @binding(5) var<storage, read> sums: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = gid.x + gid.y * nwg.x * 64u;
    if (e >= p[3]) { return; }
    let features = p[0];
    let c = (e / p[1]) % features;
    let count = f32(max(p[2], 1u));
    let factor = st[2u * features + c] * st[features + c];
    let g = dy[p[5] + e];
    let mean_dy = sums[features + c] / count;
    let mean_dy_x_hat = sums[c] / count;
    out[e] = factor * (g - mean_dy - x_hat(c, xa[p[4] + e]) * mean_dy_x_hat);
}
";

impl WgpuBackend {
    /// `x` contiguous on the device, and the parameter block's words for it and `dy`; `None`
    /// where the kernels do not apply (the CPU kernel then runs).
    fn feature_params(&self, x: &Array, axis: usize, dy: Option<&Array>) -> Option<Vec<u32>> {
        let fits = |a: &Array| a.dtype() == DType::F32 && indexable(a) && a.is_contiguous();
        if axis >= x.rank() || !fits(x) || !dy.is_none_or(fits) {
            return None;
        }
        let layout = FeatureLayout::new(x.shape(), axis);
        if layout.features > (crate::kernels::MAX_GROUPS as usize).pow(2) {
            return None;
        }
        Some(vec![
            layout.features as u32,
            layout.inner as u32,
            layout.count() as u32,
            x.len() as u32,
            x.offset() as u32,
            dy.map_or(0, |d| d.offset() as u32),
        ])
    }

    /// A float32 device array of `values` (small per-feature vectors: no wait, the upload is
    /// queued before the kernels that read it).
    fn upload_f32(&self, values: impl Iterator<Item = f64>) -> Result<GpuMemory> {
        let v: Vec<f32> = values.map(|x| x as f32).collect();
        self.gpu
            .upload_bytes(DType::F32, v.len(), bytemuck::cast_slice(&v))
    }

    pub(crate) fn batch_norm_statistics_kernel(
        &self,
        x: &Array,
        axis: usize,
    ) -> Option<Result<[Vec<f64>; 2]>> {
        let x = dense(x);
        let words = self.feature_params(&x, axis, None)?;
        Some((|| -> Result<[Vec<f64>; 2]> {
            let features = words[0] as usize;
            let out = self.gpu.alloc(DType::F32, 2 * features)?;
            if features > 0 {
                let params = self.gpu.params(&words)?;
                let pipeline = self.gpu.pipeline("batch_norm_statistics", || {
                    [HEAD, TOTAL, STATISTICS].concat()
                });
                let input = memory(&x).expect("device");
                self.gpu
                    .run(&pipeline, &[&params, &out, input], groups(features));
            }
            let both = out.download()?;
            let both = Array::from_buffer(both, &[2 * features])?.to_vec::<f32>();
            let (mean, variance) = both.split_at(features);
            let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect();
            Ok([wide(mean), wide(variance)])
        })())
    }

    pub(crate) fn batch_norm_apply_kernel(
        &self,
        x: &Array,
        axis: usize,
        scale: &[f64],
        shift: &[f64],
    ) -> Option<Result<Array>> {
        let x = dense(x);
        let words = self.feature_params(&x, axis, None)?;
        if scale.len() != words[0] as usize || shift.len() != scale.len() {
            return None;
        }
        Some((|| -> Result<Array> {
            let out = self.gpu.alloc(DType::F32, x.len())?;
            if !x.is_empty() {
                let ss = self.upload_f32(scale.iter().chain(shift).copied())?;
                let params = self.gpu.params(&words)?;
                let pipeline = self
                    .gpu
                    .pipeline("batch_norm_apply", || [HEAD, APPLY].concat());
                let input = memory(&x).expect("device");
                let count = x.len().div_ceil(GROUP as usize);
                self.gpu
                    .run(&pipeline, &[&params, &out, input, &ss], groups(count));
            }
            self.wrap(out, x.shape())
        })())
    }

    pub(crate) fn batch_norm_backward_kernel(
        &self,
        x: &Array,
        dy: &Array,
        axis: usize,
        [mean, inv_std, gamma]: [&[f64]; 3],
    ) -> Option<Result<BatchNormGrads>> {
        let (x, dy) = (dense(x), dense(dy));
        let words = self.feature_params(&x, axis, Some(&dy))?;
        let features = words[0] as usize;
        if [mean, inv_std, gamma].iter().any(|v| v.len() != features) || self.gpu.max_bindings < 6 {
            return None;
        }
        Some((|| -> Result<BatchNormGrads> {
            let sums = self.gpu.alloc(DType::F32, 2 * features)?;
            let dx = self.gpu.alloc(DType::F32, x.len())?;
            if features > 0 {
                let stats = self.upload_f32(mean.iter().chain(inv_std).chain(gamma).copied())?;
                let params = self.gpu.params(&words)?;
                let (xm, dym) = (memory(&x).expect("device"), memory(&dy).expect("device"));
                let pipeline = self.gpu.pipeline("batch_norm_backward_sums", || {
                    [HEAD, TOTAL, BACKWARD_INPUTS, BACKWARD_SUMS].concat()
                });
                self.gpu.run(
                    &pipeline,
                    &[&params, &sums, xm, dym, &stats],
                    groups(features),
                );
                if !x.is_empty() {
                    let pipeline = self.gpu.pipeline("batch_norm_backward_dx", || {
                        [HEAD, BACKWARD_INPUTS, BACKWARD_DX].concat()
                    });
                    let count = x.len().div_ceil(GROUP as usize);
                    self.gpu.run(
                        &pipeline,
                        &[&params, &dx, xm, dym, &stats, &sums],
                        groups(count),
                    );
                }
            }
            // dgamma and dbeta are views of the one buffer the sums went to.
            let sums = self.wrap(sums, &[2, features])?;
            Ok(BatchNormGrads {
                dx: self.wrap(dx, x.shape())?,
                dgamma: sums.index_axis(0, 0),
                dbeta: sums.index_axis(0, 1),
            })
        })())
    }
}
