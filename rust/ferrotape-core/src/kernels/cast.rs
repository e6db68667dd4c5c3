//! dtype conversion, with TensorFlow's rules: float to int truncates toward zero, anything to
//! bool is `x != 0`, bool to number is 0 or 1.

use crate::{for_each_offset, Array, Buffer, DType, Element, Result};

fn convert<S: Element, D: Element>(src: &Array, data: &[S]) -> Result<Vec<D>> {
    let mut out = crate::alloc("Cast", src.shape())?;
    if let Some(s) = src.contiguous_slice::<S>() {
        out.extend(s.iter().map(|&x| D::from_f64(x.to_f64())));
    } else {
        for_each_offset(src.shape(), [src.strides()], [src.offset()], |[i]| {
            out.push(D::from_f64(data[i].to_f64()))
        });
    }
    Ok(out)
}

/// `a` converted to `dtype` (a plain view when the dtype is already right).
pub fn cast(a: &Array, dtype: DType) -> Result<Array> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    if let Some(r) = crate::device::dispatch([a], |d, [a]| d.cast(a, dtype)) {
        return r;
    }
    let buf = crate::with_buffer!(a.buffer(), v => match dtype {
        DType::F16 => Buffer::F16(convert(a, v)?.into()),
        DType::BF16 => Buffer::BF16(convert(a, v)?.into()),
        DType::F32 => Buffer::F32(convert(a, v)?.into()),
        DType::F64 => Buffer::F64(convert(a, v)?.into()),
        DType::I32 => Buffer::I32(convert(a, v)?.into()),
        DType::I64 => Buffer::I64(convert(a, v)?.into()),
        DType::Bool => Buffer::Bool(convert(a, v)?.into()),
    });
    Array::from_buffer(buf, a.shape())
}
