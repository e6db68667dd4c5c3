//! Python values ↔ tensors, with TensorFlow's rules: Python floats become float32 and ints
//! int32 (int64 if they do not fit), bools bool; numpy arrays and scalars keep their dtype
//! (int8 ... uint64 and complex64/128 included; Python complex numbers become complex128, as
//! in TensorFlow); nested lists go through
//! numpy, and lists holding tensors are stacked (so gradients flow through them).

use ferrotape_autodiff::core::{kernels, Array, Buffer, Complex};
use ferrotape_autodiff::{ops, trace, DType, Tensor};
use half::{bf16, f16};
use numpy::{
    PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
    ToPyArray,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyList, PyTuple};

use crate::errors::{type_error, value_error, Raise};
use crate::tensor::PyTensor;
use crate::variable::PyVariable;

fn typed_vec<T: numpy::Element + Copy>(a: &Bound<'_, PyArrayDyn<T>>) -> Vec<T> {
    // SAFETY: the GIL is held for the whole copy, so no Python code can write the array
    // meanwhile; skipping numpy's borrow tracking saves microseconds on every small array.
    unsafe {
        match a.is_c_contiguous() {
            true => a.as_slice().map(|s| s.to_vec()).unwrap_or_default(),
            false => a.as_array().iter().copied().collect(),
        }
    }
}

fn widen<T: numpy::Element + Copy, U>(a: &Bound<'_, PyArrayDyn<T>>, f: impl Fn(T) -> U) -> Vec<U> {
    typed_vec(a).into_iter().map(f).collect()
}

