//! Element-wise kernels: unary maps, broadcasting binary ops, comparisons, logic and select.
//!
//! Ops are enums matched once per call; each arm instantiates a monomorphised loop, so the
//! per-element cost is the arithmetic alone. Half-precision inputs compute in f32.

use std::mem::MaybeUninit;

use half::{bf16, f16};
use rayon::prelude::*;

use super::{cast, special, FloatElem, PARALLEL_THRESHOLD};
use crate::{
    broadcast_shapes, check_alloc, for_each_offset, simd, Array, Buffer, DType, Element, Error,
    Result,
};

/// Elements per task when a loop is split across threads, and per [`simd::dispatch`] call.
const CHUNK: usize = 16 * 1024;

/// A vector of `len` elements, written by `fill(start, chunk)` chunk by chunk: in parallel for
/// large `len`, each chunk at the widest SIMD level in force.
///
/// # Safety
/// `fill` must write every element of the chunk it is given: the vector's length is set to
/// `len` afterwards, so an element left unwritten would be read as a value (the loops here
/// zip each chunk with inputs at least as long as the rest of the output).
unsafe fn filled<U: Element>(
    len: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<U>]) + Sync,
) -> Result<Vec<U>> {
    let mut out = crate::alloc::<U>("ElementWise", &[len])?;
    let spare = &mut out.spare_capacity_mut()[..len];
    fill_chunks(spare, &|start, chunk| {
        simd::dispatch(
            #[inline(always)]
            || fill(start, chunk),
        )
    });
    // SAFETY: every chunk of the first `len` slots was written by `fill` (the caller's
    // promise, this function's safety contract).
    unsafe { out.set_len(len) };
    Ok(out)
}

/// Hands `spare` to `fill` in [`CHUNK`]-element pieces across rayon's pool when it is large,
/// whole otherwise. `fill` arrives as a trait object so that this driver, and rayon's job
/// machinery under it, is compiled once per element type rather than once per op and element
/// type: there are hundreds of element-wise loops, and a copy of the driver for each (about
/// 3 kB of machine code apiece, plus a second, serial copy of the loop) cost the wheel over a
/// megabyte. A call through a vtable per 16K-element chunk costs nothing measurable.
fn fill_chunks<U: Send>(
    spare: &mut [MaybeUninit<U>],
    fill: &(dyn Fn(usize, &mut [MaybeUninit<U>]) + Sync),
) {
    if spare.len() >= PARALLEL_THRESHOLD {
        spare
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| fill(i * CHUNK, chunk));
    } else {
        fill(0, spare);
    }
}

/// `f` over a contiguous slice, in parallel chunks when it is long.
fn map_slice<T: Element, U: Element>(s: &[T], f: impl Fn(T) -> U + Sync) -> Result<Vec<U>> {
    // SAFETY: the chunk at `start` is zipped with `s[start..]`, exactly as long as the rest of
    // the output, so every element is written.
    unsafe {
        filled(
            s.len(),
            #[inline(always)]
            |start, out| {
                for (o, &x) in out.iter_mut().zip(&s[start..]) {
                    o.write(f(x));
                }
            },
        )
    }
}

/// Maps `data` (the buffer of `a`) through `f` in row-major order.
fn map<T: Element, U: Element>(a: &Array, data: &[T], f: impl Fn(T) -> U + Sync) -> Result<Vec<U>> {
    match Operand::of(a, data, a.shape()) {
        Some(Operand::Full(s)) => return map_slice(s, f),
        Some(Operand::Scalar(x)) => {
            let y = f(x);
            // SAFETY: `fill` writes the whole chunk.
            return unsafe { filled(a.len(), |_, out| out.fill(MaybeUninit::new(y))) };
        }
        Some(Operand::Block(block)) => {
            let mapped: Vec<U> = block.iter().map(|&x| f(x)).collect();
            let k = mapped.len();
            // SAFETY: the loop visits every element of the chunk.
            return unsafe {
                filled(a.len(), |start, out| {
                    for (i, o) in out.iter_mut().enumerate() {
                        o.write(mapped[(start + i) % k]);
                    }
                })
            };
        }
        None => {}
    }
    let mut out = crate::alloc::<U>("ElementWise", a.shape())?;
    for_each_offset(a.shape(), [a.strides()], [a.offset()], |[i]| {
        out.push(f(data[i]))
    });
    Ok(out)
}

/// `g(element, block element)` over consecutive rows of `full` the length of `block`.
fn rows<T: Element, U: Element>(
    full: &[T],
    block: &[T],
    g: impl Fn(T, T) -> U + Sync,
) -> Result<Vec<U>> {
    let k = block.len();
    // SAFETY: the chunk at `start` is zipped with `full[start..]` (as long as the rest of the
    // output) and `block`, cycled from the row position of `start`: the first partial row, then
    // whole rows of `k`, each as long as `block`, so every element is written.
    unsafe {
        filled(
            full.len(),
            #[inline(always)]
            |start, out| {
                // Each chunk starts mid-row in general: the first (partial) row, then whole rows.
                let mut done = 0;
                let lead = ((k - start % k) % k).min(out.len());
                for (o, (&p, &q)) in out[..lead]
                    .iter_mut()
                    .zip(full[start..].iter().zip(&block[start % k..]))
                {
                    o.write(g(p, q));
                }
                done += lead;
                for (o_row, p_row) in out[done..]
                    .chunks_mut(k)
                    .zip(full[start + done..].chunks(k))
                {
                    for (o, (&p, &q)) in o_row.iter_mut().zip(p_row.iter().zip(block)) {
                        o.write(g(p, q));
                    }
                }
            },
        )
    }
}

