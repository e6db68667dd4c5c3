//! Ops that move elements without arithmetic: reshape, transpose, slicing, concatenation,
//! tiling, padding, gathers and scatters. Views cost no copy; each backward is the adjoint
//! movement (reshape back, slice ↔ scatter, take ↔ take-add, concat ↔ slices).

use std::sync::Arc;

use ferrotape_core::kernels::{self, PadMode};
use ferrotape_core::{Array, DType, Error, Result, Shape};

use super::{reduce_sum, unbroadcast};
use crate::tape::{batch_axes, record, record_vectorizable};
use crate::tensor::Tensor;
use crate::trace;

/// Resolves a shape with at most one -1 for a tensor of `len` elements.
pub fn resolve_shape(op: &'static str, len: usize, shape: &[i64]) -> Result<Shape> {
    let unknown = shape.iter().filter(|&&d| d == -1).count();
    if unknown > 1 || shape.iter().any(|&d| d < -1) {
        return Err(Error::invalid(
            op,
            format!("only one dimension may be -1 and none below it, received {shape:?}"),
        ));
    }
    // The known dims (no -1 here: checked above) must not overflow before the division.
    let known_dims: Shape = shape
        .iter()
        .filter(|&&d| d >= 0)
        .map(|&d| d as usize)
        .collect();
    let known = ferrotape_core::checked_num_elements(op, &known_dims)?;
    let fill = if unknown == 1 {
        if known == 0 || !len.is_multiple_of(known) {
            return Err(Error::invalid(
                op,
                format!("cannot reshape a tensor with {len} elements to shape {shape:?}"),
            ));
        }
        len / known
    } else {
        0
    };
    Ok(shape
        .iter()
        .map(|&d| if d == -1 { fill } else { d as usize })
        .collect())
}

/// Normalises a possibly negative axis for a tensor of `rank` (or `rank + 1` when inserting).
pub fn norm_axis(op: &'static str, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(Error::invalid(
            op,
            format!("axis {axis} is out of range [-{r}, {r})"),
        ));
    }
    Ok(axis.rem_euclid(r.max(1)) as usize)
}

/// A shape argument without -1 (`tf.zeros`, `tf.tile`'s multiples, ...): TensorFlow refuses
/// a negative entry as an invalid argument of the op.
pub fn dims(op: &'static str, shape: &[i64]) -> Result<Shape> {
    shape
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                Error::invalid(
                    op,
                    format!("dimensions must be >= 0, received {d} in {shape:?}"),
                )
            })
        })
        .collect()
}

/// The same elements in a new shape (a view when contiguous); d/dx = reshape back.
pub fn reshape(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let y = Tensor::new(x.value().reshape(shape)?);
    trace::node1("Reshape", &[x], &y, || {
        let shape = shape.to_vec();
        move |t: &[Tensor]| reshape(&t[0], &shape)
    });
    record_vectorizable("Reshape", &[x], &[&y], || {
        let (s, like): (Shape, _) = (x.shape().into(), x.id());
        move |gs: &[Tensor], _: &[bool]| {
            Ok(vec![Some(reshape_following(
                &gs[0],
                like,
                &s,
                same_shape,
                &[],
            )?)])
        }
    });
    Ok(y)
}

/// `reshape(g, target)` with `target` the leading batch axes of `g` (a vectorized Jacobian's)
/// then `to(like_shape)`, where `like_shape` is the shape of the tensor whose id is `like`:
/// a gradient shaped after a forward value. A trace records it as reading that value's shape
/// at replay, so that it can serve other sizes (see `trace::sizes`).
pub(crate) fn reshape_following(
    g: &Tensor,
    like: crate::tensor::TensorId,
    like_shape: &[usize],
    to: fn(&[usize], &[bool]) -> Shape,
    mask: &[bool],
) -> Result<Tensor> {
    let lead = batch_axes().min(g.rank());
    let target: Shape = g.shape()[..lead]
        .iter()
        .copied()
        .chain(to(like_shape, mask))
        .collect();
    let y = reshape(g, &target)?;
    trace::node1_shaped_like("ReshapeLike", &[g], like, &y, || {
        let mask = mask.to_vec();
        move |t: &[Tensor], like: &[usize]| {
            let target: Shape = t[0].shape()[..lead]
                .iter()
                .copied()
                .chain(to(like, &mask))
                .collect();
            reshape(&t[0], &target)
        }
    });
    Ok(y)
}

