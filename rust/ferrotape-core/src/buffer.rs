//! Storage: one typed, reference-counted CPU buffer per tensor value.
//!
//! Design choice (hard to undo): storage is an enum over element types holding a [`Storage`]
//! (a plain `Vec`, or another library's memory lent read-only by a DLPack import), shared
//! through `Arc` by every view of it. Views (reshape, transpose, slices, broadcasts) are
//! `Array` layouts over the same buffer. Kernels match on the enum once per call and then run
//! monomorphised loops, so dispatch cost is per op, never per element. This is host
//! storage; device memory is the other kind of element an `Array` can view (see
//! [`crate::device`]), and ops reach either only through `Array`, so they need no rewrite.
//!
//! The narrow integers are stored in their width's twin storage (see [`DType::twin`]):
//! `Buffer::I8` holds a `Storage<u8>`, `Buffer::U32` a `Storage<i32>`, and so on, so that
//! [`with_buffer!`] moves twins with one compiled loop per width (its or-patterns bind the same
//! type) and tags the result back. The element impls of `i8`, `i16`, `u32` and `u64` view that
//! storage as their own type (a free reinterpretation: same size, every bit pattern valid).
//!
//! Complex numbers are stored interleaved (real, imaginary) as [`Complex`] values, the layout
//! numpy and TensorFlow use. complex64 is 8 bytes, so it is int64's twin (`Buffer::C64` holds a
//! `Storage<i64>`) and moves with int64's loops; complex128 is the only 16-byte dtype and has a
//! variant, and so one instantiation of each data-movement loop, of its own. Nothing else in
//! the core reads complex values: see `DType`'s module docs for where complex arithmetic lives.

//!
//! Sizes (hard to undo): every allocation of tensor storage is sized by [`check_alloc`] and made
//! with a fallible allocation ([`alloc`], [`Buffer::full`]), so a shape too large for the machine
//! is an `Error::ResourceExhausted` (TensorFlow's `ResourceExhaustedError`) instead of an abort.
//! Linux overcommits and hands out huge zeroed blocks lazily, so a request the allocator would
//! grant can still be one that kills the process later: a single allocation larger than the
//! memory the process may use (physical memory, `ulimit -v`, a container's limit) is refused
//! up front. Views never allocate, but `Array::broadcast_to` checks its shape as if they did,
//! because any kernel may materialise a view.

use std::sync::{Arc, OnceLock};

use half::{bf16, f16};

use crate::{array::checked_num_elements, DType, Error, Result};

/// The most bytes one allocation may take, read once: the smallest of the physical memory, the
/// process's address-space limit (`ulimit -v`) and its control group's memory limit (a
/// container's), each where it can be read. Past any of them the allocation either fails or
/// gets the process killed later, so it is refused up front instead.
pub(crate) fn memory_limit() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| {
        [
            read_mem_total(),
            read_address_space_limit(),
            read_cgroup_limit(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(usize::MAX)
    })
}

/// `MemTotal` from `/proc/meminfo`, in bytes.
fn read_mem_total() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft `RLIMIT_AS` from `/proc/self/limits` (`None` when unlimited).
fn read_address_space_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This process's control-group memory limit: cgroup v2's `memory.max` or v1's
/// `memory.limit_in_bytes` (`None` when unlimited or unreadable).
fn read_cgroup_limit() -> Option<usize> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read =
        |file: String| -> Option<usize> { std::fs::read_to_string(file).ok()?.trim().parse().ok() };
    groups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?.trim());
        if controllers.is_empty() {
            read(format!("/sys/fs/cgroup{path}/memory.max"))
        } else if controllers.split(',').any(|c| c == "memory") {
            read(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"))
                .or_else(|| read("/sys/fs/cgroup/memory/memory.limit_in_bytes".into()))
        } else {
            None
        }
    })
}

fn oom(op: &'static str, dtype: DType, shape: &[usize]) -> Error {
    Error::resource_exhausted(
        op,
        format!("OOM when allocating tensor with shape {shape:?} and type {dtype}"),
    )
}

