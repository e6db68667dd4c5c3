//! Element-wise kernels over float32, int32 and bool operands: comparisons, `select`, casts,
//! relu's gradient and the copy of a bool view.
//!
//! Every buffer is bound as `u32` words and each operand is loaded in its own type, so one
//! generator covers every mix of dtypes. Bools live one byte per element (the core's layout,
//! which `upload` keeps), and WGSL has no byte stores: a kernel with a bool output computes
//! four consecutive elements per invocation and writes them as one word (pooled buffers are
//! whole words long, so the last word has room). Operands are read through their layouts
//! (offset, strides, zero strides for broadcast axes), as the float kernels read theirs.

use ferrotape_core::kernels::CompareOp;
use ferrotape_core::{broadcast_shapes, Array, DType, Result};

use crate::kernels::{
    dims, groups, indexable, memory, strides, WgpuBackend, GROUP, MAX_RANK, PRELUDE,
};

/// The WGSL type an operand of `dtype` is computed in, `None` for dtypes without kernels.
fn wgsl_type(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::F32 => Some("f32"),
        DType::I32 => Some("i32"),
        DType::Bool => Some("bool"),
        _ => None,
    }
}

/// Operand `j`'s load function: element `e` of its binding as its WGSL type.
fn load_fn(j: usize, dtype: DType) -> String {
    let ty = wgsl_type(dtype).expect("checked by the caller");
    let body = match dtype {
        DType::F32 => format!("bitcast<f32>(x{j}[e])"),
        DType::I32 => format!("bitcast<i32>(x{j}[e])"),
        _ => format!("((x{j}[e >> 2u] >> ((e & 3u) * 8u)) & 0xffu) != 0u"),
    };
    format!(
        "@group(0) @binding({}) var<storage, read> x{j}: array<u32>;\n\
         fn load{j}(e: u32) -> {ty} {{ return {body}; }}\n",
        j + 2
    )
}

/// The kernel computing `expr` (in operands `a0`, `a1`, ...) into an `out` dtype array.
fn source(inputs: &[DType], out: DType, expr: &str) -> String {
    let k = inputs.len();
    let shape_at = 2 + k;
    let loads: String = inputs
        .iter()
        .enumerate()
        .map(|(j, &d)| load_fn(j, d))
        .collect();
    let operands: String = (0..k)
        .map(|j| {
            let stride_at = shape_at + MAX_RANK * (j + 1);
            format!(
                "    let a{j} = load{j}(offset_of(i, p[1], {shape_at}u, {}u, {stride_at}u));\n",
                2 + j
            )
        })
        .collect();
    let ty = wgsl_type(out).expect("checked by the caller");
    let store = match out {
        DType::Bool => {
            "    var word = 0u;
    for (var j = 0u; j < 4u; j = j + 1u) {
        let e = i * 4u + j;
        if (e < p[0] && value(e)) {
            word = word | (1u << (j * 8u));
        }
    }
    if (i * 4u < p[0]) {
        out[i] = word;
    }"
        }
        _ => {
            "    if (i < p[0]) {
        out[i] = bitcast<u32>(value(i));
    }"
        }
    };
    format!(
        "{PRELUDE}
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
{loads}
fn value(i: u32) -> {ty} {{
{operands}    return {expr};
}}

// p: [n, rank, offsets[k], shape[8], strides[k][8]]
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = linear(gid, nwg);
{store}
}}
"
    )
}

/// A comparison of two `dtype` operands as WGSL. Float comparisons with NaN are false
/// (`NotEqual` true), tested by the bits because drivers may assume there is no NaN; bools
/// compare as 0 and 1.
fn compare_expr(op: CompareOp, dtype: DType) -> String {
    let symbol = match op {
        CompareOp::Equal => "==",
        CompareOp::NotEqual => "!=",
        CompareOp::Less => "<",
        CompareOp::LessEqual => "<=",
        CompareOp::Greater => ">",
        CompareOp::GreaterEqual => ">=",
    };
    match dtype {
        DType::F32 if op == CompareOp::NotEqual => "is_nan(a0) || is_nan(a1) || a0 != a1".into(),
        DType::F32 => format!("!(is_nan(a0) || is_nan(a1)) && a0 {symbol} a1"),
        DType::Bool => format!("u32(a0) {symbol} u32(a1)"),
        _ => format!("a0 {symbol} a1"),
    }
}

