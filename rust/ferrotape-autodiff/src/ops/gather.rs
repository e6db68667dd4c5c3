//! TensorFlow's `batch_dims` for `tf.gather` and `tf.gather_nd`: batch `k` of the indices picks
//! from batch `k` of the params. Both lower to the unbatched ops by folding the batch axes into
//! the gathered axis and offsetting each batch's indices by its start, so the derivatives are
//! those of `gather`/`gather_nd`, `reshape` and `transpose` (every order follows from them).

use ferrotape_core::kernels;
use ferrotape_core::{Array, DType, Error, Result, Shape};

use super::{add, cast, gather, gather_nd, norm_axis, reshape, transpose};
use crate::tensor::Tensor;
use crate::trace;

/// `tf.gather(params, indices, axis, batch_dims)`: with `B = params.shape[:batch_dims]`, shape
/// `B + params[batch_dims:axis] + indices[batch_dims:] + params[axis+1:]`, where batch `k`
/// gathers `params[k]` along `axis` at `indices[k]`. `axis` defaults to `batch_dims`; a
/// negative `batch_dims` counts from the end of `indices`' axes. d/dparams = the gradient
/// summed back into the positions it was taken from.
pub fn gather_v2(
    params: &Tensor,
    indices: &Tensor,
    axis: Option<i64>,
    batch_dims: i64,
) -> Result<Tensor> {
    const OP: &str = "GatherV2";
    let axis = axis.unwrap_or(batch_dims);
    // `tf.gather` sends an axis of 0 to the unbatched read and drops `batch_dims` there.
    if axis == 0 || batch_dims == 0 {
        return gather(params, indices, axis);
    }
    let (rank_p, rank_i) = (params.rank() as i64, indices.rank() as i64);
    if batch_dims < -rank_i || batch_dims > rank_i {
        return Err(Error::invalid(
            OP,
            format!("Expected batch_dims in the range [-{rank_i}, {rank_i}], but got {batch_dims}"),
        ));
    }
    let b = if batch_dims < 0 {
        batch_dims + rank_i
    } else {
        batch_dims
    } as usize;
    let axis = norm_axis(OP, axis, params.rank())?;
    if b as i64 >= rank_p {
        return Err(Error::invalid(
            OP,
            format!("batch_dims ({b}) must be less than rank(params) ({rank_p})."),
        ));
    }
    if axis < b {
        return Err(Error::invalid(
            OP,
            format!("batch_dims ({b}) must be less than or equal to axis ({axis})."),
        ));
    }
    check_batch_shapes(OP, params, indices, b)?;
    if b == 0 {
        return gather(params, indices, axis as i64);
    }
    let (p, i) = (params.shape(), indices.shape());
    let batches: usize = p[..b].iter().product();
    let (d, per_batch): (usize, usize) = (p[axis], i[b..].iter().product());
    // Params as [batch * d] + params[b:axis] + params[axis+1:]: batch k's row j sits at k*d + j.
    let mut perm: Vec<usize> = (0..b).collect();
    perm.push(axis);
    perm.extend((b..p.len()).filter(|&a| a != axis));
    let moved = transpose_unless_identity(params, &perm)?;
    let mut flat: Shape = Shape::from_slice(&[batches * d]);
    flat.extend(perm[b + 1..].iter().map(|&a| p[a]));
    let flat_params = reshape(&moved, &flat)?;

    let values = kernels::index_values(OP, indices.value())?;
    for (n, &v) in values.iter().enumerate() {
        if v < 0 || v as usize >= d {
            return Err(Error::invalid(
                OP,
                format!("indices{} = {v} is not in [0, {d})", position(i, n)),
            ));
        }
    }
    // Batch k's rows start at k * d: the positions in the flattened params are the indices plus
    // those offsets, computed with ops from `indices`, so that the gather below (and its
    // gradient) read them from the indices again when a trace replays.
    let offsets: Vec<i64> = (0..values.len())
        .map(|n| (n / per_batch.max(1) * d) as i64)
        .collect();
    let offsets = Tensor::new(Array::from_vec(offsets, &[values.len()])?);
    trace::constant(&offsets);
    let flat_indices = reshape(&cast(indices, DType::I64)?, &[values.len()])?;
    let taken = gather(&flat_params, &add(&flat_indices, &offsets)?, 0)?;
    // [batch * per_batch] + mid + tail -> B + indices[b:] + mid + tail -> B + mid + indices[b:] + tail.
    let mid = axis - b;
    let mut unflat: Shape = p[..b].into();
    unflat.extend_from_slice(&i[b..]);
    unflat.extend_from_slice(&flat[1..]);
    let unflat_taken = reshape(&taken, &unflat)?;
    let k = i.len() - b;
    let mut back: Vec<usize> = (0..b).collect();
    back.extend(b + k..b + k + mid);
    back.extend(b..b + k);
    back.extend(b + k + mid..unflat.len());
    let y = transpose_unless_identity(&unflat_taken, &back)?;
    // Replaces the `Take` node: a replay reads the positions from `indices` again.
    trace::node1(OP, &[params, indices], &y, || {
        move |t: &[Tensor]| gather_v2(&t[0], &t[1], Some(axis as i64), b as i64)
    });
    Ok(y)
}