/// The one size check before tensor storage is allocated: the shape's element count (see
/// [`checked_num_elements`]), refused as `ResourceExhausted` when the bytes exceed the memory
/// the process may use (see [`memory_limit`]). One checked multiply per dimension and one
/// comparison.
pub fn check_alloc(op: &'static str, dtype: DType, shape: &[usize]) -> Result<usize> {
    let n = checked_num_elements(op, shape)?;
    // A multiply, not a division: this runs before every kernel's output allocation.
    if n.saturating_mul(dtype.size_in_bytes()) > memory_limit() {
        return Err(oom(op, dtype, shape));
    }
    Ok(n)
}

/// An empty `Vec` with room for the elements of `shape`: the fallible allocation kernels make
/// their outputs with (then `push`/`extend` into it). Large ones reuse a pooled buffer of the
/// same length when there is one (see [`crate::pool`]).
pub fn alloc<T: Element>(op: &'static str, shape: &[usize]) -> Result<Vec<T>> {
    let n = check_alloc(op, T::DTYPE, shape)?;
    if let Some(mut pooled) = crate::pool::take(n) {
        pooled.clear();
        return Ok(pooled);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| oom(op, T::DTYPE, shape))?;
    Ok(crate::pool::adopt(v))
}

/// `alloc` filled with `value`.
pub fn alloc_full<T: Element>(op: &'static str, shape: &[usize], value: T) -> Result<Vec<T>> {
    let mut v = alloc(op, shape)?;
    v.resize(v.capacity(), value);
    Ok(v)
}

/// `alloc` filled with zeros: a pooled buffer (see [`crate::pool`]) cleared, else fresh memory
/// that comes from the allocator already zeroed (calloc), for big buffers much cheaper than
/// writing them.
pub fn alloc_zeros<T: Element>(op: &'static str, shape: &[usize]) -> Result<Vec<T>> {
    let n = check_alloc(op, T::DTYPE, shape)?;
    if let Some(mut pooled) = crate::pool::take(n) {
        pooled.fill(T::from_f64(0.0));
        return Ok(pooled);
    }
    zeroed(n)
        .map(crate::pool::adopt)
        .ok_or_else(|| oom(op, T::DTYPE, shape))
}

/// A `Vec` of `n` all-zero-bytes elements, or `None` when the allocator refuses.
fn zeroed<T: Element>(n: usize) -> Option<Vec<T>> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    // SAFETY: the layout has a non-zero size; every `Element` (IEEE floats, integers, bool) has
    // all-zero bytes as a valid value (0, +0.0, false), so the zeroed block holds `n`
    // initialised elements, and it was allocated by the global allocator with `T`'s layout
    // for capacity `n`, as `Vec::from_raw_parts` requires.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut T;
        if ptr.is_null() {
            return None;
        }
        Some(Vec::from_raw_parts(ptr, n, n))
    }
}

/// What keeps another library's memory alive while a [`Storage`] reads it (for a DLPack
/// import, the Python object that owns the capsule's memory).
pub type ForeignOwner = Arc<dyn std::any::Any + Send + Sync>;

/// The elements of a buffer: a `Vec` this library allocated, or memory another library owns
/// and lends read-only (a zero-copy DLPack import).
///
/// Design choice (hard to undo): lent memory is never written. Tensors are immutable, and the
/// one in-place path (a variable update, `Array::buffer_mut`) refuses lent storage, so the
/// update copies it first; the lender's later writes, as with TensorFlow's DLPack import, show
/// through (the memory is shared, as the protocol means it to be).
pub struct Storage<T: Element> {
    repr: Repr<T>,
}

enum Repr<T> {
    Owned(Vec<T>),
    Lent {
        ptr: std::ptr::NonNull<T>,
        len: usize,
        _owner: ForeignOwner,
    },
}

