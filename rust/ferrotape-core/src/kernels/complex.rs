//! The complex dtypes' only value kernels: a complex array from its real and imaginary parts,
//! and either part back out. Everything else complex (arithmetic, matmul, reductions, casts) is
//! built from these and the real kernels, so no loop is compiled per complex op (see `DType`'s
//! module docs for why).

use crate::{alloc, Array, Complex, DType, Element, Error, Result};

/// One of a complex number's two parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComplexPart {
    Real,
    Imag,
}

fn join<T: Element>(op: &'static str, re: &Array, im: &Array) -> Result<Array>
where
    Complex<T>: Element,
{
    let mut out = alloc::<Complex<T>>(op, re.shape())?;
    let (re_v, im_v) = (re.to_vec::<T>(), im.to_vec::<T>());
    out.extend(
        re_v.into_iter()
            .zip(im_v)
            .map(|(re, im)| Complex { re, im }),
    );
    Array::from_vec(out, re.shape())
}

fn split<T: Element>(z: &Array, part: ComplexPart) -> Result<Array>
where
    Complex<T>: Element,
{
    let mut out = alloc::<T>("Real", z.shape())?;
    let values = z.to_vec::<Complex<T>>();
    out.extend(values.into_iter().map(|c| match part {
        ComplexPart::Real => c.re,
        ComplexPart::Imag => c.im,
    }));
    Array::from_vec(out, z.shape())
}

/// `re + i·im` (TensorFlow's `Complex`): both float32 (giving complex64) or both float64
/// (complex128), of one shape (the caller broadcasts).
pub fn complex(re: &Array, im: &Array) -> Result<Array> {
    const OP: &str = "Complex";
    if re.dtype() != im.dtype() {
        return Err(Error::mismatch(OP, re.dtype(), im.dtype()));
    }
    if re.shape() != im.shape() {
        return Err(Error::invalid(
            OP,
            format!(
                "real and imaginary parts must have one shape, received {:?} and {:?}",
                re.shape(),
                im.shape()
            ),
        ));
    }
    match re.dtype() {
        DType::F32 => join::<f32>(OP, re, im),
        DType::F64 => join::<f64>(OP, re, im),
        d => Err(Error::unsupported(OP, d, "float32 or float64")),
    }
}

/// The real or imaginary part of a complex array (TensorFlow's `Real`/`Imag`), in its
/// [`DType::real_dtype`].
pub fn complex_part(z: &Array, part: ComplexPart) -> Result<Array> {
    let op = match part {
        ComplexPart::Real => "Real",
        ComplexPart::Imag => "Imag",
    };
    match z.dtype() {
        DType::C64 => split::<f32>(z, part),
        DType::C128 => split::<f64>(z, part),
        d => Err(Error::unsupported(op, d, "complex64 or complex128")),
    }
}

/// `f` applied to each part of a complex array and the results joined: how the kernels that
/// are linear over the reals (sums, scatter-adds) reach complex arrays without loops of their own.
pub(crate) fn via_parts(z: &Array, f: impl Fn(&Array) -> Result<Array>) -> Result<Array> {
    let re = f(&complex_part(z, ComplexPart::Real)?)?;
    let im = f(&complex_part(z, ComplexPart::Imag)?)?;
    complex(&re, &im)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_round_trip_through_any_layout() {
        let re = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let im = Array::from_vec(vec![-1.0f32, 0.5, 0.0, 8.0], &[2, 2]).unwrap();
        let z = complex(&re, &im).unwrap();
        assert_eq!(z.dtype(), DType::C64);
        assert_eq!(z.to_vec::<Complex<f32>>()[1], Complex { re: 2.0, im: 0.5 });
        // A transposed view is read in its own order.
        let zt = z.transpose(&[1, 0]).unwrap();
        let back = complex_part(&zt, ComplexPart::Imag).unwrap();
        assert_eq!(back.to_vec::<f32>(), vec![-1.0, 0.0, 0.5, 8.0]);
        let re64 = Array::from_vec(vec![1.5f64], &[1]).unwrap();
        let z64 = complex(&re64, &re64).unwrap();
        assert_eq!(z64.dtype(), DType::C128);
        assert_eq!(
            complex_part(&z64, ComplexPart::Real)
                .unwrap()
                .to_vec::<f64>(),
            vec![1.5]
        );
        assert!(complex(&re, &re64).is_err());
        // Addition is linear: the core subtracts complex arrays part by part (broadcasting too).
        let row = z.slice_view(&[0, 0], &[1, 2], &[1, 1]);
        let diff = crate::kernels::binary(crate::kernels::BinaryOp::Sub, &z, &row).unwrap();
        assert_eq!(
            diff.to_vec::<Complex<f32>>()[2],
            Complex { re: 2.0, im: 1.0 }
        );
        assert!(complex_part(&re, ComplexPart::Real).is_err());
    }
}