/// Combines `a` and `b` (already known to broadcast to `shape`) element by element.
fn zip<T: Element, U: Element>(
    a: &Array,
    da: &[T],
    b: &Array,
    db: &[T],
    shape: &[usize],
    f: impl Fn(T, T) -> U + Sync,
) -> Result<Vec<U>> {
    if let (Some(oa), Some(ob)) = (Operand::of(a, da, shape), Operand::of(b, db, shape)) {
        match (oa, ob) {
            (Operand::Full(x), Operand::Full(y)) => {
                // SAFETY: both operands are full, as long as the output, so the zip at
                // `start` covers the whole chunk.
                return unsafe {
                    filled(
                        x.len(),
                        #[inline(always)]
                        |start, out| {
                            let inputs = x[start..].iter().zip(&y[start..]);
                            for (o, (&p, &q)) in out.iter_mut().zip(inputs) {
                                o.write(f(p, q));
                            }
                        },
                    )
                };
            }
            // `move`: the scalar is copied into the closure. Captured by reference, it is read
            // from memory on every element, as the output's stores might change it, and the
            // loop did not vectorise (a scalar-times-tensor ran at a third of the speed of a
            // tensor-times-tensor).
            (Operand::Full(x), Operand::Scalar(q)) => return map_slice(x, move |p| f(p, q)),
            (Operand::Scalar(p), Operand::Full(y)) => return map_slice(y, move |q| f(p, q)),
            // A full operand and a contiguous block repeated over the leading axes (a bias
            // added to every row): row by row, without index arithmetic per element.
            (Operand::Full(x), Operand::Block(y)) => return rows(x, y, &f),
            (Operand::Block(x), Operand::Full(y)) => return rows(y, x, |q, p| f(p, q)),
            _ => {}
        }
    }
    // Callers computed `shape` by broadcasting both and checked its size, so this view
    // cannot be refused.
    let (a, b) = (
        a.broadcast_to(shape).expect("operands broadcast to shape"),
        b.broadcast_to(shape).expect("operands broadcast to shape"),
    );
    let mut out = crate::alloc::<U>("ElementWise", shape)?;
    for_each_offset(
        shape,
        [a.strides(), b.strides()],
        [a.offset(), b.offset()],
        |[i, j]| out.push(f(da[i], db[j])),
    );
    Ok(out)
}

fn half_via_f32(a: &Array, dtype: DType, f: impl Fn(&Array) -> Result<Array>) -> Result<Array> {
    let r = f(&cast(a, DType::F32)?)?;
    cast(&r, dtype)
}

macro_rules! ops_enum {
    ($(#[$m:meta])* $name:ident { $($v:ident => $tf:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($v),* }
        impl $name {
            /// TensorFlow's op name, used in error messages.
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $tf),* }
            }
        }
    };
}

ops_enum!(
    /// Unary element-wise ops. Neg, Abs, Sign, Square and Relu also accept integers.
    UnaryOp {
        Neg => "Neg", Abs => "Abs", Sign => "Sign", Square => "Square",
        Exp => "Exp", Expm1 => "Expm1", Log => "Log", Log1p => "Log1p",
        Sqrt => "Sqrt", Rsqrt => "Rsqrt", Reciprocal => "Reciprocal",
        Sin => "Sin", Cos => "Cos", Tan => "Tan", Asin => "Asin", Acos => "Acos",
        Atan => "Atan", Sinh => "Sinh", Cosh => "Cosh", Tanh => "Tanh",
        Asinh => "Asinh", Acosh => "Acosh", Atanh => "Atanh",
        Sigmoid => "Sigmoid", Relu => "Relu", Softplus => "Softplus", Erf => "Erf",
        Floor => "Floor", Ceil => "Ceil", Round => "Round",
        Lgamma => "Lgamma", Digamma => "Digamma", Erfc => "Erfc", Erfinv => "Erfinv",
        Erfcinv => "Erfcinv", Ndtri => "Ndtri", BesselI0 => "BesselI0",
        BesselI0e => "BesselI0e", BesselI1 => "BesselI1", BesselI1e => "BesselI1e",
        BesselJ0 => "BesselJ0", BesselJ1 => "BesselJ1", BesselY0 => "BesselY0",
        BesselY1 => "BesselY1", BesselK0 => "BesselK0", BesselK0e => "BesselK0e",
        BesselK1 => "BesselK1", BesselK1e => "BesselK1e", Dawsn => "Dawsn",
        Expint => "Expint", FresnelCos => "FresnelCos", FresnelSin => "FresnelSin",
        Spence => "Spence",
    }
);

/// The f64 function of a special-function op (`kernels::special`), None for the others.
fn special_unary(op: UnaryOp) -> Option<fn(f64) -> f64> {
    use special::*;
    Some(match op {
        UnaryOp::Lgamma => lgamma,
        UnaryOp::Digamma => digamma,
        UnaryOp::Erfc => erfc,
        UnaryOp::Erfinv => erfinv,
        UnaryOp::Erfcinv => erfcinv,
        UnaryOp::Ndtri => ndtri,
        UnaryOp::BesselI0 => bessel_i0,
        UnaryOp::BesselI0e => bessel_i0e,
        UnaryOp::BesselI1 => bessel_i1,
        UnaryOp::BesselI1e => bessel_i1e,
        UnaryOp::BesselJ0 => bessel_j0,
        UnaryOp::BesselJ1 => bessel_j1,
        UnaryOp::BesselY0 => bessel_y0,
        UnaryOp::BesselY1 => bessel_y1,
        UnaryOp::BesselK0 => bessel_k0,
        UnaryOp::BesselK0e => bessel_k0e,
        UnaryOp::BesselK1 => bessel_k1,
        UnaryOp::BesselK1e => bessel_k1e,
        UnaryOp::Dawsn => dawsn,
        UnaryOp::Expint => expint,
        UnaryOp::FresnelCos => fresnel_cos,
        UnaryOp::FresnelSin => fresnel_sin,
        UnaryOp::Spence => spence,
        _ => return None,
    })
}

/// `f` (an f64 function) at a float element: f32 widens, computes in f64 and rounds once.
#[inline]
fn through_f64<T: FloatElem>(f: fn(f64) -> f64, x: T) -> T {
    T::from_f64(f(Element::to_f64(x)))
}

/// The same for a two-argument f64 function.
#[inline]
fn through_f64_2<T: FloatElem>(f: fn(f64, f64) -> f64, x: T, y: T) -> T {
    T::from_f64(f(Element::to_f64(x), Element::to_f64(y)))
}