/// [`broadcast_to`] `g`'s leading batch axes then the shape of the tensor whose id is `like`,
/// recorded in a trace as reading that shape at replay (see [`reshape_following`]).
pub(crate) fn broadcast_following(
    g: &Tensor,
    like: crate::tensor::TensorId,
    like_shape: &[usize],
) -> Result<Tensor> {
    let lead = batch_axes().min(g.rank().saturating_sub(like_shape.len()));
    let target: Shape = g.shape()[..lead]
        .iter()
        .chain(like_shape)
        .copied()
        .collect();
    let y = broadcast_to(g, &target)?;
    trace::node1_shaped_like("BroadcastToLike", &[g], like, &y, || {
        move |t: &[Tensor], like: &[usize]| {
            let target: Shape = t[0].shape()[..lead].iter().chain(like).copied().collect();
            broadcast_to(&t[0], &target)
        }
    });
    Ok(y)
}

/// The shape itself (for [`reshape_following`]).
pub(crate) fn same_shape(shape: &[usize], _: &[bool]) -> Shape {
    shape.into()
}

/// `x` in the shape `request` asks for, one entry of which may be -1 (the rest of the
/// elements), as `tf.reshape` takes it. A trace records the request, resolved at replay, so
/// that a `-1` follows the size of the input there.
pub fn reshape_request(x: &Tensor, request: &[i64]) -> Result<Tensor> {
    let shape = resolve_request(request, x.len())?;
    let y = reshape(x, &shape)?;
    if y.id() != x.id() && request.contains(&-1) {
        trace::node1("ReshapeRequest", &[x], &y, || {
            let request = request.to_vec();
            move |t: &[Tensor]| reshape(&t[0], &resolve_request(&request, t[0].len())?)
        });
    }
    Ok(y)
}

/// A reshape request with at most one -1 as the shape of `len` elements.
pub fn resolve_request(request: &[i64], len: usize) -> Result<Shape> {
    let known: i64 = request.iter().filter(|&&d| d != -1).product();
    let unknown = request.iter().filter(|&&d| d == -1).count();
    let bad = || {
        Error::invalid(
            "Reshape",
            format!("cannot reshape a tensor of {len} elements to shape {request:?}"),
        )
    };
    if unknown > 1 || request.iter().any(|&d| d < -1) {
        return Err(bad());
    }
    request
        .iter()
        .map(|&d| {
            if d != -1 {
                return Ok(d as usize);
            }
            if known == 0 || len as i64 % known != 0 {
                return Err(bad());
            }
            Ok((len as i64 / known) as usize)
        })
        .collect()
}

/// `x`'s shape as a 1-D tensor of `dtype` (`tf.shape`); a trace reads it from `x` at replay.
pub fn shape_of(x: &Tensor, dtype: DType) -> Result<Tensor> {
    fn of(x: &Tensor, dtype: DType) -> Result<Tensor> {
        let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
        let a = kernels::cast(&Array::from_vec(dims, &[x.rank()])?, dtype)?;
        Ok(Tensor::new(a))
    }
    let y = of(x, dtype)?;
    trace::node1("ShapeOf", &[x], &y, || move |t: &[Tensor]| of(&t[0], dtype));
    Ok(y)
}

/// `x`'s number of elements as a scalar of `dtype` (`tf.size`); a trace counts at replay.
pub fn size_of(x: &Tensor, dtype: DType) -> Result<Tensor> {
    fn of(x: &Tensor, dtype: DType) -> Tensor {
        Tensor::new(Array::scalar_of(dtype, x.len() as f64))
    }
    let y = of(x, dtype);
    trace::node1("SizeOf", &[x], &y, || {
        move |t: &[Tensor]| Ok(of(&t[0], dtype))
    });
    Ok(y)
}

/// Axes permuted (a view); d/dx = transpose by the inverse permutation.
pub fn transpose(x: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let y = Tensor::new(x.value().transpose(perm)?);
    trace::node1("Transpose", &[x], &y, || {
        let perm = perm.to_vec();
        move |t: &[Tensor]| transpose(&t[0], &perm)
    });
    record_vectorizable("Transpose", &[x], &[&y], || {
        let mut inverse = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        move |gs: &[Tensor], _: &[bool]| {
            // Batch axes (a vectorized Jacobian's) stay in front.
            let batch = batch_axes().min(gs[0].rank().saturating_sub(inverse.len()));
            let perm: Vec<usize> = (0..batch)
                .chain(inverse.iter().map(|&p| p + batch))
                .collect();
            Ok(vec![Some(transpose(&gs[0], &perm)?)])
        }
    });
    Ok(y)
}

