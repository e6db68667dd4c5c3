//! Kernels that move elements: concat, tile, pad, gather, gather_nd, scatter_nd, one_hot, and
//! the creation kernels eye, range and linspace. Most are "copy blocks": the contiguous input is
//! cut into `inner`-sized runs and the output is a list of run starts.

use super::cast;
use crate::{
    alloc, check_alloc, for_each_offset, num_elements, Array, Buffer, DType, Element, Error,
    Result, Shape,
};

/// Copies the runs `data[s..s + inner]` for each start `s`, in order, into one array of
/// `out_shape` (checked and allocated here, fallibly: it may be far larger than `a`).
fn copy_runs(
    op: &'static str,
    a: &Array,
    starts: &[Option<usize>],
    inner: usize,
    fill: f64,
    out_shape: &[usize],
) -> Result<Array> {
    fn typed<T: Element>(
        op: &'static str,
        data: &[T],
        starts: &[Option<usize>],
        inner: usize,
        fill: &Buffer,
        out_shape: &[usize],
    ) -> Result<Buffer> {
        let fill_value = T::bits(fill).expect("the fill has the array's dtype")[0];
        let mut out = alloc(op, out_shape)?;
        for s in starts {
            match s {
                Some(s) => out.extend_from_slice(&data[*s..*s + inner]),
                None => out.extend(std::iter::repeat_n(fill_value, inner)),
            }
        }
        Ok(T::into_buffer(out))
    }
    if let Some(r) = crate::device::dispatch([a], |d, [a]| {
        d.gather_runs(a, starts, inner, fill, out_shape)
    }) {
        return r;
    }
    let a = a.contiguous();
    // The fill in the array's own dtype, so that twins (which share `typed`) get its bits.
    let fill = Buffer::full(op, a.dtype(), &[1], fill)?;
    let buf = crate::with_buffer!(a.buffer(), v => typed(op, &v[a.offset()..], starts, inner, &fill, out_shape))?;
    Array::from_buffer(buf, out_shape)
}

/// Selects positions `index` along `axis` (`None` writes `fill`): the heart of gather and pad.
pub fn take(
    op: &'static str,
    a: &Array,
    axis: usize,
    index: &[Option<usize>],
    fill: f64,
) -> Result<Array> {
    let shape = a.shape();
    let mut out_shape: Shape = shape.into();
    out_shape[axis] = index.len();
    // Checked before the list of run starts, which is as long as the output has runs.
    check_alloc(op, a.dtype(), &out_shape)?;
    let outer = num_elements(&shape[..axis]);
    let inner = num_elements(&shape[axis + 1..]);
    let d = shape[axis];
    let starts: Vec<Option<usize>> = (0..outer)
        .flat_map(|o| index.iter().map(move |i| i.map(|i| (o * d + i) * inner)))
        .collect();
    copy_runs(op, a, &starts, inner, fill, &out_shape)
}

fn check_index(op: &'static str, i: i64, d: usize) -> Result<usize> {
    if i < 0 || i as usize >= d {
        return Err(Error::out_of_range(
            op,
            format!("index {i} is not in [0, {d})"),
        ));
    }
    Ok(i as usize)
}

/// Integer array contents as i64, for index arguments. Every integer dtype is taken (numpy's
/// uint8 indices were read as int32 before the narrow dtypes existed, and still work), a
/// uint64 past int64 reads as negative, which the index checks refuse.
pub fn index_values(op: &'static str, a: &Array) -> Result<Vec<i64>> {
    if !a.dtype().is_int() {
        return Err(Error::unsupported(op, a.dtype(), "integer indices"));
    }
    Ok(cast(a, DType::I64)?.to_vec::<i64>())
}

