//! dtype conversion, with TensorFlow's rules: float to int truncates toward zero, int to int
//! keeps the low bits (wrapping), anything to bool is `x != 0`, bool to number is 0 or 1.
//! Out-of-range floats become what TensorFlow's x86 conversion makes of them (see
//! [`Element::from_f64`]).
//!
//! The seven compute dtypes convert directly between each other. A narrow integer (see
//! [`DType::is_narrow`]) converts through int64 or float64 values: one loop per dtype on each
//! side instead of one per pair, so adding six dtypes did not add 6 x 13 conversion loops.
//!
//! Complex types convert through their parts, as TensorFlow casts them: to a real dtype keeps
//! the real part, from one sets the imaginary part to 0.

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

/// One compute dtype to another through f64, exact for every value of the source (int64 to
/// int32, the one pair where it is not, is handled in `cast`).
fn convert<S: Element, D: Element>(a: &Array) -> Result<Buffer> {
    Ok(D::into_buffer(map::<S, D>(a, |x| D::from_f64(x.to_f64()))?))
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

/// The values of a float array as f64.
fn as_f64(a: &Array) -> Result<Vec<f64>> {
    match a.dtype() {
        DType::F16 => map::<f16, f64>(a, |x| x.to_f64()),
        DType::BF16 => map::<bf16, f64>(a, |x| x.to_f64()),
        DType::F32 => map::<f32, f64>(a, |x| x as f64),
        _ => map::<f64, f64>(a, |x| x),
    }
}

fn to_i64<S: Element>(a: &Array) -> Result<Vec<i64>> {
    map::<S, i64>(a, |x| x.to_i64())
}

/// The values of an integer or bool array as i64 (uint64 keeps its bits).
fn as_i64(a: &Array) -> Result<Vec<i64>> {
    match a.dtype() {
        DType::I8 => to_i64::<i8>(a),
        DType::I16 => to_i64::<i16>(a),
        DType::I32 => to_i64::<i32>(a),
        DType::U8 => to_i64::<u8>(a),
        DType::U16 => to_i64::<u16>(a),
        DType::U32 => to_i64::<u32>(a),
        DType::U64 => to_i64::<u64>(a),
        DType::Bool => to_i64::<bool>(a),
        _ => to_i64::<i64>(a),
    }
}

/// i64 (`ints`) or f64 values converted to the narrow dtype `D`.
fn narrow_to<D: Element>(ints: Option<Vec<i64>>, floats: Vec<f64>) -> Buffer {
    match ints {
        Some(v) => D::into_buffer(v.into_iter().map(D::from_i64).collect()),
        None => D::into_buffer(floats.into_iter().map(D::from_f64).collect()),
    }
}

/// `narrow_to` for the narrow `dtype`.
fn narrow(dtype: DType, ints: Option<Vec<i64>>, floats: Vec<f64>) -> Buffer {
    match dtype {
        DType::I8 => narrow_to::<i8>(ints, floats),
        DType::I16 => narrow_to::<i16>(ints, floats),
        DType::U8 => narrow_to::<u8>(ints, floats),
        DType::U16 => narrow_to::<u16>(ints, floats),
        DType::U32 => narrow_to::<u32>(ints, floats),
        _ => narrow_to::<u64>(ints, floats),
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
    if src.is_complex() || dtype.is_complex() {
        return cast_complex(a, dtype);
    }
    let buf = if dtype.is_narrow() {
        // A float keeps its fraction until the narrowing truncates it, an integer its bits.
        if src.is_float() {
            narrow(dtype, None, as_f64(a)?)
        } else {
            narrow(dtype, Some(as_i64(a)?), Vec::new())
        }
    } else if src.is_narrow() {
        let wide = if dtype.is_float() {
            let values: Vec<f64> = as_i64(a)?
                .into_iter()
                .map(|v| match src {
                    DType::U64 => v as u64 as f64,
                    _ => v as f64,
                })
                .collect();
            Array::from_vec(values, a.shape())?
        } else {
            Array::from_vec(as_i64(a)?, a.shape())?
        };
        return cast(&wide, dtype);
    } else if src == DType::I64 && dtype == DType::I32 {
        // Keeps the low bits, as TensorFlow does (f64 would round past 2**53 and saturate).
        Buffer::I32(map::<i64, i32>(a, |x| x as i32)?.into())
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

/// `cast` to or from a complex dtype, through the parts (no conversion loop of its own).
fn cast_complex(a: &Array, dtype: DType) -> Result<Array> {
    use super::complex::{complex, complex_part, ComplexPart};
    let src = a.dtype();
    if !dtype.is_complex() {
        return cast(&complex_part(a, ComplexPart::Real)?, dtype);
    }
    let part = dtype.real_dtype();
    let (re, im) = if src.is_complex() {
        (
            cast(&complex_part(a, ComplexPart::Real)?, part)?,
            cast(&complex_part(a, ComplexPart::Imag)?, part)?,
        )
    } else {
        let re = cast(a, part)?;
        let im = Array::zeros("Cast", part, a.shape())?;
        (re, im)
    };
    complex(&re, &im)
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

    #[test]
    fn complex_casts_keep_the_real_part_and_add_a_zero_imaginary_one() {
        use crate::Complex;
        let z = Array::from_vec(
            vec![
                Complex {
                    re: 1.5f64,
                    im: -2.0,
                },
                Complex { re: -3.0, im: 4.0 },
            ],
            &[2],
        )
        .unwrap();
        assert_eq!(
            cast(&z, DType::F32).unwrap().to_vec::<f32>(),
            vec![1.5, -3.0]
        );
        assert_eq!(cast(&z, DType::I32).unwrap().to_vec::<i32>(), vec![1, -3]);
        let narrow = cast(&z, DType::C64).unwrap();
        assert_eq!(
            narrow.to_vec::<Complex<f32>>()[1],
            Complex { re: -3.0, im: 4.0 }
        );
        let from_int = cast(&Array::from_vec(vec![7i64], &[1]).unwrap(), DType::C128).unwrap();
        assert_eq!(
            from_int.to_vec::<Complex<f64>>(),
            vec![Complex { re: 7.0, im: 0.0 }]
        );
    }
}