/// Broadcast to `shape` (a view); d/dx = sum over the broadcast axes.
pub fn broadcast_to(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if x.shape() == shape {
        return Ok(x.clone());
    }
    let y = Tensor::new(x.value().broadcast_to(shape)?);
    trace::node1("BroadcastTo", &[x], &y, || {
        let shape = shape.to_vec();
        move |t: &[Tensor]| broadcast_to(&t[0], &shape)
    });
    record_vectorizable("BroadcastTo", &[x], &[&y], || {
        let s: Shape = x.shape().into();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(unbroadcast(&gs[0], &s)?)])
    });
    Ok(y)
}

/// One input axis of a strided slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisSlice {
    /// `len` elements from `begin` with `step` (negative steps walk backwards).
    Range {
        begin: usize,
        len: usize,
        step: isize,
    },
    /// A single position; the axis is removed from the result.
    Index(usize),
    /// A new axis of size 1 in the result (consumes no input axis).
    NewAxis,
    /// The whole axis (`:`), however long: a trace replaying the slice takes the whole axis
    /// of each replay's input (see `trace::sizes`).
    All,
}

/// `x[spec]` as a view: what Python indexing (`x[1:3, ::-1, None, 0]`) lowers to.
/// d/dx = the gradient scattered back into zeros at the selected positions.
pub fn strided_slice(x: &Tensor, spec: &[AxisSlice]) -> Result<Tensor> {
    let rank = x.rank();
    let (mut begins, mut lens, mut steps) = (
        Vec::with_capacity(rank),
        Vec::with_capacity(rank),
        Vec::with_capacity(rank),
    );
    for s in spec {
        match *s {
            AxisSlice::Range { begin, len, step } => {
                begins.push(begin);
                lens.push(len);
                steps.push(step);
            }
            AxisSlice::Index(i) => {
                begins.push(i);
                lens.push(1);
                steps.push(1);
            }
            AxisSlice::All => {
                begins.push(0);
                lens.push(x.shape().get(begins.len() - 1).copied().unwrap_or(0));
                steps.push(1);
            }
            AxisSlice::NewAxis => {}
        }
    }
    if begins.len() != rank {
        return Err(Error::invalid(
            "StridedSlice",
            format!(
                "the index covers {} axes of a tensor of rank {rank}",
                begins.len()
            ),
        ));
    }
    let mut view = x.value().slice_view(&begins, &lens, &steps);
    let mut axis = 0;
    for s in spec {
        match s {
            AxisSlice::Range { .. } | AxisSlice::All => axis += 1,
            AxisSlice::Index(_) => view = view.index_axis(axis, 0),
            AxisSlice::NewAxis => {
                view = view.insert_axis(axis);
                axis += 1;
            }
        }
    }
    let y = Tensor::new(view);
    // The input axes `:` takes whole: a replay may find them of another length; every other
    // axis must keep its traced length, since its positions were resolved against it.
    let whole: Vec<bool> = spec
        .iter()
        .filter(|s| !matches!(s, AxisSlice::NewAxis))
        .map(|s| matches!(s, AxisSlice::All))
        .collect();
    trace::node1("StridedSlice", &[x], &y, || {
        let (spec, traced, whole) = (spec.to_vec(), Shape::from(x.shape()), whole.clone());
        move |t: &[Tensor]| {
            check_resolved_axes("StridedSlice", t[0].shape(), &traced, &whole)?;
            strided_slice(&t[0], &spec)
        }
    });
    record("StridedSlice", &[x], &[&y], || {
        let (full, like): (Shape, _) = (x.shape().into(), x.id());
        move |gs: &[Tensor], _: &[bool]| {
            let g = reshape(&gs[0], &lens)?;
            let dx = slice_scatter(&g, &full, &begins, &steps)?;
            // In a trace, recorded as reading the input's shape at replay for its whole axes.
            trace::node1_shaped_like("StridedSliceGradLike", &[&gs[0]], like, &dx, || {
                let (lens, begins, steps) = (lens.clone(), begins.clone(), steps.clone());
                let (traced, whole) = (full.clone(), whole.clone());
                move |t: &[Tensor], full: &[usize]| {
                    check_resolved_axes("StridedSliceGrad", full, &traced, &whole)?;
                    let lens: Shape = lens
                        .iter()
                        .zip(full)
                        .zip(&whole)
                        .map(|((&len, &d), &w)| if w { d } else { len })
                        .collect();
                    slice_scatter(&reshape(&t[0], &lens)?, full, &begins, &steps)
                }
            });
            Ok(vec![Some(dx)])
        }
    });
    Ok(y)
}

