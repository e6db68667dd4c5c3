//! `Array`: a buffer plus a strided layout. Views (reshape of contiguous data, transpose,
//! slicing with any step, broadcasting, expand/squeeze) share the buffer and cost no copy;
//! kernels read views through [`for_each_offset`] or take the contiguous fast path. The
//! elements live on the host or on a device (see [`crate::device`]); a device array's
//! [`Array::buffer`] is its downloaded host copy, so CPU kernels read either.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::device::DeviceMemory;
use crate::{Buffer, DType, Element, Error, Result};

pub type Shape = SmallVec<[usize; 4]>;
pub type Strides = SmallVec<[isize; 4]>;

/// An n-dimensional view of a shared [`Buffer`].
#[derive(Clone, Debug)]
pub struct Array {
    data: Data,
    shape: Shape,
    strides: Strides,
    offset: usize,
}

/// The elements an `Array` views: a host buffer, or a device's memory.
#[derive(Clone, Debug)]
enum Data {
    Host(Arc<Buffer>),
    Device(Arc<DeviceData>),
}

/// A device buffer and, once a CPU kernel has read it, its host copy (see [`crate::device`]).
#[derive(Debug)]
struct DeviceData {
    memory: Box<dyn DeviceMemory>,
    host: std::sync::OnceLock<Arc<Buffer>>,
}

/// Row-major strides of a contiguous array of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = SmallVec::from_elem(0, shape.len());
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        // Saturating: an empty array may have dims whose product overflows ([0, 2**32, 2**32]
        // is a valid shape); its strides are never used to address an element.
        acc = acc.saturating_mul(d.max(1) as isize);
    }
    strides
}

/// The element count of a shape already validated by [`checked_num_elements`] (every `Array`'s
/// shape is: the constructors that can grow one check it).
pub fn num_elements(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The one check every shape that enters the core goes through: the element count, refusing
/// (like TensorFlow's `TensorShape`) a count above `i64::MAX` as it is accumulated from the
/// left. One checked multiply per dimension, so it costs nothing next to any kernel.
pub fn checked_num_elements(op: &'static str, shape: &[usize]) -> Result<usize> {
    let mut n: usize = 1;
    for &d in shape {
        n = n
            .checked_mul(d)
            .filter(|&n| n <= i64::MAX as usize && d <= i64::MAX as usize)
            .ok_or_else(|| too_many_elements(op, shape))?;
    }
    Ok(n)
}

fn too_many_elements(op: &'static str, shape: &[usize]) -> Error {
    Error::invalid(
        op,
        format!("Shape {shape:?} would have more than 2**63 - 1 elements"),
    )
}

/// Numpy broadcasting of two shapes.
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Shape> {
    let rank = a.len().max(b.len());
    let mut out: Shape = SmallVec::from_elem(0, rank);
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::invalid(
                op,
                format!("incompatible shapes for broadcasting: {a:?} and {b:?}"),
            ));
        };
    }
    checked_num_elements(op, &out)?;
    Ok(out)
}

/// Calls `f` with the buffer offsets of every element of `N` arrays that share `shape`
/// (each with its own strides), in row-major order. The innermost axis is a tight loop.
pub fn for_each_offset<const N: usize>(
    shape: &[usize],
    strides: [&[isize]; N],
    offsets: [usize; N],
    mut f: impl FnMut([usize; N]),
) {
    if shape.contains(&0) {
        return;
    }
    let rank = shape.len();
    if rank == 0 {
        f(offsets);
        return;
    }
    let inner = shape[rank - 1];
    let inner_strides: [isize; N] = std::array::from_fn(|k| strides[k][rank - 1]);
    let mut index: SmallVec<[usize; 4]> = SmallVec::from_elem(0, rank - 1);
    let mut base: [isize; N] = std::array::from_fn(|k| offsets[k] as isize);
    loop {
        let mut pos = base;
        for _ in 0..inner {
            f(std::array::from_fn(|k| pos[k] as usize));
            for k in 0..N {
                pos[k] += inner_strides[k];
            }
        }
        // Advance the outer index like an odometer.
        let mut axis = rank - 1;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            for k in 0..N {
                base[k] += strides[k][axis];
            }
            if index[axis] < shape[axis] {
                break;
            }
            for k in 0..N {
                base[k] -= strides[k][axis] * shape[axis] as isize;
            }
            index[axis] = 0;
        }
    }
}

impl Array {
    /// An array over a whole buffer, with a row-major layout.
    pub fn from_buffer(buf: Buffer, shape: &[usize]) -> Result<Array> {
        let n = checked_num_elements("Array", shape)?;
        if buf.len() != n {
            return Err(Error::invalid(
                "Array",
                format!(
                    "a buffer of {} elements cannot have shape {shape:?} ({n} elements)",
                    buf.len()
                ),
            ));
        }
        Ok(Array::from_arc(Arc::new(buf), shape))
    }