/// `tf.gather_nd(params, indices)`: shape `indices[:-1] + params[q:]` with `q = indices[-1]`.
pub fn gather_nd(params: &Array, indices: &Array) -> Result<Array> {
    const OP: &str = "GatherNd";
    let (q, lead) = split_index_shape(OP, indices, params.rank())?;
    let idx = index_values(OP, indices)?;
    let inner = num_elements(&params.shape()[q..]);
    let mut shape: Shape = lead.into();
    shape.extend_from_slice(&params.shape()[q..]);
    check_alloc(OP, params.dtype(), &shape)?;
    let starts = flat_starts(OP, &idx, q, params.shape(), inner)?;
    copy_runs(OP, params, &starts, inner, 0.0, &shape)
}

fn split_index_shape<'a>(
    op: &'static str,
    indices: &'a Array,
    rank: usize,
) -> Result<(usize, &'a [usize])> {
    let r = indices.rank();
    if r == 0 || indices.shape()[r - 1] > rank {
        return Err(Error::invalid(
            op,
            format!(
                "indices of shape {:?} do not index a tensor of rank {rank}",
                indices.shape()
            ),
        ));
    }
    Ok((indices.shape()[r - 1], &indices.shape()[..r - 1]))
}

fn flat_starts(
    op: &'static str,
    idx: &[i64],
    q: usize,
    shape: &[usize],
    inner: usize,
) -> Result<Vec<Option<usize>>> {
    if q == 0 {
        return Ok(vec![Some(0); idx.len().max(1)]);
    }
    idx.chunks(q)
        .map(|tuple| {
            let mut flat = 0;
            for (k, &i) in tuple.iter().enumerate() {
                flat = flat * shape[k] + check_index(op, i, shape[k])?;
            }
            Ok(Some(flat * inner))
        })
        .collect()
}

fn scatter_add<T: Element + std::ops::Add<Output = T>>(
    out: &mut [T],
    upd: &[T],
    starts: &[Option<usize>],
    inner: usize,
) {
    for (run, s) in upd.chunks(inner.max(1)).zip(starts) {
        let s = s.expect("indices were checked");
        for (o, &u) in out[s..s + inner].iter_mut().zip(run) {
            *o = *o + u;
        }
    }
}

/// `tf.scatter_nd(indices, updates, shape)`: zeros of `shape` with `updates` added at `indices`
/// (duplicates sum).
pub fn scatter_nd(indices: &Array, updates: &Array, shape: &[usize]) -> Result<Array> {
    const OP: &str = "ScatterNd";
    let (q, lead) = split_index_shape(OP, indices, shape.len())?;
    let mut expected: Shape = lead.into();
    expected.extend_from_slice(&shape[q..]);
    if updates.shape() != &expected[..] {
        return Err(Error::invalid(
            OP,
            format!(
                "updates must have shape {expected:?}, received {:?}",
                updates.shape()
            ),
        ));
    }
    let inner = num_elements(&shape[q..]);
    let starts = flat_starts(OP, &index_values(OP, indices)?, q, shape, inner)?;
    if let Some(r) = crate::device::dispatch([updates], |d, [u]| {
        d.scatter_add_runs(u, &starts, inner, shape)
    }) {
        return r;
    }
    if updates.dtype().is_narrow() {
        return super::via_wide(updates, |u| scatter_nd(indices, u, shape));
    }
    if updates.dtype().is_complex() {
        return super::complex::via_parts(updates, |u| scatter_nd(indices, u, shape));
    }
    let mut out = Array::zeros(OP, updates.dtype(), shape)?;
    let upd = updates.contiguous();
    // A fresh contiguous buffer that nothing else holds: `buffer_mut` cannot refuse it.
    let buf = out.buffer_mut().expect("a fresh buffer is unique");
    match (buf, upd.buffer()) {
        (Buffer::F32(o), Buffer::F32(u)) => scatter_add(o, &u[upd.offset()..], &starts, inner),
        (Buffer::F64(o), Buffer::F64(u)) => scatter_add(o, &u[upd.offset()..], &starts, inner),
        (Buffer::I32(o), Buffer::I32(u)) => scatter_add(o, &u[upd.offset()..], &starts, inner),
        (Buffer::I64(o), Buffer::I64(u)) => scatter_add(o, &u[upd.offset()..], &starts, inner),
        _ => {
            return Err(Error::unsupported(
                OP,
                updates.dtype(),
                "float32, float64, int32 or int64 updates",
            ))
        }
    }
    Ok(out)
}