/// A replayed slice's input: axes not taken whole must have their traced lengths (their
/// positions were resolved against them); an error otherwise (see `trace::sizes`).
fn check_resolved_axes(
    op: &'static str,
    shape: &[usize],
    traced: &[usize],
    whole: &[bool],
) -> Result<()> {
    let resolved_moved = shape.len() != traced.len()
        || shape
            .iter()
            .zip(traced)
            .zip(whole)
            .any(|((a, b), &w)| !w && a != b);
    if resolved_moved {
        return Err(Error::invalid(
            op,
            format!("a replay sliced a tensor of shape {shape:?}, traced as {traced:?}, on an axis whose positions were resolved"),
        ));
    }
    Ok(())
}

/// Zeros of `shape` with `g` written at a strided window; the adjoint of [`strided_slice`].
/// d/dg = the same window sliced out of the incoming gradient.
pub fn slice_scatter(
    g: &Tensor,
    shape: &[usize],
    begins: &[usize],
    steps: &[isize],
) -> Result<Tensor> {
    let y = Tensor::new(kernels::slice_scatter(
        shape,
        begins,
        g.shape(),
        steps,
        g.value(),
    )?);
    trace::node1("StridedSliceGrad", &[g], &y, || {
        let (shape, begins, steps) = (shape.to_vec(), begins.to_vec(), steps.to_vec());
        move |t: &[Tensor]| slice_scatter(&t[0], &shape, &begins, &steps)
    });
    record("StridedSliceGrad", &[g], &[&y], || {
        let spec: Vec<AxisSlice> = begins
            .iter()
            .zip(g.shape())
            .zip(steps)
            .map(|((&begin, &len), &step)| AxisSlice::Range { begin, len, step })
            .collect();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(strided_slice(&gs[0], &spec)?)])
    });
    Ok(y)
}

/// `tf.slice(x, begin, size)`: a contiguous window.
pub fn slice(x: &Tensor, begin: &[usize], size: &[usize]) -> Result<Tensor> {
    if begin.len() != x.rank() || size.len() != x.rank() {
        return Err(Error::invalid(
            "Slice",
            format!("begin and size must have {} entries", x.rank()),
        ));
    }
    for ((&b, &s), &d) in begin.iter().zip(size).zip(x.shape()) {
        if b + s > d {
            return Err(Error::invalid(
                "Slice",
                format!("window [{b}, {}) exceeds dimension {d}", b + s),
            ));
        }
    }
    let spec: Vec<AxisSlice> = begin
        .iter()
        .zip(size)
        .map(|(&begin, &len)| AxisSlice::Range {
            begin,
            len,
            step: 1,
        })
        .collect();
    strided_slice(x, &spec)
}

/// Where the positions of a [`take`] come from, which decides how a trace records it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Positions {
    /// Read from a tensor's values (gather's indices): a replay would reuse them stale, so the
    /// trace records the call as opaque, and a caller that can read them again records its own
    /// node over it.
    FromValues,
    /// Host constants of the op (pad's, from its paddings): a replay reuses them.
    Constant,
}

/// Selects positions `index` along `axis` (`None` gives 0): gather and pad lower to this.
/// d/dx = the gradient summed back into the positions it was taken from.
pub fn take(x: &Tensor, axis: usize, index: Arc<Vec<Option<usize>>>, fill: f64) -> Result<Tensor> {
    take_at(x, axis, index, fill, Positions::FromValues)
}

/// [`take`] whose positions come from `positions` (see [`Positions`]).
pub fn take_at(
    x: &Tensor,
    axis: usize,
    index: Arc<Vec<Option<usize>>>,
    fill: f64,
    positions: Positions,
) -> Result<Tensor> {
    let y = Tensor::new(kernels::take("Take", x.value(), axis, &index, fill)?);
    match positions {
        Positions::FromValues => trace::opaque("Take", &[x], &[&y]),
        Positions::Constant => trace::node1("Take", &[x], &y, || {
            let index = index.clone();
            move |t: &[Tensor]| take_at(&t[0], axis, index.clone(), fill, positions)
        }),
    }
    record("Take", &[x], &[&y], || {
        let d = x.shape()[axis];
        move |gs: &[Tensor], _: &[bool]| {
            Ok(vec![Some(take_add_at(
                &gs[0],
                axis,
                index.clone(),
                d,
                positions,
            )?)])
        }
    });
    Ok(y)
}

/// The adjoint of [`take`]: sums slices of `g` into positions `index` of an axis of length `d`.
/// d/dg = take with the same index.
pub fn take_add(
    g: &Tensor,
    axis: usize,
    index: Arc<Vec<Option<usize>>>,
    d: usize,
) -> Result<Tensor> {
    take_add_at(g, axis, index, d, Positions::FromValues)
}

