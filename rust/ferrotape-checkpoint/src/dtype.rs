//! TensorFlow's `DataType` enum (tensorflow/core/framework/types.proto) as stored in a bundle
//! entry: the number, its name, and the bytes one element takes in a data shard.

/// A `DataType` number as TensorFlow writes it. A newtype rather than an enum: an index may hold
/// any number (TensorFlow adds types), and [`read_index`](crate::read_index) lists every entry
/// whether or not its dtype can be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataType(pub i32);

impl DataType {
    pub const FLOAT: Self = Self(1);
    pub const DOUBLE: Self = Self(2);
    pub const INT32: Self = Self(3);
    pub const UINT8: Self = Self(4);
    pub const INT16: Self = Self(5);
    pub const INT8: Self = Self(6);
    pub const STRING: Self = Self(7);
    pub const COMPLEX64: Self = Self(8);
    pub const INT64: Self = Self(9);
    pub const BOOL: Self = Self(10);
    pub const BFLOAT16: Self = Self(14);
    pub const UINT16: Self = Self(17);
    pub const COMPLEX128: Self = Self(18);
    pub const HALF: Self = Self(19);
    pub const UINT32: Self = Self(22);
    pub const UINT64: Self = Self(23);

    /// The types a bundle stores as plain little-endian elements, with their byte widths; DT_STRING
    /// has its own layout (see the crate docs). Everything else (resources, variants, quantized and
    /// sub-byte types) is refused by name rather than guessed at.
    const FIXED: [(Self, usize, &'static str); 15] = [
        (Self::FLOAT, 4, "DT_FLOAT"),
        (Self::DOUBLE, 8, "DT_DOUBLE"),
        (Self::INT32, 4, "DT_INT32"),
        (Self::UINT8, 1, "DT_UINT8"),
        (Self::INT16, 2, "DT_INT16"),
        (Self::INT8, 1, "DT_INT8"),
        (Self::COMPLEX64, 8, "DT_COMPLEX64"),
        (Self::INT64, 8, "DT_INT64"),
        (Self::BOOL, 1, "DT_BOOL"),
        (Self::BFLOAT16, 2, "DT_BFLOAT16"),
        (Self::UINT16, 2, "DT_UINT16"),
        (Self::COMPLEX128, 16, "DT_COMPLEX128"),
        (Self::HALF, 2, "DT_HALF"),
        (Self::UINT32, 4, "DT_UINT32"),
        (Self::UINT64, 8, "DT_UINT64"),
    ];

    /// Bytes per element in a data shard; `None` for DT_STRING and for types this crate does not
    /// read or write.
    pub fn element_size(self) -> Option<usize> {
        Self::FIXED
            .iter()
            .find(|(t, _, _)| *t == self)
            .map(|(_, size, _)| *size)
    }

    /// Whether [`write_bundle`](crate::write_bundle) and [`BundleReader::read`](crate::BundleReader::read)
    /// handle this type.
    pub fn is_supported(self) -> bool {
        self == Self::STRING || self.element_size().is_some()
    }

    /// TensorFlow's name for the number ("DT_FLOAT"), for messages.
    pub fn name(self) -> String {
        let known = match self.0 {
            0 => Some("DT_INVALID"),
            7 => Some("DT_STRING"),
            11 => Some("DT_QINT8"),
            12 => Some("DT_QUINT8"),
            13 => Some("DT_QINT32"),
            15 => Some("DT_QINT16"),
            16 => Some("DT_QUINT16"),
            20 => Some("DT_RESOURCE"),
            21 => Some("DT_VARIANT"),
            29 => Some("DT_INT4"),
            30 => Some("DT_UINT4"),
            _ => Self::FIXED
                .iter()
                .find(|(t, _, _)| *t == self)
                .map(|(_, _, name)| *name),
        };
        match known {
            Some(name) => format!("{name} ({})", self.0),
            None => format!("DataType {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_element_type() {
        assert_eq!(DataType::FLOAT.element_size(), Some(4));
        assert_eq!(DataType::COMPLEX128.element_size(), Some(16));
        assert_eq!(DataType::BOOL.element_size(), Some(1));
        assert_eq!(DataType::STRING.element_size(), None);
        assert!(DataType::STRING.is_supported());
        assert!(!DataType(21).is_supported());
        assert_eq!(DataType(21).name(), "DT_VARIANT (21)");
        assert_eq!(DataType(999).name(), "DataType 999");
    }
}