fn unary_float<T: FloatElem>(op: UnaryOp, a: &Array, d: &[T]) -> Result<Vec<T>> {
    match op {
        UnaryOp::Neg => map(a, d, |x| -x),
        UnaryOp::Abs => map(a, d, |x| x.abs()),
        UnaryOp::Sign => map(a, d, |x| {
            if x > T::zero() {
                T::one()
            } else if x < T::zero() {
                -T::one()
            } else if x.is_nan() {
                x
            } else {
                T::zero() // both zeros give +0, as TensorFlow's sign does
            }
        }),
        UnaryOp::Square => map(a, d, |x| x * x),
        UnaryOp::Exp => map(
            a,
            d,
            #[inline(always)]
            |x| x.exp_kernel(),
        ),
        UnaryOp::Expm1 => map(a, d, |x| x.exp_m1()),
        UnaryOp::Log => map(a, d, |x| x.ln()),
        UnaryOp::Log1p => map(a, d, |x| x.ln_1p()),
        UnaryOp::Sqrt => map(a, d, |x| x.sqrt()),
        UnaryOp::Rsqrt => map(a, d, |x| T::one() / x.sqrt()),
        UnaryOp::Reciprocal => map(a, d, |x| T::one() / x),
        UnaryOp::Sin => map(a, d, |x| x.sin()),
        UnaryOp::Cos => map(a, d, |x| x.cos()),
        UnaryOp::Tan => map(a, d, |x| x.tan()),
        UnaryOp::Asin => map(a, d, |x| x.asin()),
        UnaryOp::Acos => map(a, d, |x| x.acos()),
        UnaryOp::Atan => map(a, d, |x| x.atan()),
        UnaryOp::Sinh => map(a, d, |x| x.sinh()),
        UnaryOp::Cosh => map(a, d, |x| x.cosh()),
        UnaryOp::Asinh => map(a, d, |x| x.asinh()),
        UnaryOp::Acosh => map(a, d, |x| x.acosh()),
        UnaryOp::Atanh => map(a, d, |x| x.atanh()),
        UnaryOp::Tanh => map(
            a,
            d,
            #[inline(always)]
            |x| x.tanh_kernel(),
        ),
        // Written so that neither branch overflows: exp(-|x|) <= 1.
        // One division and selects only, inlined into the loop (the closure is too large for
        // the inliner's default budget), so that the loop vectorises.
        UnaryOp::Sigmoid => map(
            a,
            d,
            #[inline(always)]
            |x| {
                let e = (-x.abs()).exp_kernel();
                let numerator = if x >= T::zero() { T::one() } else { e };
                numerator / (T::one() + e)
            },
        ),
        // NaN passes through, as in TensorFlow.
        UnaryOp::Relu => map(a, d, |x| {
            if x > T::zero() || x.is_nan() {
                x
            } else {
                T::zero()
            }
        }),
        // softplus(x) = max(x, 0) + log1p(exp(-|x|)), exact for large |x|.
        UnaryOp::Softplus => map(a, d, |x| x.max(T::zero()) + (-x.abs()).exp().ln_1p()),
        UnaryOp::Erf => map(a, d, |x| x.erf()),
        UnaryOp::Floor => map(a, d, |x| x.floor()),
        UnaryOp::Ceil => map(a, d, |x| x.ceil()),
        UnaryOp::Round => map(a, d, |x| x.round_half_even()),
        op => match special_unary(op) {
            Some(f) => map(a, d, |x| through_f64(f, x)),
            None => Err(Error::unsupported(op.name(), a.dtype(), "an integer op")),
        },
    }
}

fn unary_int<T>(op: UnaryOp, a: &Array, d: &[T]) -> Result<Vec<T>>
where
    T: Element
        + num_traits::PrimInt
        + num_traits::Signed
        + num_traits::WrappingMul
        + num_traits::WrappingSub,
{
    match op {
        UnaryOp::Neg => map(a, d, |x| T::zero().wrapping_sub(&x)),
        UnaryOp::Abs => map(a, d, |x| {
            if x < T::zero() {
                T::zero().wrapping_sub(&x)
            } else {
                x
            }
        }),
        UnaryOp::Sign => map(a, d, |x| x.signum()),
        UnaryOp::Square => map(a, d, |x| x.wrapping_mul(&x)),
        UnaryOp::Relu => map(a, d, |x| x.max(T::zero())),
        _ => Err(Error::unsupported(op.name(), a.dtype(), "a floating dtype")),
    }
}

/// `op` applied to every element of `a`.
pub fn unary(op: UnaryOp, a: &Array) -> Result<Array> {
    if let Some(r) = crate::device::dispatch([a], |d, [a]| d.unary(op, a)) {
        return r;
    }
    if a.dtype().is_narrow() {
        // TensorFlow registers no Abs, Neg or Sign for unsigned integers.
        let signed_only = matches!(op, UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign);
        if a.dtype().is_unsigned() && signed_only {
            return Err(Error::unsupported(op.name(), a.dtype(), "a signed dtype"));
        }
        // relu of an unsigned value is itself (uint64's wide dtype would see its top half
        // as negative).
        if a.dtype().is_unsigned() && op == UnaryOp::Relu {
            return Ok(a.contiguous());
        }
        // Refused here, not by the wide kernel, so that the error names the user's dtype.
        if !matches!(op, UnaryOp::Square | UnaryOp::Relu) && !signed_only {
            return Err(Error::unsupported(op.name(), a.dtype(), "a floating dtype"));
        }
        return super::via_wide(a, |w| unary(op, w));
    }
    let buf = match a.buffer() {
        Buffer::F32(d) => Buffer::F32(unary_float(op, a, d)?.into()),
        Buffer::F64(d) => Buffer::F64(unary_float(op, a, d)?.into()),
        Buffer::I32(d) => Buffer::I32(unary_int(op, a, d)?.into()),
        Buffer::I64(d) => Buffer::I64(unary_int(op, a, d)?.into()),
        Buffer::F16(_) | Buffer::BF16(_) => return half_via_f32(a, a.dtype(), |x| unary(op, x)),
        _ => return Err(Error::unsupported(op.name(), a.dtype(), "a numeric dtype")),
    };
    Array::from_buffer(buf, a.shape())
}

ops_enum!(
    /// Broadcasting binary arithmetic. `Div` truncates for integers, `FloorDiv` and `Mod`
    /// floor (Python's and TensorFlow's `//` and `%`).
    BinaryOp {
        Add => "AddV2", Sub => "Sub", Mul => "Mul", Div => "RealDiv", FloorDiv => "FloorDiv",
        Mod => "FloorMod", Pow => "Pow", Maximum => "Maximum", Minimum => "Minimum",
        SquaredDifference => "SquaredDifference", Atan2 => "Atan2",
        Igamma => "Igamma", Igammac => "Igammac", IgammaGradA => "IgammaGradA",
        Polygamma => "Polygamma", Zeta => "Zeta",
    }
);

