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
}

impl DType {
    /// Every dtype, in the order TensorFlow lists its real ones.
    pub const ALL: [DType; 13] = [
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
        !self.is_float() && self != DType::Bool
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// The dtype whose buffer variant holds this one's bits: int8 shares uint8's storage,
    /// int16 uint16's, uint32 int32's and uint64 int64's (itself for the others). Twins are
    /// moved by the same compiled copy loops; their values are never mixed up because every
    /// kernel that reads values widens first (see [`DType::wide`]).
    pub fn twin(self) -> DType {
        match self {
            DType::I8 => DType::U8,
            DType::I16 => DType::U16,
            DType::U32 => DType::I32,
            DType::U64 => DType::I64,
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
    }
}
