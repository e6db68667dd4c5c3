//! Element types. The names and the promotion-free rules follow TensorFlow: binary ops require
//! equal dtypes, Python floats become `float32` and Python ints `int32`.
//!
//! Design choice (hard to undo): the narrow integers (`int8`, `int16`, `uint8` ... `uint64`)
//! are *storage* dtypes. Each is stored in the buffer of its width's twin (see
//! [`DType::twin`] and [`crate::Buffer`]), so data movement (copies, gathers, concat, pad,
//! select) is compiled once per width, not once per dtype; arithmetic, comparisons and
//! reductions widen them to `int32`/`int64` (see [`DType::wide`]), run the existing kernels and
//! narrow back with wrapping. The wheel has a size budget, and monomorphising every kernel six
//! more times would spend it on loops that are rarely hot for these types.
//!
//! Complex numbers (`complex64`, `complex128`) are storage dtypes the same way, one step
//! further: the core stores and moves them (complex64 in int64's storage, its 8-byte twin;
//! complex128 in a 16-byte variant of its own, the one width nothing else has) and has exactly
//! three value loops for them, building one from a real and an imaginary part and taking
//! either part back out (see `kernels::complex`). The kernels that are linear over the reals
//! (add/subtract, sums, scatter-adds) run on the two parts; the rest of complex arithmetic is
//! written in the autodiff crate as real arithmetic on the parts. That keeps the wheel's size flat (no
//! kernel is instantiated for complex types), and it makes the gradients TensorFlow's by
//! construction: TensorFlow's gradient for a complex `z = x + iy` is `dL/dx + i dL/dy`, which
//! is exactly what differentiating through the real parts gives.

use std::fmt;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F16,
    BF16,
    F32,
    F64,
    I32,
    I64,
    Bool,
    I8,
    I16,
    U8,
    U16,
    U32,
    U64,
    /// Two float32s (real, imaginary), stored in int64's storage (see the module docs).
    C64,
    /// Two float64s.
    C128,
}

impl DType {
    /// Every dtype: the real ones in the order TensorFlow lists them, then the complex ones.
    pub const ALL: [DType; 15] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
        DType::C64,
        DType::C128,
    ];

    /// TensorFlow's name for the dtype (`float32`, `int64`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "float16" | "half" => DType::F16,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            _ => return DType::ALL.into_iter().find(|d| d.name() == name),
        })
    }

    /// Floating dtypes are the only ones gradients flow through.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Signed or unsigned integers of any width.
    pub fn is_int(self) -> bool {
        !self.is_float() && !self.is_complex() && self != DType::Bool
    }

    /// complex64 or complex128 (see the module docs).
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// Whether gradients flow through the dtype: the floats and the complex types.
    pub fn is_differentiable(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The dtype of a complex type's parts (float32 for complex64, float64 for complex128);
    /// a real dtype is its own.
    pub fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex type whose parts are `self` (float32 or float64), if there is one.
    pub fn complex_of(self) -> Option<DType> {
        match self {
            DType::F32 => Some(DType::C64),
            DType::F64 => Some(DType::C128),
            _ => None,
        }
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// The dtype whose buffer variant holds this one's bits: int8 shares uint8's storage,
    /// int16 uint16's, uint32 int32's, uint64 and complex64 int64's (itself for the others). Twins are
    /// moved by the same compiled copy loops; their values are never mixed up because every
    /// kernel that reads values widens first (see [`DType::wide`]).
    pub fn twin(self) -> DType {
        match self {
            DType::I8 => DType::U8,
            DType::I16 => DType::U16,
            DType::U32 => DType::I32,
            DType::U64 | DType::C64 => DType::I64,
            d => d,
        }
    }

    /// Whether this is one of the narrow integer storage dtypes (see the module docs).
    pub fn is_narrow(self) -> bool {
        matches!(
            self,
            DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::U32 | DType::U64
        )
    }

    /// The dtype arithmetic on a narrow integer runs in, where every value is exact and
    /// wrapping add/subtract/multiply agree with the narrow type's modulo its width: int32 for
    /// the 8- and 16-bit types, int64 for uint32. uint64 has nothing wider: it runs in int64
    /// on the same bits (wrapping add/subtract/multiply are the same on two's-complement bits),
    /// and the order-dependent ops see it with its top bit flipped (comparisons, max/min,
    /// argmax) or divide it as `u64`.
    pub fn wide(self) -> DType {
        match self {
            DType::I8 | DType::I16 | DType::U8 | DType::U16 => DType::I32,
            DType::U32 | DType::U64 => DType::I64,
            d => d,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_twins_share_a_width() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
            assert_eq!(d.twin().size_in_bytes(), d.size_in_bytes());
            assert_eq!(d.twin().twin(), d.twin());
            assert!(d.wide().size_in_bytes() >= d.size_in_bytes());
        }
        assert_eq!(DType::from_name("double"), Some(DType::F64));
        assert!(DType::U8.is_int() && DType::U8.is_unsigned() && !DType::I8.is_unsigned());
        assert!(!DType::Bool.is_int() && !DType::F16.is_int());
        assert!(DType::C64.is_complex() && !DType::C64.is_int() && !DType::C128.is_float());
        assert_eq!(DType::C64.real_dtype(), DType::F32);
        assert_eq!(DType::F64.complex_of(), Some(DType::C128));
        assert_eq!(DType::C128.size_in_bytes(), 16);
    }
}