/// `tf.gather_nd(params, indices, batch_dims)`: with `B = params.shape[:batch_dims]`, shape
/// `B + indices[batch_dims:-1] + params[batch_dims + indices.shape[-1]:]`, where batch `k`
/// reads `params[k]` at the coordinates `indices[k]`. d/dparams = scatter_nd of the gradient.
pub fn gather_nd_v2(params: &Tensor, indices: &Tensor, batch_dims: i64) -> Result<Tensor> {
    const OP: &str = "GatherNd";
    if batch_dims == 0 {
        return gather_nd(params, indices);
    }
    let rank_i = indices.rank();
    if batch_dims < 0 {
        return Err(Error::invalid(
            OP,
            "tf.gather_nd does not allow negative batch_dims.",
        ));
    }
    let b = batch_dims as usize;
    if b >= rank_i {
        return Err(Error::invalid(
            OP,
            format!("Argument `batch_dims` = {b} must be less than rank(`indices`) = {rank_i}"),
        ));
    }
    if b >= params.rank() {
        return Err(Error::invalid(
            OP,
            format!(
                "Argument `batch_dims` = {b} must be less than rank(`params`) = {}",
                params.rank()
            ),
        ));
    }
    check_batch_shapes(OP, params, indices, b)?;
    let (p, i) = (params.shape(), indices.shape());
    let batches: usize = p[..b].iter().product();
    let depth = i[rank_i - 1];
    let per_batch: usize = i[b..rank_i - 1].iter().product();
    let mut flat: Shape = Shape::from_slice(&[batches]);
    flat.extend_from_slice(&p[b..]);
    let flat_params = reshape(params, &flat)?;
    // Each coordinate gains its batch number in front: [k, i_1, ..., i_depth].
    let values = kernels::index_values(OP, indices.value())?;
    let mut coords = Vec::with_capacity(batches * per_batch * (depth + 1));
    for n in 0..batches * per_batch {
        coords.push((n / per_batch) as i64);
        coords.extend_from_slice(&values[n * depth..(n + 1) * depth]);
    }
    let batched = Tensor::new(Array::from_vec(coords, &[batches * per_batch, depth + 1])?);
    // A constant of a trace; the node recorded below replaces what is built from it.
    trace::constant(&batched);
    let taken = gather_nd(&flat_params, &batched)?;
    let mut shape: Shape = i[..rank_i - 1].into();
    shape.extend_from_slice(&p[(b + depth).min(p.len())..]);
    let y = reshape(&taken, &shape)?;
    // Replaces the inner `GatherNd`, whose coordinates were made on the host from `indices`.
    trace::node1(OP, &[params, indices], &y, || {
        move |t: &[Tensor]| gather_nd_v2(&t[0], &t[1], b as i64)
    });
    Ok(y)
}

/// The leading `b` axes of `params` and `indices` must agree (TensorFlow's message).
fn check_batch_shapes(op: &'static str, params: &Tensor, indices: &Tensor, b: usize) -> Result<()> {
    for a in 0..b {
        let (p, i) = (params.shape()[a], indices.shape()[a]);
        if p != i {
            return Err(Error::invalid(
                op,
                format!("params.shape[{a}]: {p} should be equal to indices.shape[{a}]: {i}"),
            ));
        }
    }
    Ok(())
}

fn transpose_unless_identity(x: &Tensor, perm: &[usize]) -> Result<Tensor> {
    if perm.iter().enumerate().all(|(a, &p)| a == p) {
        Ok(x.clone())
    } else {
        transpose(x, perm)
    }
}

/// `[1,1]`: the multi-index of flat position `n` in `shape`, as TensorFlow prints it.
fn position(shape: &[usize], mut n: usize) -> String {
    let mut at = vec![0; shape.len()];
    for (a, &d) in shape.iter().enumerate().rev() {
        at[a] = n % d.max(1);
        n /= d.max(1);
    }
    let parts: Vec<String> = at.iter().map(|v| v.to_string()).collect();
    format!("[{}]", parts.join(","))
}