/// [`take_add`] whose positions come from `positions` (see [`Positions`]).
fn take_add_at(
    g: &Tensor,
    axis: usize,
    index: Arc<Vec<Option<usize>>>,
    d: usize,
    positions: Positions,
) -> Result<Tensor> {
    let y = Tensor::new(kernels::take_add(g.value(), axis, &index, d)?);
    match positions {
        Positions::FromValues => trace::opaque("TakeGrad", &[g], &[&y]),
        Positions::Constant => trace::node1("TakeGrad", &[g], &y, || {
            let index = index.clone();
            move |t: &[Tensor]| take_add_at(&t[0], axis, index.clone(), d, positions)
        }),
    }
    record("TakeGrad", &[g], &[&y], || {
        move |gs: &[Tensor], _: &[bool]| {
            Ok(vec![Some(take_at(
                &gs[0],
                axis,
                index.clone(),
                0.0,
                positions,
            )?)])
        }
    });
    Ok(y)
}

/// `tf.fill(dims, value)`: `value` (a scalar) repeated over `dims`, as a new buffer.
pub fn fill(dims: &[usize], value: &Tensor) -> Result<Tensor> {
    if value.rank() != 0 {
        return Err(Error::invalid(
            "Fill",
            format!("value must be a scalar, received shape {:?}", value.shape()),
        ));
    }
    let filled = broadcast_to(value, dims)?;
    let y = Tensor::new(filled.value().try_contiguous("Fill")?);
    trace::node1("Fill", &[value], &y, || {
        let dims = dims.to_vec();
        move |t: &[Tensor]| fill(&dims, &t[0])
    });
    Ok(y)
}

/// `tf.gather(params, indices, axis)`: shape `params[:axis] + indices + params[axis+1:]`.
pub fn gather(params: &Tensor, indices: &Tensor, axis: i64) -> Result<Tensor> {
    const OP: &str = "GatherV2";
    let axis = norm_axis(OP, axis, params.rank())?;
    let d = params.shape()[axis];
    let index = gather_positions(OP, indices, d)?;
    let taken = Tensor::new(kernels::take("Take", params.value(), axis, &index, 0.0)?);
    // Superseded in a trace by the node recorded below, which reads `indices` again.
    trace::opaque("Take", &[params], &[&taken]);
    // The gradient reads its positions from `indices` too, so a traced backward pass replays
    // with each call's indices (the positions themselves would be stale).
    record("GatherV2", &[params], &[&taken], || {
        let indices = indices.clone();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(gather_grad(&gs[0], &indices, axis, d)?)])
    });
    let mut shape: Shape = params.shape()[..axis].into();
    shape.extend_from_slice(indices.shape());
    shape.extend_from_slice(&params.shape()[axis + 1..]);
    let y = reshape(&taken, &shape)?;
    // Replaces the `Take` node: a replay reads the positions from `indices` again.
    trace::node1(OP, &[params, indices], &y, || {
        move |t: &[Tensor]| gather(&t[0], &t[1], axis as i64)
    });
    Ok(y)
}

/// The positions `indices` names on an axis of length `d` (an error naming `op` for one out of
/// range).
fn gather_positions(
    op: &'static str,
    indices: &Tensor,
    d: usize,
) -> Result<Arc<Vec<Option<usize>>>> {
    let mut index = Vec::with_capacity(indices.len());
    for i in kernels::index_values(op, indices.value())? {
        if i < 0 || i as usize >= d {
            return Err(Error::out_of_range(
                op,
                format!("indices = {i} is not in [0, {d})"),
            ));
        }
        index.push(Some(i as usize));
    }
    Ok(Arc::new(index))
}

/// The gradient of [`gather`] along `axis` (of length `d`) for its output gradient `g` with the
/// indices flattened: `g`'s slices summed into the positions `indices` names.
/// d/dg = the gather again.
fn gather_grad(g: &Tensor, indices: &Tensor, axis: usize, d: usize) -> Result<Tensor> {
    let index = gather_positions("GatherV2Grad", indices, d)?;
    let y = Tensor::new(kernels::take_add(g.value(), axis, &index, d)?);
    trace::node1("GatherV2Grad", &[g, indices], &y, || {
        move |t: &[Tensor]| gather_grad(&t[0], &t[1], axis, d)
    });
    // The adjoint is the gather again, reading the positions from `indices` (so that a traced
    // second derivative replays with each call's indices).
    record("GatherV2Grad", &[g], &[&y], || {
        let indices = indices.clone();
        move |gs: &[Tensor], _: &[bool]| {
            let flat = reshape(&indices, &[indices.len()])?;
            Ok(vec![Some(gather(&gs[0], &flat, axis as i64)?)])
        }
    });
    Ok(y)
}

