//! dtype conversion, with TensorFlow's rules: float to int truncates toward zero, int to int
//! keeps the low bits (wrapping), anything to bool is `x != 0`, bool to number is 0 or 1.
//! Out-of-range floats become what TensorFlow's x86 conversion makes of them (see
//! [`Element::from_f64`]).
//!
//! The seven compute dtypes convert directly between each other. A narrow integer (see
//! [`DType::is_narrow`]) converts through int64 or float64 values: one loop per dtype on each
//! side instead of one per pair, so adding six dtypes did not add 6 x 13 conversion loops.

use half::{bf16, f16};

use crate::{alloc, for_each_offset, Array, Buffer, DType, Element, Result};

/// `a`'s elements, of dtype `S`, each mapped by `f`.
fn map<S: Element, D: Element>(a: &Array, f: impl Fn(S) -> D) -> Result<Vec<D>> {
    let mut out = alloc("Cast", a.shape())?;
    if let Some(s) = a.contiguous_slice::<S>() {
        out.extend(s.iter().map(|&x| f(x)));
    } else {
        let data = S::slice(a.buffer()).expect("S is the array's dtype");
        for_each_offset(a.shape(), [a.strides()], [a.offset()], |[i]| {
            out.push(f(data[i]))
        });
    }
    Ok(out)
}

/// One compute dtype to another: integers to integers through i64 (wrapping), the rest
/// through f64 (exact for every value of the source).
fn convert<S: Element, D: Element>(a: &Array) -> Result<Buffer> {
    let out = if S::DTYPE.is_int() && D::DTYPE.is_int() {
        map::<S, D>(a, |x| D::from_i64(x.to_i64()))?
    } else {
        map::<S, D>(a, |x| D::from_f64(x.to_f64()))?
    };
    Ok(D::into_buffer(out))
}

/// From the compute dtype of `a` to `D`.
fn to<D: Element>(a: &Array) -> Result<Buffer> {
    match a.dtype() {
        DType::F16 => convert::<f16, D>(a),
        DType::BF16 => convert::<bf16, D>(a),
        DType::F32 => convert::<f32, D>(a),
        DType::F64 => convert::<f64, D>(a),
        DType::I32 => convert::<i32, D>(a),
        DType::I64 => convert::<i64, D>(a),
        _ => convert::<bool, D>(a),
    }
}

/// Calls `$f::<T>` with the Rust type of `$dtype`, any dtype.
macro_rules! typed {
    ($dtype:expr, $f:ident($($arg:expr),*)) => {
        match $dtype {
            DType::F16 => $f::<f16>($($arg),*),
            DType::BF16 => $f::<bf16>($($arg),*),
            DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            DType::I32 => $f::<i32>($($arg),*),
            DType::I64 => $f::<i64>($($arg),*),
            DType::Bool => $f::<bool>($($arg),*),
            DType::I8 => $f::<i8>($($arg),*),
            DType::I16 => $f::<i16>($($arg),*),
            DType::U8 => $f::<u8>($($arg),*),
            DType::U16 => $f::<u16>($($arg),*),
            DType::U32 => $f::<u32>($($arg),*),
            DType::U64 => $f::<u64>($($arg),*),
        }
    };
}

fn as_i64<S: Element>(a: &Array) -> Result<Vec<i64>> {
    map::<S, i64>(a, |x| x.to_i64())
}

fn as_f64<S: Element>(a: &Array) -> Result<Vec<f64>> {
    map::<S, f64>(a, |x| x.to_f64())
}

/// Converts i64 (`ints`) or f64 values to the narrow dtype `D`.
fn narrow<D: Element>(ints: Option<Vec<i64>>, floats: Vec<f64>) -> Buffer {
    match ints {
        Some(v) => D::into_buffer(v.into_iter().map(D::from_i64).collect()),
        None => D::into_buffer(floats.into_iter().map(D::from_f64).collect()),
    }
}

/// `a` converted to `dtype` (a plain view when the dtype is already right).
pub fn cast(a: &Array, dtype: DType) -> Result<Array> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    if let Some(r) = crate::device::dispatch([a], |d, [a]| d.cast(a, dtype)) {
        return r;
    }
    let src = a.dtype();
    let buf = if dtype.is_narrow() {
        // A float keeps its fraction until the narrowing truncates it, an integer its bits.
        if src.is_float() {
            let values = typed!(src, as_f64(a))?;
            typed!(dtype, narrow(None, values))
        } else {
            let values = typed!(src, as_i64(a))?;
            typed!(dtype, narrow(Some(values), Vec::new()))
        }
    } else if src.is_narrow() {
        let wide = if dtype.is_float() {
            Array::from_vec(typed!(src, as_f64(a))?, a.shape())?
        } else {
            Array::from_vec(typed!(src, as_i64(a))?, a.shape())?
        };
        return cast(&wide, dtype);
    } else {
        match dtype {
            DType::F16 => to::<f16>(a)?,
            DType::BF16 => to::<bf16>(a)?,
            DType::F32 => to::<f32>(a)?,
            DType::F64 => to::<f64>(a)?,
            DType::I32 => to::<i32>(a)?,
            DType::I64 => to::<i64>(a)?,
            _ => to::<bool>(a)?,
        }
    };
    Array::from_buffer(buf, a.shape())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast_vec<S: Element, D: Element>(v: Vec<S>, to: DType) -> Vec<D> {
        let n = v.len();
        cast(&Array::from_vec(v, &[n]).unwrap(), to)
            .unwrap()
            .to_vec::<D>()
    }

    #[test]
    fn integers_wrap_and_floats_convert_as_tensorflow_on_x86() {
        // Values from TensorFlow 2.21 on x86.
        let f = vec![300.0f32, -1.0, 1e10, f32::NAN, 255.9, -0.5, 70000.0, -200.0];
        assert_eq!(
            cast_vec::<f32, u8>(f.clone(), DType::U8),
            [44, 255, 0, 0, 255, 0, 112, 56]
        );
        assert_eq!(
            cast_vec::<f32, i16>(f.clone(), DType::I16),
            [300, -1, 0, 0, 255, 0, 4464, -200]
        );
        assert_eq!(
            cast_vec::<f32, u32>(f.clone(), DType::U32),
            [300, u32::MAX, 1 << 31, 1 << 31, 255, 0, 70000, 4294967096]
        );
        assert_eq!(
            cast_vec::<f64, u64>(vec![-1.0, 1e19, 3e19, f64::NAN], DType::U64),
            [u64::MAX, 10_000_000_000_000_000_000, 1 << 63, 1 << 63]
        );
        let big = vec![-1i64, 300, -70000, (1 << 40) + 5, i64::MIN];
        assert_eq!(
            cast_vec::<i64, u8>(big.clone(), DType::U8),
            [255, 44, 144, 5, 0]
        );
        assert_eq!(
            cast_vec::<i64, i32>(big.clone(), DType::I32),
            [-1, 300, -70000, 5, 0]
        );
        let top = vec![u64::MAX, 1 << 63, 5];
        assert_eq!(cast_vec::<u64, i8>(top.clone(), DType::I8), [-1, 0, 5]);
        assert_eq!(
            cast_vec::<u64, f64>(top.clone(), DType::F64),
            [1.8446744073709552e19, 9.223372036854776e18, 5.0]
        );
        assert_eq!(cast_vec::<i8, u16>(vec![-1, 5], DType::U16), [65535, 5]);
        assert_eq!(cast_vec::<u8, bool>(vec![0, 2], DType::Bool), [false, true]);
        assert_eq!(cast_vec::<bool, u32>(vec![true], DType::U32), [1]);
    }
}