fn binary_float<T: FloatElem>(
    op: BinaryOp,
    a: &Array,
    da: &[T],
    b: &Array,
    db: &[T],
    s: &[usize],
) -> Result<Vec<T>> {
    match op {
        BinaryOp::Add => zip(a, da, b, db, s, |x, y| x + y),
        BinaryOp::Sub => zip(a, da, b, db, s, |x, y| x - y),
        BinaryOp::Mul => zip(a, da, b, db, s, |x, y| x * y),
        BinaryOp::Div => zip(a, da, b, db, s, |x, y| x / y),
        BinaryOp::FloorDiv => zip(a, da, b, db, s, |x, y| (x / y).floor()),
        BinaryOp::Mod => zip(a, da, b, db, s, |x, y| {
            let r = x % y;
            if r != T::zero() && ((r < T::zero()) != (y < T::zero())) {
                r + y
            } else {
                r
            }
        }),
        BinaryOp::Pow => zip(a, da, b, db, s, |x, y| x.powf(y)),
        // NaN propagates, as in TensorFlow.
        BinaryOp::Maximum => zip(
            a,
            da,
            b,
            db,
            s,
            |x, y| if x >= y || x.is_nan() { x } else { y },
        ),
        BinaryOp::Minimum => zip(
            a,
            da,
            b,
            db,
            s,
            |x, y| if x <= y || x.is_nan() { x } else { y },
        ),
        BinaryOp::SquaredDifference => zip(a, da, b, db, s, |x, y| (x - y) * (x - y)),
        BinaryOp::Atan2 => zip(a, da, b, db, s, |x, y| x.atan2(y)),
        BinaryOp::Igamma => zip(a, da, b, db, s, |x, y| through_f64_2(special::igamma, x, y)),
        BinaryOp::Igammac => zip(a, da, b, db, s, |x, y| {
            through_f64_2(special::igammac, x, y)
        }),
        BinaryOp::IgammaGradA => zip(a, da, b, db, s, |x, y| {
            through_f64_2(special::igamma_grad_a, x, y)
        }),
        BinaryOp::Polygamma => zip(a, da, b, db, s, |x, y| {
            through_f64_2(special::polygamma, x, y)
        }),
        BinaryOp::Zeta => zip(a, da, b, db, s, |x, y| through_f64_2(special::zeta, x, y)),
    }
}

fn binary_int<T>(
    op: BinaryOp,
    a: &Array,
    da: &[T],
    b: &Array,
    db: &[T],
    s: &[usize],
) -> Result<Vec<T>>
where
    T: Element
        + num_traits::PrimInt
        + num_traits::Signed
        + num_traits::WrappingAdd
        + num_traits::WrappingSub
        + num_traits::WrappingMul,
{
    let divides = matches!(op, BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Mod);
    if divides && map(b, db, |y| y == T::zero())?.contains(&true) {
        return Err(Error::invalid(op.name(), "integer division by zero"));
    }
    if op == BinaryOp::Pow && map(b, db, |y| y < T::zero())?.contains(&true) {
        return Err(Error::invalid(
            op.name(),
            "integers to negative integer powers are not allowed",
        ));
    }
    // MIN / -1 overflows (and panics in Rust even in release builds): dividing by -1 is a
    // wrapping negation, with remainder 0, as two's-complement hardware gives.
    let div = |x: T, y: T| {
        if y == T::zero() - T::one() {
            T::zero().wrapping_sub(&x)
        } else {
            x / y
        }
    };
    let rem = |x: T, y: T| {
        if y == T::zero() - T::one() {
            T::zero()
        } else {
            x % y
        }
    };
    let floor_div = |x: T, y: T| {
        let q = div(x, y);
        if (rem(x, y) != T::zero()) && ((x < T::zero()) != (y < T::zero())) {
            q - T::one()
        } else {
            q
        }
    };
    match op {
        BinaryOp::Add => zip(a, da, b, db, s, |x, y| x.wrapping_add(&y)),
        BinaryOp::Sub => zip(a, da, b, db, s, |x, y| x.wrapping_sub(&y)),
        BinaryOp::Mul => zip(a, da, b, db, s, |x, y| x.wrapping_mul(&y)),
        BinaryOp::Div => zip(a, da, b, db, s, div),
        BinaryOp::FloorDiv => zip(a, da, b, db, s, floor_div),
        BinaryOp::Mod => zip(a, da, b, db, s, |x, y| {
            x.wrapping_sub(&floor_div(x, y).wrapping_mul(&y))
        }),
        // Square-and-multiply, wrapping on overflow like TensorFlow's integer kernels.
        BinaryOp::Pow => zip(a, da, b, db, s, |x, y| {
            let (mut acc, mut base, mut e) = (T::one(), x, y.to_u64().unwrap_or(0));
            while e > 0 {
                if e & 1 == 1 {
                    acc = acc.wrapping_mul(&base);
                }
                base = base.wrapping_mul(&base);
                e >>= 1;
            }
            acc
        }),
        BinaryOp::Maximum => zip(a, da, b, db, s, |x, y| x.max(y)),
        BinaryOp::Minimum => zip(a, da, b, db, s, |x, y| x.min(y)),
        BinaryOp::SquaredDifference => zip(a, da, b, db, s, |x, y| {
            let d = x.wrapping_sub(&y);
            d.wrapping_mul(&d)
        }),
        BinaryOp::Atan2
        | BinaryOp::Igamma
        | BinaryOp::Igammac
        | BinaryOp::IgammaGradA
        | BinaryOp::Polygamma
        | BinaryOp::Zeta => Err(Error::unsupported(op.name(), a.dtype(), "a floating dtype")),
    }
}

/// `op(a, b)` with numpy broadcasting; both operands must have the same dtype.
pub fn binary(op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
    if let Some(r) = crate::device::dispatch([a, b], |d, [a, b]| d.binary(op, a, b)) {
        return r;
    }
    if a.dtype() != b.dtype() {
        return Err(Error::mismatch(op.name(), a.dtype(), b.dtype()));
    }
    let shape = broadcast_shapes(op.name(), a.shape(), b.shape())?;
    check_alloc(op.name(), a.dtype(), &shape)?;
    if a.dtype().is_narrow() {
        return binary_narrow(op, a, b, &shape);
    }
    if a.dtype().is_complex() && matches!(op, BinaryOp::Add | BinaryOp::Sub) {
        // Linear, so part by part (a variable's update lands here); the rest of complex
        // arithmetic is composed in the autodiff crate.
        use super::complex::{complex, complex_part, ComplexPart::*};
        let re = binary(op, &complex_part(a, Real)?, &complex_part(b, Real)?)?;
        let im = binary(op, &complex_part(a, Imag)?, &complex_part(b, Imag)?)?;
        return complex(&re, &im);
    }
    let buf = match (a.buffer(), b.buffer()) {
        (Buffer::F32(x), Buffer::F32(y)) => {
            Buffer::F32(binary_float(op, a, x, b, y, &shape)?.into())
        }
        (Buffer::F64(x), Buffer::F64(y)) => {
            Buffer::F64(binary_float(op, a, x, b, y, &shape)?.into())
        }
        (Buffer::I32(x), Buffer::I32(y)) => Buffer::I32(binary_int(op, a, x, b, y, &shape)?.into()),
        (Buffer::I64(x), Buffer::I64(y)) => Buffer::I64(binary_int(op, a, x, b, y, &shape)?.into()),
        (Buffer::F16(_), _) | (Buffer::BF16(_), _) => {
            let r = binary(op, &cast(a, DType::F32)?, &cast(b, DType::F32)?)?;
            return cast(&r, a.dtype());
        }
        _ => return Err(Error::unsupported(op.name(), a.dtype(), "a numeric dtype")),
    };
    Array::from_buffer(buf, &shape)
}