    fn from_arc(buf: Arc<Buffer>, shape: &[usize]) -> Array {
        Array {
            data: Data::Host(buf),
            strides: row_major_strides(shape),
            shape: SmallVec::from_slice(shape),
            offset: 0,
        }
    }

    pub fn from_vec<T: Element>(v: Vec<T>, shape: &[usize]) -> Result<Array> {
        Array::from_buffer(T::into_buffer(v), shape)
    }

    pub fn scalar<T: Element>(v: T) -> Array {
        Array::from_arc(Arc::new(T::into_buffer(vec![v])), &[])
    }

    /// A scalar of `dtype` holding `value` (converted as [`Buffer::full`] does).
    pub fn scalar_of(dtype: DType, value: f64) -> Array {
        // One element always fits: the size checks cannot refuse it.
        let buf = Buffer::full("Scalar", dtype, &[], value).expect("one element fits");
        Array::from_arc(Arc::new(buf), &[])
    }

    /// Zeros of `shape`; `op` names the caller in the size errors (see [`Buffer::full`]).
    pub fn zeros(op: &'static str, dtype: DType, shape: &[usize]) -> Result<Array> {
        Array::full(op, dtype, shape, 0.0)
    }

    /// `value` converted to `dtype` in every element of `shape`.
    pub fn full(op: &'static str, dtype: DType, shape: &[usize], value: f64) -> Result<Array> {
        let buf = Buffer::full(op, dtype, shape, value)?;
        Ok(Array::from_arc(Arc::new(buf), shape))
    }

    /// An array over the whole of a device's memory, with a row-major layout.
    pub fn from_device(memory: Box<dyn DeviceMemory>, shape: &[usize]) -> Result<Array> {
        let n = checked_num_elements("Array", shape)?;
        if memory.len() != n {
            return Err(Error::invalid(
                "Array",
                format!(
                    "a device buffer of {} elements cannot have shape {shape:?} ({n} elements)",
                    memory.len()
                ),
            ));
        }
        let data = Data::Device(Arc::new(DeviceData {
            memory,
            host: std::sync::OnceLock::new(),
        }));
        Ok(Array {
            data,
            strides: row_major_strides(shape),
            shape: SmallVec::from_slice(shape),
            offset: 0,
        })
    }

    /// The device memory this array views, `None` on the host.
    pub fn device_memory(&self) -> Option<&dyn DeviceMemory> {
        match &self.data {
            Data::Host(_) => None,
            Data::Device(d) => Some(&*d.memory),
        }
    }

    /// The host buffer: for a device array, its host copy, downloaded on first use.
    ///
    /// Panics if the device cannot be read (a lost device): the CPU kernels that call this
    /// have no error path for it, and a lost device leaves nothing to compute with.
    fn host(&self) -> &Arc<Buffer> {
        match &self.data {
            Data::Host(b) => b,
            Data::Device(d) => d.host.get_or_init(|| match d.memory.download() {
                Ok(b) => {
                    crate::device::count_download(
                        d.memory.len() * d.memory.dtype().size_in_bytes(),
                    );
                    Arc::new(b)
                }
                Err(e) => panic!("reading a tensor on {:?} failed: {e}", d.memory.device()),
            }),
        }
    }

    /// The same view over the host copy of the elements (itself for a host array).
    pub(crate) fn on_host_view(&self) -> Array {
        Array {
            data: Data::Host(self.host().clone()),
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
        }
    }