/// Concatenation along `axis`; all inputs share the dtype and every other dimension.
pub fn concat(arrays: &[Array], axis: usize) -> Result<Array> {
    const OP: &str = "ConcatV2";
    let first = arrays
        .first()
        .ok_or_else(|| Error::invalid(OP, "expected a non-empty list of tensors"))?;
    if axis >= first.rank() {
        return Err(Error::invalid(
            OP,
            format!("axis {axis} is out of range for rank {}", first.rank()),
        ));
    }
    let mut out_shape: Shape = first.shape().into();
    out_shape[axis] = 0;
    for a in arrays {
        let same_rest = a.rank() == first.rank()
            && a.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(i, (x, y))| i == axis || x == y);
        if a.dtype() != first.dtype() {
            return Err(Error::mismatch(OP, first.dtype(), a.dtype()));
        }
        if !same_rest {
            return Err(Error::invalid(
                OP,
                format!(
                    "dimensions other than axis {axis} must match, received shapes {:?} and {:?}",
                    first.shape(),
                    a.shape()
                ),
            ));
        }
        out_shape[axis] = out_shape[axis]
            .checked_add(a.shape()[axis])
            .ok_or_else(|| Error::invalid(OP, "the concatenated axis is too long"))?;
    }
    let outer = num_elements(&first.shape()[..axis]);
    let parts: Vec<Array> = arrays.iter().map(|a| a.contiguous()).collect();
    fn typed<T: Element>(
        _tag: &[T],
        parts: &[Array],
        outer: usize,
        axis: usize,
        out_shape: &[usize],
    ) -> Result<Vec<T>> {
        let mut out = alloc(OP, out_shape)?;
        for o in 0..outer {
            for p in parts {
                let run = num_elements(&p.shape()[axis..]);
                let s = T::bits(p.buffer()).expect("dtypes checked");
                out.extend_from_slice(&s[p.offset() + o * run..p.offset() + (o + 1) * run]);
            }
        }
        Ok(out)
    }
    let buf = crate::with_buffer!(first.buffer(), tag => Element::into_buffer(typed(tag, &parts, outer, axis, &out_shape)?));
    // No device kernel yet: joined on the host, then moved to the op's device.
    let inputs: Vec<&Array> = arrays.iter().collect();
    Ok(crate::device::placed(
        Array::from_buffer(buf, &out_shape)?,
        &inputs,
    ))
}

/// `tf.tile`: repeats `a` `multiples[i]` times along axis i.
pub fn tile(a: &Array, multiples: &[usize]) -> Result<Array> {
    if multiples.len() != a.rank() {
        return Err(Error::invalid(
            "Tile",
            format!(
                "multiples must have length {} (the rank), received {multiples:?}",
                a.rank()
            ),
        ));
    }
    // Interleave a new axis of size m before each axis, broadcast, and fold the pairs back.
    let mut view = a.clone();
    let mut target = Shape::new();
    for (i, &m) in multiples.iter().enumerate() {
        view = view.insert_axis(2 * i);
        target.extend([m, a.shape()[i]]);
    }
    let out_shape: Shape = a
        .shape()
        .iter()
        .zip(multiples)
        .map(|(d, m)| d.saturating_mul(*m))
        .collect();
    // The interleaved target has the same count; checking the output shape names it.
    check_alloc("Tile", a.dtype(), &out_shape)?;
    view.broadcast_to(&target)?
        .try_contiguous("Tile")?
        .reshape(&out_shape)
}

/// TensorFlow's padding modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    Constant,
    Reflect,
    Symmetric,
}

impl PadMode {
    /// The mode `tf.pad` names, in any case (TensorFlow upper-cases it first).
    pub fn from_name(name: &str) -> Result<PadMode> {
        match name.to_ascii_uppercase().as_str() {
            "CONSTANT" => Ok(PadMode::Constant),
            "REFLECT" => Ok(PadMode::Reflect),
            "SYMMETRIC" => Ok(PadMode::Symmetric),
            _ => Err(Error::invalid(
                "Pad",
                format!("mode must be one of CONSTANT, REFLECT or SYMMETRIC, received {name:?}"),
            )),
        }
    }
}