// SAFETY: lent memory is only read, never written or freed through the pointer, and `_owner`
// (itself `Send + Sync`) keeps it alive; reading `T: Send + Sync` values from any thread is sound.
unsafe impl<T: Element> Send for Storage<T> {}
// SAFETY: as for `Send`: `&Storage` only reads the elements (`Deref`); writing needs `&mut`.
unsafe impl<T: Element> Sync for Storage<T> {}

impl<T: Element> Storage<T> {
    /// A view of `len` elements at `ptr` owned by `owner`.
    ///
    /// # Safety
    /// `ptr` must be aligned for `T` and point to `len` initialised elements that stay valid,
    /// and are not freed, for as long as `owner` is alive.
    pub unsafe fn lent(ptr: std::ptr::NonNull<T>, len: usize, owner: ForeignOwner) -> Storage<T> {
        Storage {
            repr: Repr::Lent {
                ptr,
                len,
                _owner: owner,
            },
        }
    }

    /// Whether the memory is another library's (see the type's docs).
    pub fn is_lent(&self) -> bool {
        matches!(self.repr, Repr::Lent { .. })
    }

    /// The elements as an owned `Vec` (a copy when lent).
    pub fn into_vec(mut self) -> Vec<T> {
        match &mut self.repr {
            // Taken out, so the drop below has nothing to hand to the pool.
            Repr::Owned(v) => std::mem::take(v),
            Repr::Lent { .. } => self.to_vec(),
        }
    }
}

impl<T: Element> From<Vec<T>> for Storage<T> {
    fn from(v: Vec<T>) -> Storage<T> {
        Storage {
            repr: Repr::Owned(v),
        }
    }
}

impl<T: Element> std::ops::Deref for Storage<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.repr {
            Repr::Owned(v) => v,
            // SAFETY: the contract of `Storage::lent`.
            Repr::Lent { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Element> std::ops::DerefMut for Storage<T> {
    /// Lent memory is copied into an owned `Vec` first: it is never written (see the type).
    fn deref_mut(&mut self) -> &mut [T] {
        if let Repr::Lent { .. } = self.repr {
            self.repr = Repr::Owned(self.to_vec());
        }
        match &mut self.repr {
            Repr::Owned(v) => v,
            Repr::Lent { .. } => unreachable!("made owned above"),
        }
    }
}

impl<T: Element> Clone for Storage<T> {
    fn clone(&self) -> Storage<T> {
        match &self.repr {
            Repr::Owned(v) => v.clone().into(),
            Repr::Lent { ptr, len, _owner } => Storage {
                repr: Repr::Lent {
                    ptr: *ptr,
                    len: *len,
                    _owner: _owner.clone(),
                },
            },
        }
    }
}

/// A large owned buffer goes to the pool of reusable buffers (see [`crate::pool`]) instead of
/// back to the allocator.
impl<T: Element> Drop for Storage<T> {
    fn drop(&mut self) {
        if let Repr::Owned(v) = &mut self.repr {
            if crate::pool::keeps::<T>(v.capacity()) {
                crate::pool::give(std::mem::take(v));
            }
        }
    }
}

impl<T: Element> std::fmt::Debug for Storage<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Element> PartialEq<Vec<T>> for Storage<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == **other
    }
}

/// A complex number as numpy and TensorFlow store it: the real part, then the imaginary part.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex<T> {
    pub re: T,
    pub im: T,
}

// SAFETY: `repr(C)` over two fields of one plain-old-data type: no padding, and every bit
// pattern of the two parts is a valid value, as bytemuck requires.
unsafe impl<T: bytemuck::Zeroable> bytemuck::Zeroable for Complex<T> {}
// SAFETY: as above; `T: Pod` makes both fields `Copy`, `'static` and free of padding, so the
// pair (two fields of one size and alignment, `repr(C)`) has none either.
unsafe impl<T: bytemuck::Pod> bytemuck::Pod for Complex<T> {}

