//! The optimizer rules (float32) in one kernel per rule and slot combination: each element of
//! the variable, its slots and the gradient is read once, and the new values are written
//! once, as in `ferrotape_core::kernels::apply_optimizer_step` (whose docs give the formulas,
//! written here in the same order so the two round alike).
//!
//! Device arrays are immutable, so a step writes new values: the variable's and its slots'
//! go to consecutive segments of one buffer (one output binding, whatever the slot count:
//! Adam with `amsgrad` and RMSprop with both options bind seven buffers, under WebGPU's
//! default of eight), and the arrays returned are views of those segments. The scalars
//! (learning rate, Adam's bias-corrected rate, ...) are computed on the host in float64 and
//! rounded to float32, as the CPU kernel does, and travel in the parameter block.

use ferrotape_core::kernels::OptimizerStep;
use ferrotape_core::{Array, DType, Result};

use crate::kernels::{dense, groups, indexable, memory, WgpuBackend, GROUP};

/// The kernel's name, its body (writing `out[i]` and the slots' segments `out[k·n + i]` from
/// the variable `x`, the slots `a0`, `a1`, ..., the gradient `g` and the scalars `h(j)`), and
/// the scalars.
fn rule(step: &OptimizerStep) -> (&'static str, &'static str, Vec<f64>) {
    match *step {
        OptimizerStep::Sgd {
            learning_rate,
            momentum: None,
            ..
        } => ("sgd", "out[i] = x - g * h(0u);", vec![learning_rate]),
        OptimizerStep::Sgd {
            learning_rate,
            momentum: Some(momentum),
            nesterov,
        } => (
            "sgd_momentum",
            "let step = g * h(0u);
    let v = a0 * h(1u) - step;
    out[n + i] = v;
    out[i] = x + select(v, v * h(1u) - step, h(2u) != 0.0);",
            vec![learning_rate, momentum, f64::from(u8::from(nesterov))],
        ),
        OptimizerStep::Adam {
            alpha,
            one_minus_beta_1,
            one_minus_beta_2,
            epsilon,
            amsgrad,
        } => {
            let scalars = vec![alpha, one_minus_beta_1, one_minus_beta_2, epsilon];
            if amsgrad {
                let body = "let m = a0 + (g - a0) * h(1u);
    let v = a1 + (g * g - a1) * h(2u);
    let v_max = max(a2, v);
    out[n + i] = m;
    out[2u * n + i] = v;
    out[3u * n + i] = v_max;
    out[i] = x - m * h(0u) / (sqrt(v_max) + h(3u));";
                ("adam_amsgrad", body, scalars)
            } else {
                let body = "let m = a0 + (g - a0) * h(1u);
    let v = a1 + (g * g - a1) * h(2u);
    out[n + i] = m;
    out[2u * n + i] = v;
    out[i] = x - m * h(0u) / (sqrt(v) + h(3u));";
                ("adam", body, scalars)
            }
        }
        OptimizerStep::RmsProp {
            learning_rate,
            rho,
            momentum,
            epsilon,
            centered,
        } => {
            let scalars = vec![
                learning_rate,
                rho,
                1.0 - rho,
                momentum.unwrap_or(0.0),
                epsilon,
            ];
            let (name, body) = match (momentum.is_some(), centered) {
                (false, false) => (
                    "rmsprop",
                    "let v = a0 * h(1u) + g * g * h(2u);
    out[n + i] = v;
    out[i] = x - g * h(0u) / sqrt(v + h(4u));",
                ),
                (true, false) => (
                    "rmsprop_momentum",
                    "let v = a0 * h(1u) + g * g * h(2u);
    let m = a1 * h(3u) + g * h(0u) / sqrt(v + h(4u));
    out[n + i] = v;
    out[2u * n + i] = m;
    out[i] = x - m;",
                ),
                (false, true) => (
                    "rmsprop_centered",
                    "let v = a0 * h(1u) + g * g * h(2u);
    let a = a1 * h(1u) + g * h(2u);
    out[n + i] = v;
    out[2u * n + i] = a;
    out[i] = x - g * h(0u) / sqrt(v - a * a + h(4u));",
                ),
                (true, true) => (
                    "rmsprop_momentum_centered",
                    "let v = a0 * h(1u) + g * g * h(2u);
    let a = a2 * h(1u) + g * h(2u);
    let m = a1 * h(3u) + g * h(0u) / sqrt(v - a * a + h(4u));
    out[n + i] = v;
    out[2u * n + i] = m;
    out[3u * n + i] = a;
    out[i] = x - m;",
                ),
            };
            (name, body, scalars)
        }
        OptimizerStep::Adagrad {
            learning_rate,
            epsilon,
        } => (
            "adagrad",
            "let a = a0 + g * g;
    out[n + i] = a;
    out[i] = x - g * h(0u) / sqrt(a + h(1u));",
            vec![learning_rate, epsilon],
        ),
    }
}

