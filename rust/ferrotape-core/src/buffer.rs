//! Storage: one typed, reference-counted CPU buffer per tensor value.
//!
//! Design choice (hard to undo): storage is an enum over element types holding a plain `Vec`,
//! shared through `Arc` by every view of it. Views (reshape, transpose, slices, broadcasts) are
//! `Array` layouts over the same buffer. Kernels match on the enum once per call and then run
//! monomorphised loops, so dispatch cost is per op, never per element. A second device adds a
//! variant to [`Device`] and a device buffer behind the `gpu` feature; ops reach storage only
//! through `Array`, so they need no rewrite.

use half::{bf16, f16};

use crate::DType;

/// Where a buffer lives. Only the CPU exists today; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    #[default]
    Cpu,
}

/// A typed, contiguous block of elements.
#[derive(Clone, Debug)]
pub enum Buffer {
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Buffer {
    pub fn dtype(&self) -> DType {
        match self {
            Buffer::F16(_) => DType::F16,
            Buffer::BF16(_) => DType::BF16,
            Buffer::F32(_) => DType::F32,
            Buffer::F64(_) => DType::F64,
            Buffer::I32(_) => DType::I32,
            Buffer::I64(_) => DType::I64,
            Buffer::Bool(_) => DType::Bool,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Buffer::F16(v) => v.len(),
            Buffer::BF16(v) => v.len(),
            Buffer::F32(v) => v.len(),
            Buffer::F64(v) => v.len(),
            Buffer::I32(v) => v.len(),
            Buffer::I64(v) => v.len(),
            Buffer::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A buffer of `len` zeros (false for bool).
    pub fn zeros(dtype: DType, len: usize) -> Buffer {
        match dtype {
            DType::F16 => Buffer::F16(vec![f16::ZERO; len]),
            DType::BF16 => Buffer::BF16(vec![bf16::ZERO; len]),
            DType::F32 => Buffer::F32(vec![0.0; len]),
            DType::F64 => Buffer::F64(vec![0.0; len]),
            DType::I32 => Buffer::I32(vec![0; len]),
            DType::I64 => Buffer::I64(vec![0; len]),
            DType::Bool => Buffer::Bool(vec![false; len]),
        }
    }

    /// A buffer of `len` copies of `value` converted to `dtype` (non-zero is true for bool).
    pub fn full(dtype: DType, len: usize, value: f64) -> Buffer {
        match dtype {
            DType::F16 => Buffer::F16(vec![f16::from_f64(value); len]),
            DType::BF16 => Buffer::BF16(vec![bf16::from_f64(value); len]),
            DType::F32 => Buffer::F32(vec![value as f32; len]),
            DType::F64 => Buffer::F64(vec![value; len]),
            DType::I32 => Buffer::I32(vec![value as i32; len]),
            DType::I64 => Buffer::I64(vec![value as i64; len]),
            DType::Bool => Buffer::Bool(vec![value != 0.0; len]),
        }
    }
}

/// A Rust element type that a [`Buffer`] can hold.
pub trait Element: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    const DTYPE: DType;
    fn slice(buf: &Buffer) -> Option<&[Self]>;
    fn into_buffer(v: Vec<Self>) -> Buffer;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

macro_rules! element {
    ($t:ty, $variant:ident, $to:expr, $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn slice(buf: &Buffer) -> Option<&[Self]> {
                match buf {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_buffer(v: Vec<Self>) -> Buffer {
                Buffer::$variant(v)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                let f: fn($t) -> f64 = $to;
                f(self)
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                let f: fn(f64) -> $t = $from;
                f(v)
            }
        }
    };
}

element!(f16, F16, |x| x.to_f64(), f16::from_f64);
element!(bf16, BF16, |x| x.to_f64(), bf16::from_f64);
element!(f32, F32, |x| x as f64, |v| v as f32);
element!(f64, F64, |x| x, |v| v);
// Out-of-range floats and NaN become the minimum, as x86's conversion (and so TensorFlow) does.
element!(i32, I32, |x| x as f64, |v| {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
});
element!(i64, I64, |x| x as f64, |v| {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
});
element!(bool, Bool, |x| if x { 1.0 } else { 0.0 }, |v| v != 0.0);

/// Runs `$body` with `$v` bound to the typed `Vec` inside a buffer, whatever its dtype.
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::BF16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::I32($v) => $body,
            $crate::Buffer::I64($v) => $body,
            $crate::Buffer::Bool($v) => $body,
        }
    };
}