/// A typed, contiguous block of elements.
#[derive(Clone, Debug)]
pub enum Buffer {
    F16(Storage<f16>),
    BF16(Storage<bf16>),
    F32(Storage<f32>),
    F64(Storage<f64>),
    I32(Storage<i32>),
    I64(Storage<i64>),
    Bool(Storage<bool>),
    /// int8's bits (its twin's storage, see the module docs).
    I8(Storage<u8>),
    /// int16's bits.
    I16(Storage<u16>),
    U8(Storage<u8>),
    U16(Storage<u16>),
    /// uint32's bits.
    U32(Storage<i32>),
    /// uint64's bits.
    U64(Storage<i64>),
    /// complex64's bits (two float32s per int64, see the module docs).
    C64(Storage<i64>),
    C128(Storage<Complex<f64>>),
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
            Buffer::I8(_) => DType::I8,
            Buffer::I16(_) => DType::I16,
            Buffer::U8(_) => DType::U8,
            Buffer::U16(_) => DType::U16,
            Buffer::U32(_) => DType::U32,
            Buffer::U64(_) => DType::U64,
            Buffer::C64(_) => DType::C64,
            Buffer::C128(_) => DType::C128,
        }
    }

    pub fn len(&self) -> usize {
        crate::with_buffer!(self, v => v.len(); untagged)
    }

    /// The same storage tagged as `dtype`, its twin or itself (see [`DType::twin`]): how
    /// [`with_buffer!`] gives a twin's result its dtype back. Any other pair is returned
    /// unchanged, which the callers never ask for.
    pub fn retag(self, dtype: DType) -> Buffer {
        match (self, dtype) {
            (Buffer::U8(v), DType::I8) => Buffer::I8(v),
            (Buffer::I8(v), DType::U8) => Buffer::U8(v),
            (Buffer::U16(v), DType::I16) => Buffer::I16(v),
            (Buffer::I16(v), DType::U16) => Buffer::U16(v),
            (Buffer::I32(v), DType::U32) => Buffer::U32(v),
            (Buffer::U32(v), DType::I32) => Buffer::I32(v),
            (Buffer::I64(v), DType::U64) => Buffer::U64(v),
            (Buffer::U64(v), DType::I64) => Buffer::I64(v),
            (Buffer::I64(v), DType::C64) => Buffer::C64(v),
            (Buffer::C64(v), DType::I64) => Buffer::I64(v),
            (b, _) => b,
        }
    }

    /// Element `i` as f64 (see [`Element::to_f64`]; a complex one's real part), read as its own
    /// dtype, not its twin's.
    pub fn get_f64(&self, i: usize) -> f64 {
        fn at<T: Element>(b: &Buffer, i: usize) -> f64 {
            T::slice(b).map_or(f64::NAN, |s| s[i].to_f64())
        }
        match self.dtype() {
            DType::F16 => at::<f16>(self, i),
            DType::BF16 => at::<bf16>(self, i),
            DType::F32 => at::<f32>(self, i),
            DType::F64 => at::<f64>(self, i),
            DType::I32 => at::<i32>(self, i),
            DType::I64 => at::<i64>(self, i),
            DType::Bool => at::<bool>(self, i),
            DType::I8 => at::<i8>(self, i),
            DType::I16 => at::<i16>(self, i),
            DType::U8 => at::<u8>(self, i),
            DType::U16 => at::<u16>(self, i),
            DType::U32 => at::<u32>(self, i),
            DType::U64 => at::<u64>(self, i),
            DType::C64 => at::<Complex<f32>>(self, i),
            DType::C128 => at::<Complex<f64>>(self, i),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements of `shape`, each `value` converted to `dtype` (non-zero is true for bool,
    /// the real part for complex),
    /// through the checked, fallible allocation; `op` names the caller in its errors.
    pub fn full(op: &'static str, dtype: DType, shape: &[usize], value: f64) -> Result<Buffer> {
        fn typed<T: Element>(op: &'static str, shape: &[usize], value: f64) -> Result<Buffer> {
            // +0.0 only: -0.0 has a sign bit, so it cannot come from a zeroed block.
            let v = if value == 0.0 && value.is_sign_positive() {
                alloc_zeros(op, shape)?
            } else {
                alloc_full(op, shape, T::from_f64(value))?
            };
            Ok(T::into_buffer(v))
        }
        match dtype {
            DType::F16 => typed::<f16>(op, shape, value),
            DType::BF16 => typed::<bf16>(op, shape, value),
            DType::F32 => typed::<f32>(op, shape, value),
            DType::F64 => typed::<f64>(op, shape, value),
            DType::I32 => typed::<i32>(op, shape, value),
            DType::I64 => typed::<i64>(op, shape, value),
            DType::Bool => typed::<bool>(op, shape, value),
            DType::I8 => typed::<i8>(op, shape, value),
            DType::I16 => typed::<i16>(op, shape, value),
            DType::U8 => typed::<u8>(op, shape, value),
            DType::U16 => typed::<u16>(op, shape, value),
            DType::U32 => typed::<u32>(op, shape, value),
            DType::U64 => typed::<u64>(op, shape, value),
            DType::C64 => typed::<Complex<f32>>(op, shape, value),
            DType::C128 => typed::<Complex<f64>>(op, shape, value),
        }
    }

    /// A buffer with no elements.
    pub fn empty(dtype: DType) -> Buffer {
        let twin = match dtype.twin() {
            DType::F16 => Buffer::F16(Vec::new().into()),
            DType::BF16 => Buffer::BF16(Vec::new().into()),
            DType::F32 => Buffer::F32(Vec::new().into()),
            DType::F64 => Buffer::F64(Vec::new().into()),
            DType::I32 => Buffer::I32(Vec::new().into()),
            DType::I64 => Buffer::I64(Vec::new().into()),
            DType::Bool => Buffer::Bool(Vec::new().into()),
            DType::U8 => Buffer::U8(Vec::new().into()),
            DType::C128 => Buffer::C128(Vec::new().into()),
            _ => Buffer::U16(Vec::new().into()),
        };
        twin.retag(dtype)
    }
}

/// A Rust element type that a [`Buffer`] can hold.
pub trait Element: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    const DTYPE: DType;
    fn slice(buf: &Buffer) -> Option<&[Self]>;
    fn slice_mut(buf: &mut Buffer) -> Option<&mut [Self]>;
    fn into_buffer(v: Vec<Self>) -> Buffer;
    fn to_f64(self) -> f64;
    /// `v` converted as TensorFlow's `Cast` does on x86 (float to integer truncates toward
    /// zero; what is out of range or NaN becomes what the x86 conversion makes of it).
    fn from_f64(v: f64) -> Self;
    /// The value as i64: integers sign- or zero-extended (uint64 keeps its bits), floats
    /// truncated, bool 0 or 1.
    #[inline]
    fn to_i64(self) -> i64 {
        Self::to_f64(self) as i64
    }
    /// `v` converted as TensorFlow casts int64: integers keep the low bits (wrapping).
    #[inline]
    fn from_i64(v: i64) -> Self {
        Self::from_f64(v as f64)
    }
    /// The elements of `buf` as `Self` when `buf` holds `Self` or a twin stored as `Self`
    /// (see [`DType::twin`]): bits, for the kernels that only move elements.
    fn bits(buf: &Buffer) -> Option<&[Self]> {
        Self::slice(buf)
    }
    /// [`Element::bits`], writable.
    fn bits_mut(buf: &mut Buffer) -> Option<&mut [Self]> {
        Self::slice_mut(buf)
    }
}

macro_rules! element {
    // The integer impls' wrapping conversions and twin-aware `bits` (see `IntElement`).
    (@int $t:ty, F16) => {};
    (@int $t:ty, BF16) => {};
    (@int $t:ty, F32) => {};
    (@int $t:ty, F64) => {};
    (@int $t:ty, Bool) => {};
    (@int $t:ty, C128) => {};
    (@int $t:ty, $variant:ident) => {
        #[inline]
        fn to_i64(self) -> i64 {
            IntElement::to_i64_(self)
        }
        #[inline]
        fn from_i64(v: i64) -> Self {
            IntElement::from_i64_(v)
        }
        fn bits(buf: &Buffer) -> Option<&[Self]> {
            IntElement::bits_(buf)
        }
        fn bits_mut(buf: &mut Buffer) -> Option<&mut [Self]> {
            IntElement::bits_mut_(buf)
        }
    };
    ($t:ty, $variant:ident, $to:expr, $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn slice(buf: &Buffer) -> Option<&[Self]> {
                match buf {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(buf: &mut Buffer) -> Option<&mut [Self]> {
                match buf {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_buffer(v: Vec<Self>) -> Buffer {
                Buffer::$variant(v.into())
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
            element!(@int $t, $variant);
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
element!(u8, U8, |x| x as f64, |v| i32::from_f64(v) as u8);
element!(u16, U16, |x| x as f64, |v| i32::from_f64(v) as u16);
element!(Complex<f64>, C128, |x| x.re, |v| Complex { re: v, im: 0.0 });

/// complex64, viewed in its twin int64's storage (see the module docs).
impl Element for Complex<f32> {
    const DTYPE: DType = DType::C64;
    fn slice(buf: &Buffer) -> Option<&[Self]> {
        match buf {
            Buffer::C64(v) => Some(bytemuck::cast_slice(v)),
            _ => None,
        }
    }
    fn slice_mut(buf: &mut Buffer) -> Option<&mut [Self]> {
        match buf {
            Buffer::C64(v) => Some(bytemuck::cast_slice_mut(v)),
            _ => None,
        }
    }
    fn into_buffer(v: Vec<Self>) -> Buffer {
        Buffer::C64(
            v.into_iter()
                .map(bytemuck::cast::<_, i64>)
                .collect::<Vec<_>>()
                .into(),
        )
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self.re as f64
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        Complex {
            re: v as f32,
            im: 0.0,
        }
    }
}

/// The integer conversions `to_i64`/`from_i64` (wrapping) and, for the types that store a
/// twin, `bits` accepting that twin's buffer too.
macro_rules! integer {
    ($t:ty $(, $variant:ident $(, $twin:ident)+)?) => {
        impl IntElement for $t {
            #[inline]
            fn to_i64_(self) -> i64 {
                self as i64
            }
            #[inline]
            fn from_i64_(v: i64) -> Self {
                v as $t
            }
            $(
            fn bits_(buf: &Buffer) -> Option<&[Self]> {
                match buf {
                    Buffer::$variant(v) $(| Buffer::$twin(v))+ => Some(v),
                    _ => None,
                }
            }
            fn bits_mut_(buf: &mut Buffer) -> Option<&mut [Self]> {
                match buf {
                    Buffer::$variant(v) $(| Buffer::$twin(v))+ => Some(v),
                    _ => None,
                }
            }
            )?
        }
    };
}

/// The integer side of [`Element`], kept apart so the float impls keep the defaults.
trait IntElement: Sized {
    fn to_i64_(self) -> i64;
    fn from_i64_(v: i64) -> Self;
    fn bits_(_buf: &Buffer) -> Option<&[Self]> {
        None
    }
    fn bits_mut_(_buf: &mut Buffer) -> Option<&mut [Self]> {
        None
    }
}

integer!(u8, U8, I8);
integer!(u16, U16, I16);
integer!(i32, I32, U32);
integer!(i64, I64, U64, C64);
integer!(i8);
integer!(i16);
integer!(u32);
integer!(u64);

/// An [`Element`] stored in its twin's storage (`$store`), viewed as its own type.
macro_rules! twin_element {
    ($t:ty, $variant:ident, $store:ty, $from:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn slice(buf: &Buffer) -> Option<&[Self]> {
                match buf {
                    Buffer::$variant(v) => Some(bytemuck::cast_slice::<$store, $t>(v)),
                    _ => None,
                }
            }
            fn slice_mut(buf: &mut Buffer) -> Option<&mut [Self]> {
                match buf {
                    Buffer::$variant(v) => Some(bytemuck::cast_slice_mut::<$store, $t>(v)),
                    _ => None,
                }
            }
            fn into_buffer(v: Vec<Self>) -> Buffer {
                // A same-size `as` in a map collects in place: the allocation is reused.
                let bits: Vec<$store> = v.into_iter().map(|x| x as $store).collect();
                Buffer::$variant(bits.into())
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                let f: fn(f64) -> $t = $from;
                f(v)
            }
            #[inline]
            fn to_i64(self) -> i64 {
                IntElement::to_i64_(self)
            }
            #[inline]
            fn from_i64(v: i64) -> Self {
                IntElement::from_i64_(v)
            }
        }
    };
}

twin_element!(i8, I8, u8, |v| i32::from_f64(v) as i8);
twin_element!(i16, I16, u16, |v| i32::from_f64(v) as i16);
// TensorFlow's vectorised x86 conversion (what a tensor of any size gets): exact in
// (-2**31, 2**32), negatives wrapping; 2**31 for everything else, NaN included.
twin_element!(u32, U32, i32, |v| {
    if v > -2_147_483_649.0 && v < 4_294_967_296.0 {
        v as i64 as u32
    } else {
        1 << 31
    }
});
// Exact in [2**63, 2**64); below, int64's conversion (negatives wrap), and 2**63 for the rest.
twin_element!(u64, U64, i64, |v| {
    if (9.223_372_036_854_776e18..1.844_674_407_370_955_2e19).contains(&v) {
        v as u64
    } else {
        i64::from_f64(v) as u64
    }
});

/// Runs `$body` with `$v` bound to the typed [`Storage`] inside a buffer, whatever its dtype,
/// for kernels that *move* elements: twins share one arm (see [`DType::twin`]), so `$v` holds
/// their bits, and a [`Buffer`] (or `Result<Buffer>`) that `$body` builds is tagged back with
/// the input's dtype. A body that reads values must match on the dtype instead
/// (see [`Buffer::get_f64`]). With `; untagged` the body's result is returned as it is.
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr; untagged) => {
        match $buf {
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::BF16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::I32($v) | $crate::Buffer::U32($v) => $body,
            $crate::Buffer::I64($v) | $crate::Buffer::U64($v) | $crate::Buffer::C64($v) => $body,
            $crate::Buffer::C128($v) => $body,
            $crate::Buffer::Bool($v) => $body,
            $crate::Buffer::U8($v) | $crate::Buffer::I8($v) => $body,
            $crate::Buffer::U16($v) | $crate::Buffer::I16($v) => $body,
        }
    };
    ($buf:expr, $v:ident => $body:expr) => {{
        let buf: &$crate::Buffer = $buf;
        let dtype = buf.dtype();
        $crate::Retag::retag($crate::with_buffer!(buf, $v => $body; untagged), dtype)
    }};
}

/// What [`with_buffer!`] tags back with the input's dtype.
pub trait Retag {
    fn retag(self, dtype: DType) -> Self;
}

impl Retag for Buffer {
    fn retag(self, dtype: DType) -> Buffer {
        Buffer::retag(self, dtype)
    }
}

impl Retag for Result<Buffer> {
    fn retag(self, dtype: DType) -> Result<Buffer> {
        self.map(|b| b.retag(dtype))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_past_i64_are_invalid_arguments() {
        let err = check_alloc("Fill", DType::F32, &[1 << 32, 1 << 32]).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { op: "Fill", .. }),
            "{err}"
        );
        assert!(err
            .to_string()
            .contains("[4294967296, 4294967296] would have more than 2**63"));
        // TensorFlow accumulates from the left: a leading 0 keeps the count at 0.
        assert_eq!(
            checked_num_elements("Fill", &[0, 1 << 32, 1 << 32]).unwrap(),
            0
        );
        assert!(checked_num_elements("Fill", &[1 << 32, 1 << 32, 0]).is_err());
        assert!(checked_num_elements("Fill", &[usize::MAX]).is_err());
        assert_eq!(checked_num_elements("Fill", &[]).unwrap(), 1);
    }

    #[test]
    fn allocations_past_physical_memory_are_resource_exhausted() {
        let err = alloc::<f32>("Zeros", &[1 << 62]).unwrap_err();
        assert!(
            matches!(err, Error::ResourceExhausted { op: "Zeros", .. }),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains("OOM when allocating tensor with shape [4611686018427387904]"));
        assert!(text.contains("type float32"), "{text}");
        assert!(Buffer::full("Fill", DType::F64, &[1 << 62], 1.0).is_err());
        assert!(alloc_zeros::<i64>("Zeros", &[1 << 62]).is_err());
    }

    #[test]
    fn fallible_allocations_hold_what_they_promise() {
        assert_eq!(alloc::<f64>("T", &[2, 3]).unwrap().capacity(), 6);
        assert_eq!(alloc_zeros::<f32>("T", &[3]).unwrap(), vec![0.0; 3]);
        assert_eq!(alloc_zeros::<bool>("T", &[2]).unwrap(), vec![false; 2]);
        assert!(alloc_zeros::<f32>("T", &[0, 5]).unwrap().is_empty());
        assert_eq!(alloc_full::<i32>("T", &[2], 7).unwrap(), vec![7, 7]);
        // -0.0 keeps its sign (it cannot come from a zeroed block).
        let Buffer::F32(v) = Buffer::full("T", DType::F32, &[2], -0.0).unwrap() else {
            panic!("float32 buffer expected");
        };
        assert!(v.iter().all(|x| *x == 0.0 && x.is_sign_negative()));
    }

    #[test]
    fn twins_share_storage_and_keep_their_dtype_through_data_movement() {
        let a = crate::Array::from_vec(vec![-1i8, 5, -128], &[3]).unwrap();
        assert!(matches!(a.buffer(), Buffer::I8(_)));
        // Moved as uint8 bits, tagged back as int8.
        let moved = a.slice_view(&[2], &[3], &[-1]).contiguous();
        assert_eq!(moved.dtype(), DType::I8);
        assert_eq!(moved.to_vec::<i8>(), vec![-128, 5, -1]);
        assert_eq!(u8::bits(a.buffer()).unwrap(), &[255, 5, 128]);
        assert!(u8::slice(a.buffer()).is_none() && i32::bits(a.buffer()).is_none());
        assert_eq!(a.scalar_f64(), None);
        assert_eq!(moved.buffer().get_f64(0), -128.0);
        let top = Buffer::full("T", DType::U64, &[1], 1.8e19).unwrap();
        assert_eq!(u64::slice(&top).unwrap(), &[18_000_000_000_000_000_000]);
        assert_eq!(Buffer::empty(DType::U32).dtype(), DType::U32);
        for d in DType::ALL {
            assert_eq!(Buffer::full("T", d, &[2], 1.0).unwrap().dtype(), d);
            assert_eq!(Buffer::empty(d).retag(d.twin()).retag(d).dtype(), d);
        }
    }

    #[test]
    fn lent_storage_is_read_in_place_and_copied_before_a_write() {
        let lender = Arc::new(vec![1.0f32, 2.0, 3.0]);
        let ptr = std::ptr::NonNull::new(lender.as_ptr() as *mut f32).unwrap();
        // SAFETY: `lender` is the owner and holds the three elements for as long as it lives.
        let mut lent = unsafe { Storage::lent(ptr, 3, lender.clone()) };
        assert!(lent.is_lent() && lent.as_ptr() == lender.as_ptr());
        let shared = lent.clone();
        assert!(shared.is_lent() && shared.as_ptr() == lender.as_ptr());
        lent[0] = 9.0; // copy on write: the lender's memory is never written
        assert!(!lent.is_lent());
        assert_eq!(*lender, vec![1.0, 2.0, 3.0]);
        assert_eq!(lent, vec![9.0, 2.0, 3.0]);
        assert_eq!(shared.into_vec(), vec![1.0, 2.0, 3.0]);
    }
}