    pub fn dtype(&self) -> DType {
        match &self.data {
            Data::Host(b) => b.dtype(),
            Data::Device(d) => d.memory.dtype(),
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    pub fn offset(&self) -> usize {
        self.offset
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        num_elements(&self.shape)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements on the host (a device array's downloaded copy).
    pub fn buffer(&self) -> &Buffer {
        self.host()
    }

    /// True when the elements sit in row-major order without gaps (dims of size 1 ignored).
    /// An empty array is contiguous whatever its strides: it has no elements to be out of order.
    pub fn is_contiguous(&self) -> bool {
        if self.shape.contains(&0) {
            return true;
        }
        let mut expected = 1isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != expected {
                return false;
            }
            expected *= d as isize;
        }
        true
    }

    /// The elements as one slice when the layout is contiguous.
    pub fn contiguous_slice<T: Element>(&self) -> Option<&[T]> {
        if self.is_empty() {
            // An empty view may carry an offset past the end of its (empty) buffer.
            return T::slice(self.host()).map(|_| &[][..]);
        }
        if !self.is_contiguous() {
            return None;
        }
        T::slice(self.host()).map(|s| &s[self.offset..self.offset + self.len()])
    }

    /// The elements in row-major order as a new `Vec`. Panics if `T` is not the dtype, which
    /// is a bug in the caller, never a user error.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        if let Some(s) = self.contiguous_slice::<T>() {
            return s.to_vec();
        }
        let data = T::slice(self.host()).expect("to_vec: element type is not the array's dtype");
        let mut out = Vec::with_capacity(self.len());
        for_each_offset(&self.shape, [&self.strides], [self.offset], |[i]| {
            out.push(data[i])
        });
        out
    }

    /// The same values with a contiguous layout (no copy if already contiguous).
    pub fn contiguous(&self) -> Array {
        // An empty device array stays on its device (the copy below makes an empty one there).
        if self.is_empty() && self.device_memory().is_none() {
            let buf = Buffer::empty(self.dtype());
            return Array::from_arc(Arc::new(buf), &self.shape);
        }
        if self.is_contiguous() {
            return self.clone();
        }
        if let Data::Device(d) = &self.data {
            // On the device when it has the copy kernel; else (or should it fail) on the host.
            let on_device = crate::device::backend(d.memory.device())
                .and_then(|b| b.contiguous(self))
                .and_then(|r| r.ok());
            return on_device.unwrap_or_else(|| self.on_host_view().contiguous());
        }
        let buf = crate::with_buffer!(&**self.host(), v => {
            let mut out = Vec::with_capacity(self.len());
            for_each_offset(&self.shape, [&self.strides], [self.offset], |[i]| out.push(v[i]));
            Element::into_buffer(out)
        });
        Array::from_arc(Arc::new(buf), &self.shape)
    }

    /// `contiguous`, with the copy (if one is needed) allocated fallibly: for the ops whose
    /// purpose is to materialise a broadcast (`fill`, `tile`), where the copy is the user's
    /// whole request and may be too big.
    pub fn try_contiguous(&self, op: &'static str) -> Result<Array> {
        // A device copy is the device's to allocate (it refuses what does not fit).
        if self.is_empty() || self.is_contiguous() || self.device_memory().is_some() {
            return Ok(self.contiguous());
        }
        let buf = crate::with_buffer!(&**self.host(), v => {
            let mut out = crate::buffer::alloc(op, &self.shape)?;
            for_each_offset(&self.shape, [&self.strides], [self.offset], |[i]| out.push(v[i]));
            Element::into_buffer(out)
        });
        Ok(Array::from_arc(Arc::new(buf), &self.shape))
    }

    /// The buffer, made uniquely owned and contiguous, for in-place updates.
    pub fn into_buffer(self) -> Buffer {
        let shape = self.shape.clone();
        let a = self.on_host_view().contiguous();
        let (offset, len) = (a.offset, a.len());
        let Data::Host(buf) = a.data else {
            unreachable!("a host view's contiguous copy is on the host")
        };
        if offset == 0 && buf.len() == num_elements(&shape) {
            return Arc::try_unwrap(buf).unwrap_or_else(|arc| (*arc).clone());
        }
        crate::with_buffer!(&*buf, v => Element::into_buffer(v[offset..offset + len].to_vec()))
    }

    /// Mutable access to a contiguous buffer when no other array shares it (memory lent by
    /// another library is copied on the first write; see [`crate::Storage`]). `None` on a
    /// device: device memory is never written in place.
    pub fn buffer_mut(&mut self) -> Option<&mut Buffer> {
        let len = self.len();
        let contiguous = self.offset == 0 && self.is_contiguous();
        match &mut self.data {
            Data::Host(buf) if contiguous && buf.len() == len => Arc::get_mut(buf),
            _ => None,
        }
    }

    /// The single element of a size-1 array as f64.
    pub fn scalar_f64(&self) -> Option<f64> {
        if self.len() != 1 {
            return None;
        }
        Some(self.host().get_f64(self.offset))
    }

    /// Whether two arrays are views of the same buffer.
    pub fn shares_buffer(&self, other: &Array) -> bool {
        match (&self.data, &other.data) {
            (Data::Host(a), Data::Host(b)) => Arc::ptr_eq(a, b),
            (Data::Device(a), Data::Device(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// A view with a new shape (a copy first if the layout is not contiguous).
    pub fn reshape(&self, shape: &[usize]) -> Result<Array> {
        if checked_num_elements("Reshape", shape)? != self.len() {
            return Err(Error::invalid(
                "Reshape",
                format!(
                    "cannot reshape a tensor with {} elements to shape {shape:?} ({} elements)",
                    self.len(),
                    num_elements(shape)
                ),
            ));
        }
        let a = self.contiguous();
        Ok(Array {
            data: a.data,
            strides: row_major_strides(shape),
            shape: SmallVec::from_slice(shape),
            offset: a.offset,
        })
    }

    /// A view with axes permuted: output axis i is input axis `perm[i]`.
    pub fn transpose(&self, perm: &[usize]) -> Result<Array> {
        let mut seen = vec![false; self.rank()];
        let repeated_or_out_of_range = perm
            .iter()
            .any(|&p| p >= self.rank() || std::mem::replace(&mut seen[p], true));
        if perm.len() != self.rank() || repeated_or_out_of_range {
            return Err(Error::invalid(
                "Transpose",
                format!(
                    "perm must be a permutation of 0..{}, received {perm:?}",
                    self.rank()
                ),
            ));
        }
        Ok(Array {
            data: self.data.clone(),
            shape: perm.iter().map(|&p| self.shape[p]).collect(),
            strides: perm.iter().map(|&p| self.strides[p]).collect(),
            offset: self.offset,
        })
    }

    /// A view broadcast to `shape` (zero strides on the repeated axes). The view costs no
    /// memory, but the shape is checked as if it were allocated: every kernel may materialise
    /// its input with [`Array::contiguous`], which must not fail.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        crate::buffer::check_alloc("BroadcastTo", self.dtype(), shape)?;
        if shape.len() < self.rank() {
            return Err(Error::invalid(
                "BroadcastTo",
                format!("cannot broadcast shape {:?} to {shape:?}", self.shape),
            ));
        }
        let lead = shape.len() - self.rank();
        let mut strides: Strides = SmallVec::from_elem(0, shape.len());
        for (i, &d) in shape.iter().enumerate().skip(lead) {
            let own = self.shape[i - lead];
            if own == d {
                strides[i] = self.strides[i - lead];
            } else if own != 1 {
                return Err(Error::invalid(
                    "BroadcastTo",
                    format!("cannot broadcast shape {:?} to {shape:?}", self.shape),
                ));
            }
        }
        Ok(Array {
            data: self.data.clone(),
            shape: SmallVec::from_slice(shape),
            strides,
            offset: self.offset,
        })
    }

    /// A view of `begin, begin+step, ...` (`len` elements) along each axis; steps may be negative.
    pub fn slice_view(&self, begins: &[usize], lens: &[usize], steps: &[isize]) -> Array {
        let mut offset = self.offset as isize;
        let mut strides = self.strides.clone();
        for axis in 0..self.rank() {
            if lens[axis] > 0 {
                offset += begins[axis] as isize * self.strides[axis];
            }
            strides[axis] *= steps[axis];
        }
        Array {
            data: self.data.clone(),
            shape: SmallVec::from_slice(lens),
            strides,
            offset: offset.max(0) as usize,
        }
    }

    /// A view with the given axes removed; each must have size 1 (or be indexed with `index`).
    pub fn index_axis(&self, axis: usize, index: usize) -> Array {
        let mut a = self.clone();
        if self.shape[axis] > 0 {
            a.offset = (self.offset as isize + index as isize * self.strides[axis]) as usize;
        }
        a.shape.remove(axis);
        a.strides.remove(axis);
        a
    }

    /// A view with a new axis of size 1 at `axis` (0..=rank).
    pub fn insert_axis(&self, axis: usize) -> Array {
        let mut a = self.clone();
        a.shape.insert(axis, 1);
        a.strides.insert(axis, 0);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arrays_are_contiguous_and_writable() {
        let mut a = Array::zeros("test", DType::F32, &[2, 0]).unwrap();
        assert!(a.is_contiguous());
        assert!(a.buffer_mut().is_some());
        let wide = Array::zeros("test", DType::F32, &[0, 1 << 32, 1 << 32]).unwrap();
        assert_eq!(wide.len(), 0);
        assert_eq!(wide.contiguous().shape(), &[0, 1 << 32, 1 << 32]);
    }

    #[test]
    fn views_check_the_shapes_they_grow_to() {
        let one = Array::scalar(1.0f32);
        assert!(matches!(
            one.broadcast_to(&[1 << 32, 1 << 32]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            one.broadcast_to(&[1 << 60]),
            Err(Error::ResourceExhausted { .. })
        ));
        assert!(one.reshape(&[1 << 32, 1 << 32]).is_err());
        let empty = Array::zeros("test", DType::F32, &[0]).unwrap();
        assert!(empty.reshape(&[1 << 32, 1 << 32, 0]).is_err());
        assert!(Array::from_vec(Vec::<f32>::new(), &[1 << 32, 1 << 32]).is_err());
    }
}