/// A count argument (`num_rows`, `num`, `depth`): TensorFlow refuses a negative one.
pub fn count(op: &'static str, what: &str, n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid(op, format!("{what} must be >= 0, received {n}")))
}

/// Where each position of an axis of length `d` padded by `(before, after)` reads from
/// (`None`: the constant). `tf.pad` is one [`take`] per axis with this index.
pub fn pad_index(
    d: usize,
    before: usize,
    after: usize,
    mode: PadMode,
) -> Result<Vec<Option<usize>>> {
    let d = d as i64;
    let limit = if mode == PadMode::Reflect { d - 1 } else { d };
    if mode != PadMode::Constant && (before as i64 > limit || after as i64 > limit) {
        return Err(Error::invalid(
            "MirrorPad",
            format!("paddings ({before}, {after}) must be at most {limit} for dimension {d} in {mode:?} mode"),
        ));
    }
    Ok((-(before as i64)..d + after as i64)
        .map(|i| match mode {
            _ if (0..d).contains(&i) => Some(i as usize),
            PadMode::Constant => None,
            PadMode::Reflect => Some(if i < 0 { -i } else { 2 * (d - 1) - i } as usize),
            PadMode::Symmetric => Some(if i < 0 { -i - 1 } else { 2 * d - 1 - i } as usize),
        })
        .collect())
}

/// `tf.one_hot` with the new axis at `axis` (0..=rank); out-of-range indices give all `off`.
pub fn one_hot(
    indices: &Array,
    depth: usize,
    on: f64,
    off: f64,
    axis: usize,
    dtype: DType,
) -> Result<Array> {
    const OP: &str = "OneHot";
    if axis > indices.rank() {
        return Err(Error::invalid(
            OP,
            format!(
                "axis {axis} is out of range for indices of rank {}",
                indices.rank()
            ),
        ));
    }
    let idx = index_values(OP, indices)?;
    let mut shape: Shape = indices.shape().into();
    shape.push(depth);
    // Built in float64 and cast: both copies must fit.
    check_alloc(OP, dtype, &shape)?;
    let mut values = crate::alloc_full(OP, &shape, off)?;
    for (row, &i) in idx.iter().enumerate() {
        if i >= 0 && (i as usize) < depth {
            values[row * depth + i as usize] = on;
        }
    }
    let last = Array::from_vec(values, &shape)?;
    let r = shape.len();
    let mut perm: Vec<usize> = (0..r - 1).collect();
    perm.insert(axis, r - 1);
    let hot = cast(&last.transpose(&perm)?.contiguous(), dtype)?;
    Ok(crate::device::placed(hot, &[indices]))
}

/// An identity matrix (rows × cols, cols defaulting to rows), repeated over `batch`.
pub fn eye(rows: i64, cols: Option<i64>, batch: &[usize], dtype: DType) -> Result<Array> {
    const OP: &str = "Eye";
    let rows = count(OP, "num_rows", rows)?;
    let cols = match cols {
        Some(c) => count(OP, "num_columns", c)?,
        None => rows,
    };
    let mut shape: Shape = batch.into();
    shape.extend([rows, cols]);
    check_alloc(OP, dtype, &shape)?;
    let mut m = crate::alloc_zeros::<f64>(OP, &[rows, cols])?;
    for i in 0..rows.min(cols) {
        m[i * cols + i] = 1.0;
    }
    let mat = Array::from_vec(m, &[rows, cols])?;
    let eye = cast(&mat.broadcast_to(&shape)?.contiguous(), dtype)?;
    Ok(crate::device::placed(eye, &[]))
}