/// `tf.gather_nd`; d/dparams = scatter_nd of the gradient.
pub fn gather_nd(params: &Tensor, indices: &Tensor) -> Result<Tensor> {
    let y = Tensor::new(kernels::gather_nd(params.value(), indices.value())?);
    trace::node1("GatherNd", &[params, indices], &y, || {
        |t: &[Tensor]| gather_nd(&t[0], &t[1])
    });
    record("GatherNd", &[params, indices], &[&y], || {
        let (indices, shape): (Tensor, Shape) = (indices.clone(), params.shape().into());
        move |gs: &[Tensor], _: &[bool]| Ok(vec![Some(scatter_nd(&indices, &gs[0], &shape)?), None])
    });
    Ok(y)
}

/// `tf.scatter_nd`: zeros of `shape` plus `updates` at `indices`; d/dupdates = gather_nd.
pub fn scatter_nd(indices: &Tensor, updates: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let y = Tensor::new(kernels::scatter_nd(
        indices.value(),
        updates.value(),
        shape,
    )?);
    trace::node1("ScatterNd", &[indices, updates], &y, || {
        let shape = shape.to_vec();
        move |t: &[Tensor]| scatter_nd(&t[0], &t[1], &shape)
    });
    record("ScatterNd", &[indices, updates], &[&y], || {
        let indices = indices.clone();
        move |gs: &[Tensor], _: &[bool]| Ok(vec![None, Some(gather_nd(&gs[0], &indices)?)])
    });
    Ok(y)
}

/// Joins tensors along `axis`; each input's gradient is its window of the output gradient.
pub fn concat(xs: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = xs
        .first()
        .ok_or_else(|| Error::invalid("ConcatV2", "expected a non-empty list of tensors"))?;
    let axis = norm_axis("ConcatV2", axis, first.rank())?;
    let arrays: Vec<Array> = xs.iter().map(|t| t.value().clone()).collect();
    let y = Tensor::new(kernels::concat(&arrays, axis)?);
    let refs: Vec<&Tensor> = xs.iter().collect();
    trace::node1("ConcatV2", &refs, &y, || {
        move |t: &[Tensor]| concat(t, axis as i64)
    });
    record("ConcatV2", &refs, &[&y], || {
        let sizes: Vec<usize> = xs.iter().map(|t| t.shape()[axis]).collect();
        move |gs: &[Tensor], needs: &[bool]| {
            let parts = split(&gs[0], &sizes, axis as i64)?;
            Ok(parts
                .into_iter()
                .zip(needs)
                .map(|(p, &n)| n.then_some(p))
                .collect())
        }
    });
    Ok(y)
}

/// Splits `x` into pieces of `sizes` along `axis` (views); d/dx = concat of the gradients.
pub fn split(x: &Tensor, sizes: &[usize], axis: i64) -> Result<Vec<Tensor>> {
    let axis = norm_axis("Split", axis, x.rank())?;
    let total = sizes.iter().try_fold(0usize, |acc, &n| acc.checked_add(n));
    if total != Some(x.shape()[axis]) {
        return Err(Error::invalid(
            "Split",
            format!(
                "sizes {sizes:?} do not sum to dimension {} of axis {axis}",
                x.shape()[axis]
            ),
        ));
    }
    let mut begin = 0;
    let mut out = Vec::with_capacity(sizes.len());
    for &n in sizes {
        let spec: Vec<AxisSlice> = (0..x.rank())
            .map(|a| {
                let (b, len) = if a == axis {
                    (begin, n)
                } else {
                    (0, x.shape()[a])
                };
                AxisSlice::Range {
                    begin: b,
                    len,
                    step: 1,
                }
            })
            .collect();
        out.push(strided_slice(x, &spec)?);
        begin += n;
    }
    Ok(out)
}

/// `tf.split(x, num)` (TensorFlow's `Split`): `num` equal parts along `axis`.
pub fn split_num(x: &Tensor, num: i64, axis: i64) -> Result<Vec<Tensor>> {
    const OP: &str = "Split";
    let ax = norm_axis(OP, axis, x.rank())?;
    let d = x.shape()[ax];
    // num_split is an int32 attr of at least 1. More parts than elements is only possible for
    // an empty axis, where each part is still a tensor: a count past 2**16 is refused there.
    let most = d.max(1 << 16).min(i32::MAX as usize);
    let n = usize::try_from(num)
        .ok()
        .filter(|&n| (1..=most).contains(&n));
    let Some(n) = n else {
        return Err(Error::invalid(
            OP,
            format!("num_split must be in [1, {most}] for dimension {d}, received {num}"),
        ));
    };
    if !d.is_multiple_of(n) {
        return Err(Error::invalid(
            OP,
            format!("dimension {d} of axis {axis} is not divisible by num_split={n}"),
        ));
    }
    split(x, &vec![d / n; n], axis)
}