/// `binary` on a narrow integer dtype: in its wide dtype (exact, and wrapping agrees modulo
/// the narrow width), narrowed back with wrapping; uint64's order through
/// [`super::ordered_u64`], its division on `u64`.
fn binary_narrow(op: BinaryOp, a: &Array, b: &Array, shape: &[usize]) -> Result<Array> {
    let dtype = a.dtype();
    // TensorFlow registers no SquaredDifference for these, nor Pow for the unsigned ones.
    let refused = match op {
        BinaryOp::SquaredDifference => true,
        BinaryOp::Pow => dtype.is_unsigned(),
        _ => false,
    };
    if refused {
        return Err(Error::unsupported(
            op.name(),
            dtype,
            "int32, int64 or a floating dtype",
        ));
    }
    // The float-only ops, refused here so that the error names the user's dtype.
    let integral = matches!(
        op,
        BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::FloorDiv
            | BinaryOp::Mod
            | BinaryOp::Pow
            | BinaryOp::Maximum
            | BinaryOp::Minimum
    );
    if !integral {
        return Err(Error::unsupported(op.name(), dtype, "a floating dtype"));
    }
    if dtype == DType::U64 && matches!(op, BinaryOp::Maximum | BinaryOp::Minimum) {
        let (x, y) = (super::ordered_u64(a)?, super::ordered_u64(b)?);
        return super::from_ordered_u64(&binary(op, &x, &y)?);
    }
    if dtype == DType::U64 && matches!(op, BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::Mod) {
        // Unsigned division floors and truncates alike; one plain loop (rarely hot).
        let (x, y) = (
            a.broadcast_to(shape)?.to_vec::<u64>(),
            b.broadcast_to(shape)?,
        );
        let y = y.to_vec::<u64>();
        if y.contains(&0) {
            return Err(Error::invalid(op.name(), "integer division by zero"));
        }
        let rem = op == BinaryOp::Mod;
        let out = x
            .iter()
            .zip(&y)
            .map(|(p, q)| if rem { p % q } else { p / q });
        return Array::from_vec(out.collect::<Vec<u64>>(), shape);
    }
    let wide = dtype.wide();
    cast(&binary(op, &cast(a, wide)?, &cast(b, wide)?)?, dtype)
}

ops_enum!(
    /// Comparisons; the result is bool.
    CompareOp { Equal => "Equal", NotEqual => "NotEqual", Less => "Less", LessEqual => "LessEqual",
        Greater => "Greater", GreaterEqual => "GreaterEqual" }
);

fn compare_typed<T: Element + PartialOrd>(
    op: CompareOp,
    a: &Array,
    da: &[T],
    b: &Array,
    db: &[T],
    s: &[usize],
) -> Result<Vec<bool>> {
    match op {
        CompareOp::Equal => zip(a, da, b, db, s, |x, y| x == y),
        CompareOp::NotEqual => zip(a, da, b, db, s, |x, y| x != y),
        CompareOp::Less => zip(a, da, b, db, s, |x, y| x < y),
        CompareOp::LessEqual => zip(a, da, b, db, s, |x, y| x <= y),
        CompareOp::Greater => zip(a, da, b, db, s, |x, y| x > y),
        CompareOp::GreaterEqual => zip(a, da, b, db, s, |x, y| x >= y),
    }
}

/// `op(a, b)` element-wise with broadcasting; a bool array.
pub fn compare(op: CompareOp, a: &Array, b: &Array) -> Result<Array> {
    if a.dtype() != b.dtype() {
        return Err(Error::mismatch(op.name(), a.dtype(), b.dtype()));
    }
    if let Some(r) = crate::device::dispatch([a, b], |d, [a, b]| d.compare(op, a, b)) {
        return r;
    }
    let s = broadcast_shapes(op.name(), a.shape(), b.shape())?;
    check_alloc(op.name(), DType::Bool, &s)?;
    if a.dtype() == DType::U64 {
        return compare(op, &super::ordered_u64(a)?, &super::ordered_u64(b)?);
    }
    if a.dtype().is_narrow() {
        let wide = a.dtype().wide();
        return compare(op, &cast(a, wide)?, &cast(b, wide)?);
    }
    let out = match (a.buffer(), b.buffer()) {
        (Buffer::F16(x), Buffer::F16(y)) => compare_typed::<f16>(op, a, x, b, y, &s),
        (Buffer::BF16(x), Buffer::BF16(y)) => compare_typed::<bf16>(op, a, x, b, y, &s),
        (Buffer::F32(x), Buffer::F32(y)) => compare_typed(op, a, x, b, y, &s),
        (Buffer::F64(x), Buffer::F64(y)) => compare_typed(op, a, x, b, y, &s),
        (Buffer::I32(x), Buffer::I32(y)) => compare_typed(op, a, x, b, y, &s),
        (Buffer::I64(x), Buffer::I64(y)) => compare_typed(op, a, x, b, y, &s),
        (Buffer::Bool(x), Buffer::Bool(y)) => compare_typed(op, a, x, b, y, &s),
        _ => return Err(Error::mismatch(op.name(), a.dtype(), b.dtype())),
    };
    Array::from_vec(out?, &s)
}

ops_enum!(
    /// Logical ops on bool arrays.
    LogicalOp { And => "LogicalAnd", Or => "LogicalOr", Xor => "LogicalXor" }
);