/// A numpy array's elements as a buffer of the matching ferrotape dtype.
fn numpy_buffer(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Buffer> {
    macro_rules! try_as {
        ($t:ty, $make:expr) => {
            if let Ok(a) = arr.cast::<PyArrayDyn<$t>>() {
                let make: fn(&Bound<'_, PyArrayDyn<$t>>) -> Buffer = $make;
                return Ok(make(a));
            }
        };
    }
    try_as!(f32, |a| Buffer::F32(typed_vec(a).into()));
    try_as!(f64, |a| Buffer::F64(typed_vec(a).into()));
    try_as!(i64, |a| Buffer::I64(typed_vec(a).into()));
    try_as!(i32, |a| Buffer::I32(typed_vec(a).into()));
    try_as!(bool, |a| Buffer::Bool(typed_vec(a).into()));
    try_as!(f16, |a| Buffer::F16(typed_vec(a).into()));
    try_as!(u8, |a| Buffer::U8(typed_vec(a).into()));
    try_as!(u16, |a| Buffer::U16(typed_vec(a).into()));
    let kind: String = arr.dtype().getattr("name")?.extract()?;
    if let Some(d) = DType::from_name(&kind).filter(|d| d.twin() != *d) {
        // int8, int16, uint32, uint64: read as their twin's numpy type (the same bits, see
        // `DType::twin`), so no conversion code is compiled for them.
        let bits = arr.call_method1("view", (d.twin().name(),))?;
        return Ok(numpy_buffer(bits.cast::<PyUntypedArray>()?)?.retag(d));
    }
    if kind == "complex128" {
        // The one 16-byte dtype has no twin: read as float64 pairs (numpy's layout and ours).
        let flat = arr
            .py()
            .import("numpy")?
            .call_method1("ascontiguousarray", (arr,))?;
        let pairs = flat
            .call_method1("reshape", (-1,))?
            .call_method1("view", ("float64",))?;
        let values = typed_vec(pairs.cast::<PyArrayDyn<f64>>()?);
        let v: Vec<Complex<f64>> = values
            .chunks_exact(2)
            .map(|p| Complex { re: p[0], im: p[1] })
            .collect();
        return Ok(Buffer::C128(v.into()));
    }
    if kind == "bfloat16" {
        // ml_dtypes' bfloat16 (what TensorFlow hands out): the same 16 bits as ours.
        let bits = arr.call_method1("view", ("uint16",))?;
        return Ok(Buffer::BF16(
            widen(bits.cast::<PyArrayDyn<u16>>()?, bf16::from_bits).into(),
        ));
    }
    Err(type_error(format!(
        "Attempt to convert a numpy array of dtype {kind} to a Tensor: unsupported dtype"
    )))
}

fn from_numpy(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Array> {
    let dtype = arr.dtype();
    if !arr.is_aligned() || dtype.is_native_byteorder() == Some(false) {
        // Elements that are misaligned or stored in the other byte order are not valid Rust
        // values in place: numpy copies them into an aligned array in native order first.
        // (`astype` always copies into a fresh, aligned array; `ascontiguousarray` would hand
        // back a contiguous but misaligned array unchanged.)
        let native = dtype.call_method1("newbyteorder", ("=",))?;
        let copy = arr.call_method1("astype", (native,))?;
        let copy = copy.cast::<PyUntypedArray>()?;
        return Array::from_buffer(numpy_buffer(copy)?, copy.shape()).raise();
    }
    Array::from_buffer(numpy_buffer(arr)?, arr.shape()).raise()
}

fn cast_to(a: Array, dtype: Option<DType>) -> PyResult<Array> {
    match dtype {
        Some(d) if d != a.dtype() => kernels::cast(&a, d).raise(),
        _ => Ok(a),
    }
}

/// The tensor behind a Tensor or Variable argument (a variable read is recorded), if it is one.
pub fn as_tensor(obj: &Bound<'_, PyAny>) -> Option<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Some(t.get().tensor.clone());
    }
    obj.cast::<PyVariable>().ok().map(|v| {
        crate::variable::remember_owner(v);
        v.get().var.read()
    })
}

fn scalar(dtype: DType, value: f64) -> Array {
    Array::scalar_of(dtype, value)
}

/// The deepest nest of lists and tuples a value may have (numpy's limit on dimensions): deeper
/// ones are refused before anything recurses over them, so a hostile nest cannot exhaust the
/// native stack (of the main thread or of a thread started with a small stack).
const MAX_NESTING: usize = 64;

fn too_deep() -> PyErr {
    value_error(format!(
        "Cannot convert a value nested more than {MAX_NESTING} levels deep to a Tensor \
         (a tensor has at most {MAX_NESTING} dimensions)"
    ))
}

fn is_sequence(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()
}

/// Whether a nest of lists and tuples holds a tensor or variable, scanned with an explicit
/// stack; fails on a nest deeper than `MAX_NESTING - depth` levels.
fn contains_tensor(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    let mut stack = vec![(obj.clone(), depth)];
    while let Some((item, level)) = stack.pop() {
        if item.is_instance_of::<PyTensor>() || item.is_instance_of::<PyVariable>() {
            return Ok(true);
        }
        if is_sequence(&item) {
            if level >= MAX_NESTING {
                return Err(too_deep());
            }
            for child in item.try_iter()? {
                stack.push((child?, level + 1));
            }
        }
    }
    Ok(false)
}

/// Converts any tensor-like Python value, optionally to `dtype` (TensorFlow's
/// `convert_to_tensor(value, dtype)`).
pub fn to_tensor(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Tensor> {
    if let Some(t) = as_tensor(obj) {
        return match dtype {
            Some(d) if d != t.dtype() => Err(value_error(format!(
                "Tensor conversion requested dtype {} for Tensor with dtype {}",
                d.name(),
                t.dtype().name()
            ))),
            _ => Ok(t),
        };
    }
    Ok(host_constant(to_array(obj, dtype, 0)?))
}

/// A tensor made from host values: a constant of the trace being recorded, if any, on the
/// device of the `tf.device` scope (where that device cannot take it, on the host: soft
/// placement).
pub fn host_constant(a: Array) -> Tensor {
    let a = match ferrotape_core::device::placement() {
        Some(device) => a.to_device(device).unwrap_or(a),
        None => a,
    };
    let t = Tensor::new(a);
    trace::constant(&t);
    t
}

/// Converts a value already known not to be a tensor or variable to `dtype`.
pub fn value_to_tensor(obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Tensor> {
    Ok(host_constant(to_array(obj, Some(dtype), 0)?))
}

/// `to_tensor` for an element `depth` levels inside a nest being converted.
fn nested_to_tensor(
    obj: &Bound<'_, PyAny>,
    dtype: Option<DType>,
    depth: usize,
) -> PyResult<Tensor> {
    match as_tensor(obj) {
        Some(_) => to_tensor(obj, dtype),
        None => Ok(host_constant(to_array(obj, dtype, depth)?)),
    }
}

/// A Python int as TensorFlow converts one: int32 when it fits, else int64. Asked for an
/// integer dtype, it is read as int64 and wraps to the narrower type's bits (TensorFlow gives
/// `tf.constant([1, 2]) + 2**40 == [1, 2]`); never through a float, which would round int64
/// values past 2**53. Asked for a float or complex dtype, it rounds to the nearest value
/// (`inf` past the type's range). Past int64 only uint64 and the floats hold it.
fn python_int(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Array> {
    let out_of_range = || value_error("Can't convert Python int to a Tensor: out of int64 range");
    if let Some(d) = dtype.filter(|d| d.is_float() || d.is_complex()) {
        // Python's own int -> float rounds correctly; past float64 it is an OverflowError.
        let v: f64 = obj.extract().map_err(|_| out_of_range())?;
        return Ok(scalar(d, v));
    }
    let Ok(v) = obj.extract::<i64>() else {
        return match (dtype, obj.extract::<u64>()) {
            (Some(DType::U64), Ok(v)) => Ok(Array::scalar(v)),
            _ => Err(out_of_range()),
        };
    };
    match dtype {
        Some(DType::Bool) => Err(type_error(format!(
            "Cannot convert {v} to EagerTensor of dtype bool"
        ))),
        Some(d) => cast_to(Array::scalar(v), Some(d)),
        None if i32::try_from(v).is_ok() => Ok(Array::scalar(v as i32)),
        None => Ok(Array::scalar(v)),
    }
}

/// TensorFlow's rule for a Python sequence converted to `dtype`: its elements must fit the kind
/// of `dtype` without losing what they are, so floats are refused for an integer or bool dtype,
/// complex numbers for a real one and integers for bool (`tf.constant([1.0], tf.int32)` is a
/// TypeError), while bools go anywhere. A numpy array is cast as numpy casts, as in TF.
fn refuse_narrowing(
    obj: &Bound<'_, PyAny>,
    arr: &Bound<'_, PyUntypedArray>,
    d: DType,
) -> PyResult<()> {
    let kind: String = arr.dtype().getattr("kind")?.extract()?;
    let refused = match kind.as_str() {
        // numpy also infers float64 for ints past int64 (`[5, 2**63]`, fine for uint64): only
        // a float element refuses.
        "f" if !(d.is_float() || d.is_complex()) => holds_float(obj)?,
        "c" => !d.is_complex(),
        "i" | "u" => d == DType::Bool,
        _ => false,
    };
    if refused {
        return Err(type_error(format!(
            "Cannot convert {} to EagerTensor of dtype {}",
            obj.repr()?,
            d.name()
        )));
    }
    Ok(())
}

/// Whether a Python sequence holds a float (Python's or numpy's) at any depth.
fn holds_float(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let np = obj.py().import("numpy")?;
    let floating = np.getattr("floating")?;
    let elements = np
        .call_method1("asarray", (obj, "object"))?
        .call_method0("ravel")?;
    for element in elements.try_iter()? {
        let element = element?;
        if element.is_instance_of::<PyFloat>() || element.is_instance(&floating)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Converts a non-tensor Python value, found `depth` levels inside a nest, to an array.
fn to_array(obj: &Bound<'_, PyAny>, dtype: Option<DType>, depth: usize) -> PyResult<Array> {
    // Exact types: numpy's float64 subclasses float but keeps its own dtype (handled below).
    if obj.is_exact_instance_of::<PyBool>() {
        let b: bool = obj.extract()?;
        return cast_to(Array::scalar(b), dtype);
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return python_int(obj, dtype);
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        return match dtype {
            Some(d) if !d.is_float() && !d.is_complex() => Err(type_error(format!(
                "Cannot convert {} to EagerTensor of dtype {}",
                obj.repr()?,
                d.name()
            ))),
            Some(d) => Ok(scalar(d, v)),
            None => Ok(Array::scalar(v as f32)),
        };
    }
    if let Ok(arr) = obj.cast::<PyUntypedArray>() {
        return cast_to(from_numpy(arr)?, dtype);
    }
    let python_complex = obj.is_exact_instance_of::<PyComplex>();
    if python_complex {
        // A Python complex is complex128 (through numpy below), and only a complex dtype
        // holds it, as TensorFlow's constant says.
        if let Some(d) = dtype.filter(|d| !d.is_complex()) {
            return Err(type_error(format!(
                "Cannot convert {} to EagerTensor of dtype {}",
                obj.repr()?,
                d.name()
            )));
        }
    }
    let py = obj.py();
    let is_sequence = is_sequence(obj);
    if is_sequence && contains_tensor(obj, depth)? {
        // Pack element by element so a gradient can flow into the tensors inside; the scan
        // above bounds this recursion by MAX_NESTING.
        let parts = obj
            .try_iter()?
            .map(|x| nested_to_tensor(&x?, dtype, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        let first = parts[0].dtype();
        let parts = parts
            .iter()
            .map(|p| ops::cast(p, first))
            .collect::<Result<Vec<_>, _>>()
            .raise()?;
        return Ok(ops::stack(&parts, 0).raise()?.value().clone());
    }
    let np = py.import("numpy")?;
    let numpy_scalar = obj.is_instance(&np.getattr("generic")?)?;
    if !(is_sequence || numpy_scalar || python_complex || obj.hasattr("__array__")?) {
        return Err(type_error(format!(
            "Attempt to convert a value ({}) with an unsupported type ({}) to a Tensor.",
            obj.repr()?,
            obj.get_type().name()?
        )));
    }
    let arr = np.call_method1("asarray", (obj,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if let Some(d) = dtype.filter(|_| is_sequence) {
        refuse_narrowing(obj, arr, d)?;
    }
    let mut a = from_numpy(arr)?;
    if is_sequence && dtype.is_none() {
        // Python numbers in lists follow the scalar rules: float32, and int32 when it fits.
        a = match a.dtype() {
            DType::F64 => kernels::cast(&a, DType::F32).raise()?,
            DType::I64 if a.to_vec::<i64>().iter().all(|&v| i32::try_from(v).is_ok()) => {
                kernels::cast(&a, DType::I32).raise()?
            }
            _ => a,
        };
    }
    cast_to(a, dtype)
}

/// The tensor's values as a new numpy array (0-d arrays for scalars).
pub fn to_numpy<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    fn make<'py, T: numpy::Element + ferrotape_autodiff::core::Element>(
        py: Python<'py>,
        a: &Array,
    ) -> PyResult<Bound<'py, PyAny>> {
        let flat = match a.contiguous_slice::<T>() {
            Some(s) => s.to_pyarray(py),
            None => a.to_vec::<T>().to_pyarray(py),
        };
        Ok(flat.reshape(a.shape().to_vec())?.into_any())
    }
    match a.dtype() {
        DType::F16 => make::<f16>(py, a),
        DType::BF16 => bfloat16_array(py, a),
        DType::F32 => make::<f32>(py, a),
        DType::F64 => make::<f64>(py, a),
        DType::I32 => make::<i32>(py, a),
        DType::I64 => make::<i64>(py, a),
        DType::Bool => make::<bool>(py, a),
        DType::U8 => make::<u8>(py, a),
        DType::U16 => make::<u16>(py, a),
        DType::C128 => {
            let pairs: Vec<f64> = a
                .to_vec::<Complex<f64>>()
                .into_iter()
                .flat_map(|c| [c.re, c.im])
                .collect();
            let flat = pairs.to_pyarray(py).call_method1("view", ("complex128",))?;
            flat.call_method1("reshape", (a.shape().to_vec(),))
        }
        // complex64 (through int64, its twin), int8, int16, uint32, uint64: their twin's array (the same bits) viewed as their own.
        d => {
            let buf = a.contiguous().into_buffer().retag(d.twin());
            let bits = Array::from_buffer(buf, a.shape()).raise()?;
            to_numpy(py, &bits)?.call_method1("view", (d.name(),))
        }
    }
}

/// bfloat16 values as ml_dtypes' `bfloat16` array, as TensorFlow returns them; numpy has no
/// bfloat16 of its own, so without ml_dtypes installed they come out as float32.
fn bfloat16_array<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    let Ok(ml_dtypes) = py.import("ml_dtypes") else {
        let wide = kernels::cast(a, DType::F32).raise()?;
        return to_numpy(py, &wide);
    };
    let bits: Vec<u16> = a.to_vec::<bf16>().into_iter().map(bf16::to_bits).collect();
    let array = bits.to_pyarray(py).reshape(a.shape().to_vec())?;
    array.call_method1("view", (ml_dtypes.getattr("bfloat16")?,))
}

/// `.numpy()`: an ndarray, or a numpy scalar for rank 0 (as TensorFlow returns).
pub fn numpy_value<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    let arr = to_numpy(py, a)?;
    if a.rank() == 0 {
        return arr.get_item(PyTuple::empty(py));
    }
    Ok(arr)
}

/// The `TypeError` for an argument of the wrong kind: "expected WHAT, received TYPE VALUE"
/// (the value shortened; `None` named as such). PyO3 adds the argument's name as a note.
pub fn expected(what: &str, obj: Borrowed<'_, '_, PyAny>) -> PyErr {
    type_error(format!("expected {what}, received {}", shown(obj)))
}

/// A value as error messages show it: its type and its text, shortened ("int 3", "None").
fn shown(obj: Borrowed<'_, '_, PyAny>) -> String {
    if obj.is_none() {
        return "None".into();
    }
    let kind = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    let mut text: String = obj.to_string().chars().take(60).collect();
    if text.len() == 60 {
        text.push_str("...");
    }
    format!("{kind} {text}")
}

/// The tensors of a list argument of `op` (`tf.concat`'s `values`, `tf.add_n`'s `inputs`):
/// any iterable, a tensor included (its rows). Python values convert to the first item's
/// dtype where they can, so `[t, 1]` works; the op itself checks that the dtypes agree.
pub fn tensor_list(op: &str, values: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    let Ok(iter) = values.try_iter() else {
        let received = shown(values.as_borrowed());
        return Err(type_error(format!(
            "{op}: expected an iterable of tensors, received {received}"
        )));
    };
    let items: Vec<Bound<'_, PyAny>> = iter.collect::<PyResult<_>>()?;
    let first = items.first().map(|x| to_tensor(x, None)).transpose()?;
    let dtype = first.as_ref().map(|t| t.dtype());
    items
        .iter()
        .map(|x| to_tensor(x, dtype).or_else(|_| to_tensor(x, None)))
        .collect()
}

/// A string argument (`mode`, `padding`, ...): anything else is a `TypeError` saying so.
#[derive(Clone, Debug)]
pub struct Text(pub String);

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Text> {
        match obj.cast::<pyo3::types::PyString>() {
            Ok(s) => Ok(Text(s.to_cow()?.into_owned())),
            Err(_) => Err(expected("a string", obj)),
        }
    }
}

/// A real-number argument (`alpha`, `beta`, a fill value): Python and numpy numbers and
/// one-element tensors, through `__float__` as Python's `float()` takes them.
#[derive(Clone, Copy, Debug)]
pub struct Real(pub f64);

impl FromPyObject<'_, '_> for Real {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Real> {
        if obj.is_instance_of::<pyo3::types::PyString>() || !obj.hasattr("__float__")? {
            return Err(expected("a number", obj));
        }
        obj.extract::<f64>().map(Real)
    }
}

/// An integer argument (`axis`, `batch_dims`): Python and numpy integers and integer scalar
/// tensors, as [`int_of`] reads them.
#[derive(Clone, Copy, Debug)]
pub struct Int(pub i64);

impl FromPyObject<'_, '_> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Int> {
        int_of(&obj).map(Int)
    }
}

/// An argument that may be left out, for its default, but not given as `None` (pad's
/// `constant_values`: TensorFlow converts a `None` given and refuses it).
pub struct Given<'py>(pub Option<Bound<'py, PyAny>>);

impl<'py> FromPyObject<'_, 'py> for Given<'py> {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Given<'py>> {
        Ok(Given(Some(obj.to_owned())))
    }
}

/// A global or op seed as TensorFlow reads one: any Python int (negative, or past 64 bits),
/// reduced to `seed mod (2**31 - 1)` (TF's `random_seed._truncate_seed`), so that seeds equal
/// modulo 2**31 - 1 draw alike, as they do in TensorFlow.
#[derive(Clone, Copy, Debug)]
pub struct Seed(pub u64);

impl FromPyObject<'_, '_> for Seed {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Seed> {
        if obj.is_instance_of::<PyFloat>() || !obj.hasattr("__index__")? {
            return Err(expected("an int seed", obj));
        }
        // Python's `%` by a positive modulus is never negative, whatever the seed's size.
        let reduced = obj.call_method0("__index__")?.rem(2_147_483_647_i64)?;
        Ok(Seed(reduced.extract()?))
    }
}

/// A flag TensorFlow passes on to its kernel as an attribute (`transpose_a`, `adjoint`), where
/// it must be a real bool: `True`, `False` (or numpy's), never a truthy `1`.
#[derive(Clone, Copy, Debug)]
pub struct Bool(pub bool);

impl FromPyObject<'_, '_> for Bool {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Bool> {
        obj.extract::<bool>()
            .map(Bool)
            .map_err(|_| expected("a bool (True or False)", obj))
    }
}

/// A flag argument (`keepdims`, `transpose_a`, `persistent`, ...) read as TensorFlow reads
/// one: by its truth value, so `1`, `np.True_` and `None` work as they do there. An object
/// without a truth value (a tensor of several elements) raises its own error.
#[derive(Clone, Copy, Debug)]
pub struct Flag(pub bool);

impl FromPyObject<'_, '_> for Flag {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Flag> {
        obj.is_truthy().map(Flag)
    }
}

/// Integer-like Python value (int, numpy integer, integer scalar tensor) as i64.
pub fn int_of(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Some(t) = as_tensor(obj) {
        if t.rank() == 0 && t.dtype().is_int() {
            crate::function::note_value_read(obj.py(), &t, "an integer argument");
            return Ok(t.value().scalar_f64().unwrap_or(0.0) as i64);
        }
        return Err(type_error(format!(
            "expected an integer scalar, received a tensor of shape {:?} and dtype {}",
            t.shape(),
            t.dtype()
        )));
    }
    if !obj.hasattr("__index__")? {
        return Err(expected("an integer", obj.as_borrowed()));
    }
    obj.call_method0("__index__")?.extract()
}

/// A list of ints from an int, a sequence, a numpy array or an integer tensor.
pub fn ints_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    if let Some(t) = as_tensor(obj) {
        crate::function::note_value_read(obj.py(), &t, "an integer list argument");
        let v = kernels::cast(t.value(), DType::I64)
            .raise()?
            .to_vec::<i64>();
        return Ok(v);
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(vec![obj.extract()?]);
    }
    if let Ok(arr) = obj.cast::<PyUntypedArray>() {
        let a = kernels::cast(&from_numpy(arr)?, DType::I64).raise()?;
        return Ok(a.to_vec::<i64>());
    }
    obj.try_iter()?.map(|x| int_of(&x?)).collect()
}

/// Optional axes: `None`, an int, or a list of ints.
pub fn axes_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<i64>>> {
    match obj {
        Some(o) if !o.is_none() => Ok(Some(ints_of(o)?)),
        _ => Ok(None),
    }
}

/// A shape argument (list, tuple, TensorShape, tensor) as dims, `-1` allowed.
pub fn shape_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    ints_of(obj)
}

/// A shape argument of `op` without -1: a negative entry is the op's `InvalidArgumentError`.
pub fn dims_of(op: &'static str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    Ok(ops::dims(op, &shape_of(obj)?).raise()?.to_vec())
}

/// Two operands of a binary op: a tensor among them fixes the dtype the other converts to.
pub fn binary_operands(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<(Tensor, Tensor)> {
    match (as_tensor(a), as_tensor(b)) {
        (Some(x), Some(y)) => Ok((x, y)),
        (Some(x), None) => {
            let y = to_tensor(b, Some(x.dtype()))?;
            Ok((x, y))
        }
        (None, Some(y)) => Ok((to_tensor(a, Some(y.dtype()))?, y)),
        (None, None) => {
            let x = to_tensor(a, None)?;
            let y = to_tensor(b, Some(x.dtype()))?;
            Ok((x, y))
        }
    }
}