/// `tf.split(x, size_splits)` (TensorFlow's `SplitV`): parts of the given sizes along `axis`;
/// one size may be -1, inferred from the others.
pub fn split_v(x: &Tensor, size_splits: &[i64], axis: i64) -> Result<Vec<Tensor>> {
    const OP: &str = "SplitV";
    let ax = norm_axis(OP, axis, x.rank())?;
    let d = x.shape()[ax];
    let known = size_splits
        .iter()
        .filter(|&&s| s >= 0)
        .try_fold(0i64, |acc, &s| acc.checked_add(s))
        .filter(|&k| k <= d as i64);
    let unknown = size_splits.iter().filter(|&&s| s < 0).count();
    let valid = unknown <= 1 && size_splits.iter().all(|&s| s >= -1);
    let (Some(known), true) = (known, valid) else {
        return Err(Error::invalid(
            OP,
            format!(
                "size_splits must be sizes >= 0 (at most one -1) that fit in dimension {d} \
                 of axis {axis}, received {size_splits:?}"
            ),
        ));
    };
    let sizes: Vec<usize> = size_splits
        .iter()
        .map(|&s| {
            if s < 0 {
                (d as i64 - known) as usize
            } else {
                s as usize
            }
        })
        .collect();
    split(x, &sizes, axis)
}

/// Stacks equal-shaped tensors along a new `axis`.
pub fn stack(xs: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = xs
        .first()
        .ok_or_else(|| Error::invalid("Pack", "expected a non-empty list of tensors"))?;
    let axis = norm_axis("Pack", axis, first.rank() + 1)?;
    let expanded = xs
        .iter()
        .map(|t| {
            if t.shape() != first.shape() {
                return Err(Error::invalid(
                    "Pack",
                    format!(
                        "shapes must be equal, received {:?} and {:?}",
                        first.shape(),
                        t.shape()
                    ),
                ));
            }
            expand_dims(t, axis as i64)
        })
        .collect::<Result<Vec<_>>>()?;
    concat(&expanded, axis as i64)
}

/// Unpacks `x` along `axis` into views; `num`, when given, must be that axis's size.
pub fn unstack(x: &Tensor, num: Option<i64>, axis: i64) -> Result<Vec<Tensor>> {
    let axis = norm_axis("Unpack", axis, x.rank())?;
    if let Some(n) = num {
        if n < 0 || n as usize != x.shape()[axis] {
            return Err(Error::invalid(
                "Unpack",
                format!(
                    "num={n} must equal dimension {} of axis {axis} (shape {:?})",
                    x.shape()[axis],
                    x.shape()
                ),
            ));
        }
    }
    (0..x.shape()[axis])
        .map(|i| {
            let spec: Vec<AxisSlice> = (0..x.rank())
                .map(|a| {
                    if a == axis {
                        AxisSlice::Index(i)
                    } else {
                        AxisSlice::Range {
                            begin: 0,
                            len: x.shape()[a],
                            step: 1,
                        }
                    }
                })
                .collect();
            strided_slice(x, &spec)
        })
        .collect()
}

/// Inserts an axis of size 1 at `axis` (negative counts from the end of the result).
pub fn expand_dims(x: &Tensor, axis: i64) -> Result<Tensor> {
    let axis = norm_axis("ExpandDims", axis, x.rank() + 1)?;
    let mut shape: Shape = x.shape().into();
    shape.insert(axis, 1);
    reshape(x, &shape)
}

/// Removes size-1 axes (all of them when `axes` is `None`).
pub fn squeeze(x: &Tensor, axes: Option<&[i64]>) -> Result<Tensor> {
    let mut drop = vec![false; x.rank()];
    match axes {
        None => drop
            .iter_mut()
            .zip(x.shape())
            .for_each(|(d, &n)| *d = n == 1),
        Some(axes) => {
            for &a in axes {
                let a = norm_axis("Squeeze", a, x.rank())?;
                if x.shape()[a] != 1 {
                    return Err(Error::invalid(
                        "Squeeze",
                        format!(
                            "can not squeeze dim[{a}], expected a dimension of 1, got {}",
                            x.shape()[a]
                        ),
                    ));
                }
                drop[a] = true;
            }
        }
    }
    let shape: Shape = x
        .shape()
        .iter()
        .zip(&drop)
        .filter(|(_, &d)| !d)
        .map(|(&n, _)| n)
        .collect();
    reshape(x, &shape)
}