pub fn logical(op: LogicalOp, a: &Array, b: &Array) -> Result<Array> {
    let (Buffer::Bool(x), Buffer::Bool(y)) = (a.buffer(), b.buffer()) else {
        return Err(Error::dtype(
            op.name(),
            format!(
                "expected bool operands, received {} and {}",
                a.dtype(),
                b.dtype()
            ),
        ));
    };
    let s = broadcast_shapes(op.name(), a.shape(), b.shape())?;
    check_alloc(op.name(), DType::Bool, &s)?;
    let out = match op {
        LogicalOp::And => zip(a, x, b, y, &s, |p, q| p && q),
        LogicalOp::Or => zip(a, x, b, y, &s, |p, q| p || q),
        LogicalOp::Xor => zip(a, x, b, y, &s, |p, q| p != q),
    };
    Array::from_vec(out?, &s)
}

pub fn logical_not(a: &Array) -> Result<Array> {
    let Buffer::Bool(x) = a.buffer() else {
        return Err(Error::unsupported("LogicalNot", a.dtype(), "bool"));
    };
    Array::from_vec(map(a, x, |p| !p)?, a.shape())
}

/// `where(cond, x, y)`: elements of `x` where `cond` is true, else of `y`, all broadcast.
/// A `select` operand in the common layouts: the output's shape and contiguous, or a scalar.
/// How an operand's elements lie in memory, seen in the output's shape, for the loops that
/// need no index arithmetic. Broadcast views count: a reduction's gradient arrives as its
/// upstream gradient broadcast back to the input's shape with zero strides, and the multiply
/// that follows it would otherwise take the strided path over every element.
#[derive(Clone, Copy)]
enum Operand<'a, T> {
    /// Contiguous, one element per output element.
    Full(&'a [T]),
    /// One element for every output element.
    Scalar(T),
    /// A contiguous block of the trailing axes, repeated over the leading ones.
    Block(&'a [T]),
}

impl<'a, T: Element> Operand<'a, T> {
    /// `a` (with its buffer `data`) as broadcast to `shape`, when it is one of the layouts
    /// above; `None` for anything else (transposed or strided views, column broadcasts).
    fn of(a: &'a Array, data: &'a [T], shape: &[usize]) -> Option<Operand<'a, T>> {
        if a.shape() == shape {
            if let Some(s) = a.contiguous_slice::<T>() {
                return Some(Operand::Full(s));
            }
        }
        if a.len() == 1 {
            return Some(Operand::Scalar(data[a.offset()]));
        }
        if a.is_empty() || a.rank() > shape.len() {
            return None;
        }
        // Axis by axis from the innermost, in the output's shape: first the contiguous
        // block, then only axes the operand repeats (size 1 in it, or a zero stride).
        let lead = shape.len() - a.rank();
        let axis = |i: usize| {
            if i < lead {
                (1, 0)
            } else {
                (a.shape()[i - lead], a.strides()[i - lead])
            }
        };
        let mut block = 1usize;
        let mut i = shape.len();
        while i > 0 {
            let (d, s) = axis(i - 1);
            let repeated = (d == 1 && shape[i - 1] != 1) || (d != 1 && s == 0);
            if repeated || (d != 1 && s != block as isize) {
                break;
            }
            block *= d;
            i -= 1;
        }
        let repeated = |j: usize| {
            let (d, s) = axis(j);
            d == 1 || s == 0 || shape[j] == 1
        };
        if !(0..i).all(repeated) {
            return None;
        }
        let start = a.offset();
        Some(if block == 1 {
            Operand::Scalar(data[start])
        } else if i == 0 {
            Operand::Full(&data[start..start + block])
        } else {
            Operand::Block(&data[start..start + block])
        })
    }

    fn at(&self, i: usize) -> T {
        match self {
            Operand::Full(v) => v[i],
            Operand::Scalar(v) => *v,
            Operand::Block(v) => v[i % v.len()],
        }
    }
}

/// The common cases of `select` without index arithmetic: a contiguous condition in the
/// output's shape, each branch contiguous too or a scalar (a gradient masked by a comparison).
fn select_contiguous<T: Element>(
    cond: &Array,
    x: &Array,
    xd: &[T],
    y: &Array,
    yd: &[T],
    shape: &[usize],
) -> Option<Vec<T>> {
    if cond.shape() != shape {
        return None;
    }
    let c = cond.contiguous_slice::<bool>()?;
    let (xo, yo) = (Operand::of(x, xd, shape)?, Operand::of(y, yd, shape)?);
    let pick = |i: usize| if c[i] { xo.at(i) } else { yo.at(i) };
    Some(if c.len() >= PARALLEL_THRESHOLD {
        (0..c.len()).into_par_iter().map(pick).collect()
    } else {
        (0..c.len()).map(pick).collect()
    })
}

pub fn select(cond: &Array, x: &Array, y: &Array) -> Result<Array> {
    const OP: &str = "SelectV2";
    // Checked by dtype, not through `buffer()`, which would download a device condition.
    if cond.dtype() != DType::Bool {
        return Err(Error::unsupported(OP, cond.dtype(), "a bool condition"));
    }
    if x.dtype() != y.dtype() {
        return Err(Error::mismatch(OP, x.dtype(), y.dtype()));
    }
    if let Some(r) = crate::device::dispatch([cond, x, y], |d, [c, x, y]| d.select(c, x, y)) {
        return r;
    }
    let Buffer::Bool(c) = cond.buffer() else {
        unreachable!("a bool condition, checked above");
    };
    let s = broadcast_shapes(
        OP,
        &broadcast_shapes(OP, cond.shape(), x.shape())?,
        y.shape(),
    )?;
    check_alloc(OP, x.dtype(), &s)?;
    let (cv, xv, yv) = (
        cond.broadcast_to(&s)?,
        x.broadcast_to(&s)?,
        y.broadcast_to(&s)?,
    );
    let buf = crate::with_buffer!(x.buffer(), xd => {
        let yd = Element::bits(y.buffer()).expect("dtypes checked equal");
        if let Some(out) = select_contiguous(cond, x, xd, y, yd, &s) {
            Element::into_buffer(out)
        } else {
        let mut out = Vec::with_capacity(crate::num_elements(&s));
        for_each_offset(
            &s,
            [cv.strides(), xv.strides(), yv.strides()],
            [cv.offset(), xv.offset(), yv.offset()],
            |[i, j, k]| out.push(if c[i] { xd[j] } else { yd[k] }),
        );
        Element::into_buffer(out)
        }
    });
    Array::from_buffer(buf, &s)
}