/// TensorFlow's checks of `tf.range`'s arguments, for floats and integers alike: a nonzero
/// `delta` that walks from `start` towards `limit`.
fn check_range_direction<T: PartialOrd + std::fmt::Display>(
    start: T,
    limit: T,
    delta: T,
    zero: T,
) -> Result<()> {
    if delta == zero {
        return Err(Error::invalid("Range", "Requires delta != 0"));
    }
    // Compared both ways, so that a NaN delta passes here, as before this check was shared.
    let rule = if delta > zero && start > limit {
        "start <= limit when delta > 0"
    } else if delta < zero && start < limit {
        "start >= limit when delta < 0"
    } else {
        return Ok(());
    };
    Err(Error::invalid(
        "Range",
        format!("Requires {rule}: {start}/{limit}"),
    ))
}

/// `tf.range(start, limit, delta)`.
pub fn range(start: f64, limit: f64, delta: f64, dtype: DType) -> Result<Array> {
    check_range_direction(start, limit, delta, 0.0)?;
    let count = ((limit - start) / delta).ceil().max(0.0);
    // `as usize` saturates; a count past i64 (or infinite) is refused as a shape would be.
    let n = count as usize;
    if count.is_nan() || count >= 9.223_372_036_854_776e18 {
        return Err(Error::invalid(
            "Range",
            format!("Shape [{count}] would have more than 2**63 - 1 elements"),
        ));
    }
    check_alloc("Range", dtype, &[n])?;
    let mut v = alloc::<f64>("Range", &[n])?;
    v.extend((0..n).map(|i| start + i as f64 * delta));
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, &[n])?, dtype)?,
        &[],
    ))
}

/// `tf.range` over integers: computed in integers, so int64 bounds past 2**53 stay exact
/// (the float path would round them), then narrowed to `dtype` (an integer type).
pub fn range_int(start: i64, limit: i64, delta: i64, dtype: DType) -> Result<Array> {
    check_range_direction(start, limit, delta, 0)?;
    // i128: `limit - start` may overflow i64 (from -2**63 to 2**63 - 1).
    let (span, step) = (limit as i128 - start as i128, delta as i128);
    let n = ((span + step - step.signum()) / step).max(0) as usize;
    check_alloc("Range", dtype, &[n])?;
    let mut v = alloc::<i64>("Range", &[n])?;
    // Every value lies between start and limit, so it fits i64.
    v.extend((0..n).map(|i| (start as i128 + i as i128 * step) as i64));
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, &[n])?, dtype)?,
        &[],
    ))
}