/// `a0` (of `from`) as `to`, with TensorFlow's (and the CPU kernel's) rules: float to int
/// truncates toward zero, and NaN or a value out of range gives the minimum (as x86's
/// conversion does); anything to bool is `!= 0` (NaN is true); bool to a number is 0 or 1.
fn cast_expr(from: DType, to: DType) -> Option<&'static str> {
    use DType::*;
    Some(match (from, to) {
        (F32, I32) => {
            "select(bitcast<i32>(0x80000000u), i32(a0), \
             !is_nan(a0) && a0 >= -2147483648.0 && a0 < 2147483648.0)"
        }
        (F32, Bool) => "is_nan(a0) || a0 != 0.0",
        (I32, F32) => "f32(a0)",
        (I32, Bool) => "a0 != 0",
        (Bool, F32) => "select(0.0, 1.0, a0)",
        (Bool, I32) => "select(0, 1, a0)",
        _ => return None,
    })
}

impl WgpuBackend {
    /// `expr` over `inputs` broadcast together, as an `out` array; `None` where a dtype, the
    /// rank or the size is beyond the kernel (the CPU kernel then runs, and reports any error).
    fn typed(&self, key: &str, inputs: &[&Array], out: DType, expr: &str) -> Option<Result<Array>> {
        let dtypes: Vec<DType> = inputs.iter().map(|a| a.dtype()).collect();
        if wgsl_type(out).is_none()
            || dtypes.iter().any(|&d| wgsl_type(d).is_none())
            || !inputs.iter().all(|a| indexable(a))
            || inputs.len() + 2 > self.gpu.max_bindings as usize
        {
            return None;
        }
        let mut shape = inputs[0].shape().to_vec();
        for a in &inputs[1..] {
            shape = broadcast_shapes("Select", &shape, a.shape()).ok()?.to_vec();
        }
        let n: usize = shape.iter().product();
        if shape.len() > MAX_RANK || n > i32::MAX as usize {
            return None;
        }
        Some(self.typed_kernel(key, inputs, &dtypes, out, expr, &shape))
    }

    fn typed_kernel(
        &self,
        key: &str,
        inputs: &[&Array],
        dtypes: &[DType],
        out: DType,
        expr: &str,
        shape: &[usize],
    ) -> Result<Array> {
        let n: usize = shape.iter().product();
        let result = self.gpu.alloc(out, n)?;
        if n > 0 {
            let views = inputs
                .iter()
                .map(|a| a.broadcast_to(shape))
                .collect::<Result<Vec<_>>>()?;
            let mut words = vec![n as u32, shape.len() as u32];
            words.extend(views.iter().map(|v| v.offset() as u32));
            words.extend(dims(shape));
            for v in &views {
                words.extend(strides(v.strides()));
            }
            let params = self.gpu.params(&words)?;
            let names: Vec<String> = dtypes.iter().map(|d| d.to_string()).collect();
            let key = format!("{key}_{}_{out}", names.join("_"));
            let pipeline = self.gpu.pipeline(&key, || source(dtypes, out, expr));
            let mut bindings = vec![&params, &result];
            bindings.extend(views.iter().map(|v| memory(v).expect("a device input")));
            // A bool output takes four elements per invocation.
            let invocations = if out == DType::Bool { n.div_ceil(4) } else { n };
            let count = invocations.div_ceil(GROUP as usize);
            self.gpu.run(&pipeline, &bindings, groups(count));
        }
        self.wrap(result, shape)
    }

    pub(crate) fn relu_grad_kernel(&self, g: &Array, y: &Array) -> Option<Result<Array>> {
        if g.dtype() != DType::F32 {
            return None;
        }
        // NaN in y counts as not positive, as on the CPU.
        self.typed(
            "relu_grad",
            &[g, y],
            DType::F32,
            "select(0.0, a0, a1 > 0.0 && !is_nan(a1))",
        )
    }

    pub(crate) fn compare_kernel(
        &self,
        op: CompareOp,
        a: &Array,
        b: &Array,
    ) -> Option<Result<Array>> {
        let expr = compare_expr(op, a.dtype());
        self.typed(op.name(), &[a, b], DType::Bool, &expr)
    }

    pub(crate) fn select_kernel(
        &self,
        cond: &Array,
        x: &Array,
        y: &Array,
    ) -> Option<Result<Array>> {
        self.typed("select", &[cond, x, y], x.dtype(), "select(a2, a1, a0)")
    }

    pub(crate) fn cast_kernel(&self, a: &Array, dtype: DType) -> Option<Result<Array>> {
        self.typed("cast", &[a], dtype, cast_expr(a.dtype(), dtype)?)
    }

    /// A contiguous copy of a bool view.
    pub(crate) fn copy_bool(&self, a: &Array) -> Option<Result<Array>> {
        self.typed("copy", &[a], DType::Bool, "a0")
    }
}