/// `g` where `y > 0`, else 0, in one pass: relu's backward (TensorFlow's `ReluGrad`), which
/// would otherwise take a comparison, a bool tensor and a select. `y` is relu's output (or its
/// input: both are positive at the same places); NaN counts as not positive.
pub fn relu_grad(g: &Array, y: &Array) -> Result<Array> {
    const OP: &str = "ReluGrad";
    if g.dtype() != y.dtype() {
        return Err(Error::mismatch(OP, g.dtype(), y.dtype()));
    }
    if let Some(r) = crate::device::dispatch([g, y], |d, [g, y]| d.relu_grad(g, y)) {
        return r;
    }
    let shape = broadcast_shapes(OP, g.shape(), y.shape())?;
    check_alloc(OP, g.dtype(), &shape)?;
    fn typed<T: FloatElem>(g: &Array, y: &Array, shape: &[usize]) -> Result<Vec<T>> {
        let (gd, yd) = (
            T::slice(g.buffer()).expect("dtype checked"),
            T::slice(y.buffer()).expect("dtype checked"),
        );
        // No captured zero: see `unary_float` on captures and the vectoriser.
        zip(g, gd, y, yd, shape, |gv, yv| {
            if yv > T::zero() {
                gv
            } else {
                T::zero()
            }
        })
    }
    let buffer = match g.buffer() {
        Buffer::F32(_) => Buffer::F32(typed::<f32>(g, y, &shape)?.into()),
        Buffer::F64(_) => Buffer::F64(typed::<f64>(g, y, &shape)?.into()),
        Buffer::F16(_) | Buffer::BF16(_) => {
            return half_via_f32(g, g.dtype(), |g32| relu_grad(g32, &cast(y, DType::F32)?));
        }
        _ => return Err(Error::unsupported(OP, g.dtype(), "a floating-point dtype")),
    };
    Array::from_buffer(buffer, &shape)
}

fn update_typed<T: Element + Copy>(dst: &mut [T], delta: &Array, f: impl Fn(T, T) -> T) {
    let data = T::slice(delta.buffer()).expect("dtypes checked equal");
    if let Some(d) = delta.contiguous_slice::<T>() {
        dst.iter_mut().zip(d).for_each(|(x, &y)| *x = f(*x, y));
        return;
    }
    let mut k = 0;
    for_each_offset(delta.shape(), [delta.strides()], [delta.offset()], |[i]| {
        dst[k] = f(dst[k], data[i]);
        k += 1;
    });
}