/// `tf.linspace(start, stop, num, axis)` for scalar `start` and `stop`: `num` evenly spaced
/// values, both ends included, along the result's one axis (0 or -1).
pub fn linspace(start: f64, stop: f64, num: i64, axis: i64, dtype: DType) -> Result<Array> {
    if axis != 0 && axis != -1 {
        return Err(Error::invalid(
            "LinSpace",
            format!("axis {axis} is out of range [-1, 1) for scalar start and stop"),
        ));
    }
    let num = count("LinSpace", "num", num)?;
    let step = if num > 1 {
        (stop - start) / (num - 1) as f64
    } else {
        0.0
    };
    check_alloc("LinSpace", dtype, &[num])?;
    let mut v = alloc::<f64>("LinSpace", &[num])?;
    v.extend((0..num).map(|i| {
        if i + 1 == num && num > 1 {
            stop
        } else {
            start + i as f64 * step
        }
    }));
    Ok(crate::device::placed(
        cast(&Array::from_vec(v, &[num])?, dtype)?,
        &[],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid_naming(r: Result<impl std::fmt::Debug>, op: &str, part: &str) {
        match r {
            Err(e @ Error::InvalidArgument { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with(op) && msg.contains(part), "{msg}");
            }
            other => panic!("expected InvalidArgument, received {other:?}"),
        }
    }

    #[test]
    fn range_checks_its_direction_for_floats_and_integers_alike() {
        invalid_naming(range(0.0, 3.0, 0.0, DType::F32), "Range", "delta != 0");
        invalid_naming(range_int(0, 3, 0, DType::I32), "Range", "delta != 0");
        invalid_naming(range(3.0, 0.0, 1.0, DType::F32), "Range", "start <= limit");
        invalid_naming(
            range_int(0, 3, -1, DType::I64),
            "Range",
            "when delta < 0: 0/3",
        );
        let down = range_int(5, -1, -2, DType::I64).unwrap();
        assert_eq!(down.to_vec::<i64>(), vec![5, 3, 1]);
        let up = range(0.5, 2.0, 0.5, DType::F64).unwrap();
        assert_eq!(up.to_vec::<f64>(), vec![0.5, 1.0, 1.5]);
    }

    #[test]
    fn pad_mode_is_read_in_any_case_and_refused_by_name() {
        assert_eq!(PadMode::from_name("reflect").unwrap(), PadMode::Reflect);
        assert_eq!(PadMode::from_name("SYMMETRIC").unwrap(), PadMode::Symmetric);
        assert_eq!(PadMode::from_name("Constant").unwrap(), PadMode::Constant);
        invalid_naming(PadMode::from_name("WRAP"), "Pad", "received \"WRAP\"");
    }

    #[test]
    fn eye_and_linspace_refuse_negative_counts_and_other_axes() {
        invalid_naming(
            eye(-1, None, &[], DType::F32),
            "Eye",
            "num_rows must be >= 0",
        );
        invalid_naming(eye(2, Some(-3), &[], DType::F32), "Eye", "num_columns");
        assert_eq!(eye(2, Some(3), &[], DType::F32).unwrap().shape(), &[2, 3]);
        invalid_naming(
            linspace(0.0, 1.0, -1, 0, DType::F32),
            "LinSpace",
            "num must be >= 0",
        );
        invalid_naming(linspace(0.0, 1.0, 3, 1, DType::F32), "LinSpace", "axis 1");
        let v = linspace(0.0, 1.0, 3, -1, DType::F64)
            .unwrap()
            .to_vec::<f64>();
        assert_eq!(v, vec![0.0, 0.5, 1.0]);
    }

    #[test]
    fn pad_modes_match_tensorflow_examples() {
        let row = Array::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
        let padded = |mode| {
            take("Pad", &row, 0, &pad_index(3, 2, 2, mode).unwrap(), 0.0)
                .unwrap()
                .to_vec::<i32>()
        };
        assert_eq!(padded(PadMode::Reflect), vec![3, 2, 1, 2, 3, 2, 1]);
        assert_eq!(padded(PadMode::Symmetric), vec![2, 1, 1, 2, 3, 3, 2]);
        assert_eq!(padded(PadMode::Constant), vec![0, 0, 1, 2, 3, 0, 0]);
        assert!(pad_index(3, 3, 0, PadMode::Reflect).is_err());
    }

    #[test]
    fn tile_and_gather_nd() {
        let a = Array::from_vec(vec![1i32, 2], &[1, 2]).unwrap();
        assert_eq!(
            tile(&a, &[2, 2]).unwrap().to_vec::<i32>(),
            vec![1, 2, 1, 2, 1, 2, 1, 2]
        );
        let p = Array::from_vec(vec![10i64, 11, 12, 13], &[2, 2]).unwrap();
        let i = Array::from_vec(vec![1i32, 0, 0, 1], &[2, 2]).unwrap();
        assert_eq!(gather_nd(&p, &i).unwrap().to_vec::<i64>(), vec![12, 11]);
        let bad = Array::from_vec(vec![2i32, 0], &[1, 2]).unwrap();
        assert!(matches!(gather_nd(&p, &bad), Err(Error::OutOfRange { .. })));
    }
}

fn add_runs<T: Element + std::ops::Add<Output = T>>(
    out: &mut [T],
    src: &[T],
    starts: &[Option<usize>],
    inner: usize,
) {
    for (run, s) in src.chunks(inner.max(1)).zip(starts) {
        if let Some(s) = s {
            for (o, &u) in out[*s..*s + inner].iter_mut().zip(run) {
                *o = *o + u;
            }
        }
    }
}

/// The adjoint of [`take`]: sums the slices of `g` along `axis` into positions `index[j]` of
/// a zero tensor whose `axis` has length `d` (skipping `None`).
pub fn take_add(g: &Array, axis: usize, index: &[Option<usize>], d: usize) -> Result<Array> {
    const OP: &str = "UnsortedSegmentSum";
    let shape = g.shape();
    if axis >= g.rank() || shape[axis] != index.len() {
        return Err(Error::invalid(
            OP,
            format!(
                "gradient of shape {shape:?} does not match {} indices on axis {axis}",
                index.len()
            ),
        ));
    }
    let outer = num_elements(&shape[..axis]);
    let inner = num_elements(&shape[axis + 1..]);
    let starts: Vec<Option<usize>> = (0..outer)
        .flat_map(|o| index.iter().map(move |i| i.map(|i| (o * d + i) * inner)))
        .collect();
    let mut out_shape: Shape = shape.into();
    out_shape[axis] = d;
    if let Some(r) = crate::device::dispatch([g], |dev, [g]| {
        dev.scatter_add_runs(g, &starts, inner, &out_shape)
    }) {
        return r;
    }
    if g.dtype().is_narrow() {
        return super::via_wide(g, |w| take_add(w, axis, index, d));
    }
    if g.dtype().is_complex() {
        return super::complex::via_parts(g, |w| take_add(w, axis, index, d));
    }
    let mut out = Array::zeros(OP, g.dtype(), &out_shape)?;
    let src = g.contiguous();
    // A fresh contiguous buffer that nothing else holds: `buffer_mut` cannot refuse it.
    let buf = out.buffer_mut().expect("a fresh buffer is unique");
    match (buf, src.buffer()) {
        (Buffer::F32(o), Buffer::F32(s)) => add_runs(o, &s[src.offset()..], &starts, inner),
        (Buffer::F64(o), Buffer::F64(s)) => add_runs(o, &s[src.offset()..], &starts, inner),
        (Buffer::I32(o), Buffer::I32(s)) => add_runs(o, &s[src.offset()..], &starts, inner),
        (Buffer::I64(o), Buffer::I64(s)) => add_runs(o, &s[src.offset()..], &starts, inner),
        _ => return Err(Error::unsupported(OP, g.dtype(), "a numeric dtype")),
    }
    Ok(out)
}

fn write_view<T: Element>(out: &mut [T], strides: &[isize], offset: usize, src: &Array) {
    let data = T::bits(src.buffer()).expect("dtypes agree");
    for_each_offset(
        src.shape(),
        [strides, src.strides()],
        [offset, src.offset()],
        |[o, i]| out[o] = data[i],
    );
}

/// The adjoint of a strided view: zeros of `shape` with `src` written at the positions the view
/// `(begins, lens, steps)` selects (`src` has shape `lens`).
pub fn slice_scatter(
    shape: &[usize],
    begins: &[usize],
    lens: &[usize],
    steps: &[isize],
    src: &Array,
) -> Result<Array> {
    if src.shape() != lens {
        return Err(Error::invalid(
            "StridedSliceGrad",
            format!(
                "expected a gradient of shape {lens:?}, received {:?}",
                src.shape()
            ),
        ));
    }
    let mut out = Array::zeros("StridedSliceGrad", src.dtype(), shape)?;
    // Take the view's layout, then let the view go so the buffer is uniquely ours to write.
    let (strides, offset) = {
        let view = out.slice_view(begins, lens, steps);
        (view.strides().to_vec(), view.offset())
    };
    // A fresh contiguous buffer that nothing else holds: `buffer_mut` cannot refuse it.
    let buf = out.buffer_mut().expect("a fresh buffer is unique");
    crate::with_buffer!(buf, v => write_view(v, &strides, offset, src); untagged);
    Ok(out)
}

#[cfg(test)]
mod scatter_tests {
    use super::*;

    #[test]
    fn slice_scatter_writes_a_reversed_window() {
        let src = Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
        let out = slice_scatter(&[4], &[3], &[2], &[-2], &src).unwrap();
        assert_eq!(out.to_vec::<f32>(), vec![0.0, 2.0, 0.0, 1.0]);
    }
}