/// The kernel of a rule with `slots` slots and `body`.
fn source(slots: usize, body: &str) -> String {
    let bindings: String = (0..slots)
        .map(|j| {
            format!(
                "@group(0) @binding({}) var<storage, read> s{j}: array<f32>;\n",
                j + 3
            )
        })
        .collect();
    let loads: String = (0..slots)
        .map(|j| format!("    let a{j} = s{j}[p[{}] + i];\n", j + 2))
        .collect();
    let g_at = 3 + slots;
    format!(
        "
@group(0) @binding(0) var<storage, read> p: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
{bindings}@group(0) @binding({g_at}) var<storage, read> gr: array<f32>;

// The scalars, float32 bit patterns from word 6 on.
fn h(j: u32) -> f32 {{
    return bitcast<f32>(p[6u + j]);
}}

// p: [n, offset_w, offset_slot[3], offset_g, scalars...]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let n = p[0];
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= n) {{ return; }}
    let x = w[p[1] + i];
    let g = gr[p[5] + i];
{loads}    {body}
}}
"
    )
}

impl WgpuBackend {
    pub(crate) fn optimizer_step_kernel(
        &self,
        step: &OptimizerStep,
        param: &Array,
        slots: &[&Array],
        grad: &Array,
    ) -> Option<Result<Vec<Array>>> {
        let k = slots.len();
        if param.dtype() != DType::F32 || k > 3 || k + 4 > self.gpu.max_bindings as usize {
            return None;
        }
        // Contiguous operands (a no-op for variables), so an offset locates each.
        let inputs: Vec<Array> = [param]
            .into_iter()
            .chain(slots.iter().copied())
            .chain([grad])
            .map(dense)
            .collect();
        if !inputs.iter().all(indexable) {
            return None;
        }
        let n = param.len();
        if (k + 1).checked_mul(n).is_none_or(|t| t > i32::MAX as usize) {
            return None;
        }
        let (name, body, scalars) = rule(step);
        Some((|| -> Result<Vec<Array>> {
            let out = self.gpu.alloc(DType::F32, (k + 1) * n)?;
            if n > 0 {
                let mut offsets = [0u32; 5];
                for (o, a) in offsets[..k + 1].iter_mut().zip(&inputs) {
                    *o = a.offset() as u32;
                }
                offsets[4] = inputs[k + 1].offset() as u32;
                let mut words = vec![n as u32];
                words.extend(offsets);
                words.extend(scalars.iter().map(|&s| (s as f32).to_bits()));
                let params = self.gpu.params(&words)?;
                let key = format!("optimizer_{name}");
                let pipeline = self.gpu.pipeline(&key, || source(k, body));
                let mut bindings = vec![&params, &out];
                bindings.extend(inputs.iter().map(|a| memory(a).expect("device")));
                self.gpu
                    .run(&pipeline, &bindings, groups(n.div_ceil(GROUP as usize)));
            }
            let mut shape = vec![k + 1];
            shape.extend(param.shape());
            let all = self.wrap(out, &shape)?;
            Ok((0..=k).map(|j| all.index_axis(0, j)).collect())
        })())
    }
}