/// `target = op(target, delta)` written into `target`'s own buffer when no other array shares
/// it (same shape and dtype required). Returns false, changing nothing, when it cannot.
pub fn update_in_place(target: &mut Array, delta: &Array, op: BinaryOp) -> Result<bool> {
    if target.shape() != delta.shape() || target.dtype() != delta.dtype() {
        return Ok(false);
    }
    let add = match op {
        BinaryOp::Add => true,
        BinaryOp::Sub => false,
        _ => return Ok(false),
    };
    let Some(buf) = target.buffer_mut() else {
        return Ok(false);
    };
    match buf {
        Buffer::F32(v) => update_typed(v, delta, |x, y| if add { x + y } else { x - y }),
        Buffer::F64(v) => update_typed(v, delta, |x, y| if add { x + y } else { x - y }),
        Buffer::I32(v) => update_typed(v, delta, |x, y| {
            if add {
                x.wrapping_add(y)
            } else {
                x.wrapping_sub(y)
            }
        }),
        Buffer::I64(v) => update_typed(v, delta, |x, y| {
            if add {
                x.wrapping_add(y)
            } else {
                x.wrapping_sub(y)
            }
        }),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The regularized incomplete beta function I_x(a, b) element-wise (TensorFlow's `Betainc`),
/// the three operands broadcast together; they must share a floating dtype.
pub fn betainc(a: &Array, b: &Array, x: &Array) -> Result<Array> {
    const OP: &str = "Betainc";
    for other in [b, x] {
        if other.dtype() != a.dtype() {
            return Err(Error::mismatch(OP, a.dtype(), other.dtype()));
        }
    }
    let shape = broadcast_shapes(OP, &broadcast_shapes(OP, a.shape(), b.shape())?, x.shape())?;
    check_alloc(OP, a.dtype(), &shape)?;
    fn run<T: FloatElem>(arrays: [&Array; 3], data: [&[T]; 3], shape: &[usize]) -> Result<Vec<T>> {
        let views = arrays.map(|v| v.broadcast_to(shape));
        let [va, vb, vx] = views;
        let (va, vb, vx) = (va?, vb?, vx?);
        let mut out = crate::alloc::<T>("Betainc", shape)?;
        let [da, db, dx] = data;
        for_each_offset(
            shape,
            [va.strides(), vb.strides(), vx.strides()],
            [va.offset(), vb.offset(), vx.offset()],
            |[i, j, k]| {
                let f = |v: T| Element::to_f64(v);
                let y = special::betainc(f(da[i]), f(db[j]), f(dx[k]));
                out.push(T::from_f64(y));
            },
        );
        Ok(out)
    }
    let buf = match (a.buffer(), b.buffer(), x.buffer()) {
        (Buffer::F32(p), Buffer::F32(q), Buffer::F32(r)) => {
            Buffer::F32(run([a, b, x], [p, q, r], &shape)?.into())
        }
        (Buffer::F64(p), Buffer::F64(q), Buffer::F64(r)) => {
            Buffer::F64(run([a, b, x], [p, q, r], &shape)?.into())
        }
        (Buffer::F16(_), ..) | (Buffer::BF16(_), ..) => {
            let [p, q, r] = [a, b, x].map(|v| cast(v, DType::F32));
            return cast(&betainc(&p?, &q?, &r?)?, a.dtype());
        }
        _ => return Err(Error::unsupported(OP, a.dtype(), "a floating dtype")),
    };
    Array::from_buffer(buf, &shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every layout `Operand::of` sorts (contiguous, scalar, repeated block, broadcast views
    /// with zero strides) and those it refuses (transposes, column broadcasts, stepped and
    /// offset slices) give what an element-by-element loop over copied operands gives.
    #[test]
    fn binary_and_unary_agree_across_operand_layouts() {
        let data = |n: usize, seed: f32| -> Array {
            let v: Vec<f32> = (0..n).map(|i| seed + i as f32 * 0.25).collect();
            Array::from_vec(v, &[n]).unwrap()
        };
        let base = data(4 * 6 * 5, 1.0).reshape(&[4, 6, 5]).unwrap();
        let row = data(5, -2.0);
        let views: Vec<(&str, Array)> = vec![
            ("full", base.clone()),
            ("scalar", Array::scalar_of(DType::F32, 3.0)),
            ("row", row.clone()),
            ("row_view", row.broadcast_to(&[4, 6, 5]).unwrap()),
            (
                "plane_view",
                data(30, 0.5)
                    .reshape(&[1, 6, 5])
                    .unwrap()
                    .broadcast_to(&[4, 6, 5])
                    .unwrap(),
            ),
            (
                "scalar_view",
                Array::scalar_of(DType::F32, -1.5)
                    .broadcast_to(&[4, 6, 5])
                    .unwrap(),
            ),
            ("column", data(24, 2.0).reshape(&[4, 6, 1]).unwrap()),
            (
                "transposed",
                data(120, 0.0)
                    .reshape(&[5, 6, 4])
                    .unwrap()
                    .transpose(&[2, 1, 0])
                    .unwrap(),
            ),
            (
                "offset_slice",
                data(5 * 6 * 5, 7.0)
                    .reshape(&[5, 6, 5])
                    .unwrap()
                    .slice_view(&[1, 0, 0], &[4, 6, 5], &[1, 1, 1]),
            ),
            (
                "stepped",
                data(4 * 6 * 10, 3.0)
                    .reshape(&[4, 6, 10])
                    .unwrap()
                    .slice_view(&[0, 0, 1], &[4, 6, 5], &[1, 1, 2]),
            ),
        ];
        let spread = |x: &Array, shape: &[usize]| x.broadcast_to(shape).unwrap().contiguous();
        for (na, a) in &views {
            let got = unary(UnaryOp::Square, a).unwrap().to_vec::<f32>();
            let want: Vec<f32> = a
                .contiguous()
                .to_vec::<f32>()
                .iter()
                .map(|x| x * x)
                .collect();
            assert_eq!(got, want, "square of {na}");
            for (nb, b) in &views {
                let shape = broadcast_shapes("Sub", a.shape(), b.shape()).unwrap();
                let got = binary(BinaryOp::Sub, a, b).unwrap();
                let (ea, eb) = (
                    spread(a, &shape).to_vec::<f32>(),
                    spread(b, &shape).to_vec::<f32>(),
                );
                let want: Vec<f32> = ea.iter().zip(&eb).map(|(p, q)| p - q).collect();
                assert_eq!(got.shape(), &shape[..], "{na} - {nb}");
                assert_eq!(got.to_vec::<f32>(), want, "{na} - {nb}");
            }
        }
    }

    #[test]
    fn narrow_integers_wrap_and_uint64_keeps_its_order() {
        let a = Array::from_vec(vec![250u8, 3, 0], &[3]).unwrap();
        let b = Array::from_vec(vec![10u8, 5, 1], &[3]).unwrap();
        let sum = binary(BinaryOp::Add, &a, &b).unwrap();
        assert_eq!(
            (sum.dtype(), sum.to_vec::<u8>()),
            (DType::U8, vec![4, 8, 1])
        );
        let diff = binary(BinaryOp::Sub, &a, &b).unwrap();
        assert_eq!(diff.to_vec::<u8>(), vec![240, 254, 255]);
        let low = Array::from_vec(vec![-128i8], &[1]).unwrap();
        let minus_one = Array::from_vec(vec![-1i8], &[1]).unwrap();
        let q = binary(BinaryOp::FloorDiv, &low, &minus_one).unwrap();
        assert_eq!(q.to_vec::<i8>(), vec![-128]);
        assert_eq!(
            unary(UnaryOp::Abs, &low).unwrap().to_vec::<i8>(),
            vec![-128]
        );
        assert!(unary(UnaryOp::Neg, &a).is_err() && unary(UnaryOp::Exp, &low).is_err());
        let big = Array::from_vec(vec![u64::MAX, 5], &[2]).unwrap();
        let small = Array::from_vec(vec![7u64, 9], &[2]).unwrap();
        let max = binary(BinaryOp::Maximum, &big, &small).unwrap();
        assert_eq!(max.to_vec::<u64>(), vec![u64::MAX, 9]);
        let q = binary(BinaryOp::FloorDiv, &big, &small).unwrap();
        assert_eq!(q.to_vec::<u64>(), vec![u64::MAX / 7, 0]);
        let less = compare(CompareOp::Less, &small, &big).unwrap();
        assert_eq!(less.to_vec::<bool>(), vec![true, false]);
        let zero = Array::from_vec(vec![0u64, 1], &[2]).unwrap();
        assert!(binary(BinaryOp::Mod, &big, &zero).is_err());
    }

    #[test]
    fn broadcasting_add_matches_by_hand() {
        let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3, 1]).unwrap();
        let b = Array::from_vec(vec![10.0f32, 20.0], &[2]).unwrap();
        let c = binary(BinaryOp::Add, &a, &b).unwrap();
        assert_eq!(c.shape(), &[3, 2]);
        assert_eq!(c.to_vec::<f32>(), vec![11.0, 21.0, 12.0, 22.0, 13.0, 23.0]);
    }

    #[test]
    fn strided_views_compute_like_contiguous() {
        let a = Array::from_vec((0..6).map(|x| x as f64).collect(), &[2, 3]).unwrap();
        let t = a.transpose(&[1, 0]).unwrap();
        let e = unary(UnaryOp::Square, &t).unwrap();
        assert_eq!(e.to_vec::<f64>(), vec![0.0, 9.0, 1.0, 16.0, 4.0, 25.0]);
    }

    #[test]
    fn integer_floor_division_and_mod_follow_python() {
        let a = Array::from_vec(vec![7i32, -7, 7, -7], &[4]).unwrap();
        let b = Array::from_vec(vec![2i32, 2, -2, -2], &[4]).unwrap();
        assert_eq!(
            binary(BinaryOp::FloorDiv, &a, &b).unwrap().to_vec::<i32>(),
            vec![3, -4, -4, 3]
        );
        assert_eq!(
            binary(BinaryOp::Mod, &a, &b).unwrap().to_vec::<i32>(),
            vec![1, 1, -1, -1]
        );
        let zero = Array::scalar(0i32);
        assert!(binary(BinaryOp::Div, &a, &zero).is_err());
    }

    #[test]
    fn mismatched_dtypes_are_an_error() {
        let a = Array::scalar(1.0f32);
        let b = Array::scalar(1.0f64);
        assert!(matches!(
            binary(BinaryOp::Add, &a, &b),
            Err(Error::DType { .. })
        ));
    }
}