/// Repeats `x` `multiples[i]` times along axis i; d/dx = the repeats summed.
pub fn tile(x: &Tensor, multiples: &[usize]) -> Result<Tensor> {
    let y = Tensor::new(kernels::tile(x.value(), multiples)?);
    trace::node1("Tile", &[x], &y, || {
        let multiples = multiples.to_vec();
        move |t: &[Tensor]| tile(&t[0], &multiples)
    });
    record("Tile", &[x], &[&y], || {
        let mut split_shape = Shape::new();
        for (&m, &d) in multiples.iter().zip(x.shape()) {
            split_shape.extend([m, d]);
        }
        let axes: Vec<i64> = (0..multiples.len() as i64).map(|i| 2 * i).collect();
        let s: Shape = x.shape().into();
        move |gs: &[Tensor], _: &[bool]| {
            let g = reduce_sum(&reshape(&gs[0], &split_shape)?, Some(&axes), false)?;
            Ok(vec![Some(reshape(&g, &s)?)])
        }
    });
    Ok(y)
}

/// `tf.pad`'s `paddings` argument: an integer tensor of shape `[rank, 2]`, no entry negative,
/// read as `(before, after)` per axis.
pub fn paddings(x: &Tensor, paddings: &Tensor) -> Result<Vec<(usize, usize)>> {
    const OP: &str = "Pad";
    if !paddings.dtype().is_int() {
        return Err(Error::unsupported(
            OP,
            paddings.dtype(),
            "int32 or int64 paddings",
        ));
    }
    if paddings.shape() != [x.rank(), 2] {
        return Err(Error::invalid(
            OP,
            format!(
                "paddings must have shape [{}, 2] (the input's rank, 2), received shape {:?}",
                x.rank(),
                paddings.shape()
            ),
        ));
    }
    let flat = kernels::cast(paddings.value(), DType::I64)?.to_vec::<i64>();
    if flat.iter().any(|&p| p < 0) {
        return Err(Error::invalid(
            OP,
            format!("paddings must be non-negative, received {flat:?}"),
        ));
    }
    Ok(flat
        .chunks(2)
        .map(|p| (p[0] as usize, p[1] as usize))
        .collect())
}

/// `tf.pad` in CONSTANT, REFLECT or SYMMETRIC mode; lowered to one `take` per axis.
pub fn pad(x: &Tensor, paddings: &[(usize, usize)], mode: PadMode, value: f64) -> Result<Tensor> {
    const OP: &str = "PadV2";
    if paddings.len() != x.rank() {
        return Err(Error::invalid(
            OP,
            format!(
                "paddings must have {} rows (the rank), received {}",
                x.rank(),
                paddings.len()
            ),
        ));
    }
    // The padded shape is checked before any index list as long as an axis is built.
    let padded: Shape = x
        .shape()
        .iter()
        .zip(paddings)
        .map(|(&d, &(b, a))| d.saturating_add(b).saturating_add(a))
        .collect();
    ferrotape_core::check_alloc(OP, x.dtype(), &padded)?;
    let mut out = x.clone();
    for (axis, &(before, after)) in paddings.iter().enumerate() {
        if before == 0 && after == 0 {
            continue;
        }
        let index = kernels::pad_index(x.shape()[axis], before, after, mode)?;
        // The positions come from the paddings, host constants a replay reuses.
        out = take_at(&out, axis, Arc::new(index), value, Positions::Constant)?;
    }
    Ok(out)
}

/// `tf.one_hot`; no gradient.
pub fn one_hot(
    indices: &Tensor,
    depth: i64,
    on: f64,
    off: f64,
    axis: i64,
    dtype: DType,
) -> Result<Tensor> {
    let (depth_arg, axis_arg) = (depth, axis);
    let depth = kernels::count("OneHot", "depth", depth)?;
    let axis = if axis == -1 {
        indices.rank()
    } else {
        norm_axis("OneHot", axis, indices.rank() + 1)?
    };
    let y = Tensor::new(kernels::one_hot(
        indices.value(),
        depth,
        on,
        off,
        axis,
        dtype,
    )?);
    trace::node1("OneHot", &[indices], &y, || {
        move |t: &[Tensor]| one_hot(&t[0], depth_arg, on, off, axis_arg, dtype)
    });
    Ok(y)
}
