//! `ft`'s array ops: shapes, slicing, joining, gathers and scatters, and tensor creation.

use ferrotape_autodiff::core::kernels::{self, PadMode};
use ferrotape_autodiff::core::Array;
use ferrotape_autodiff::ops::{self, resolve_shape};
use ferrotape_autodiff::{DType, Tensor};
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::convert::{
    as_tensor, dims_of, host_constant, int_of, ints_of, shape_of, tensor_list, to_tensor, Flag,
    Given, Int, Text,
};
use crate::dtype::{dtype_of, optional_dtype};
use crate::errors::{self, in_argument, Raise};
use crate::registry::{self, functions};
use crate::tensor::{wrap, PyTensor};

fn wrap_all(ts: Vec<Tensor>) -> Vec<PyTensor> {
    ts.into_iter().map(PyTensor::new).collect()
}

#[doc = op_doc!(reshape)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.reshape(ft.range(6), [2, -1]).numpy()
/// array([[0, 1, 2],
///        [3, 4, 5]], dtype=int32)
///
/// Args:
///     tensor: A tensor, or a value convertible to one.
///     shape: The new shape, a list of ints; one entry may be -1 (inferred).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape` with `tensor`'s elements and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (tensor, shape, name=None))]
fn reshape(
    tensor: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(tensor, None)?;
    let shape = shape_of(shape).map_err(in_argument("shape"))?;
    // Checked here for the binding's messages; the op resolves it again (at every replay of
    // a trace, so that a -1 follows the input's size there).
    resolve_shape("Reshape", t.len(), &shape).raise()?;
    wrap(ops::reshape_request(&t, &shape))
}

#[doc = op_doc!(transpose)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.transpose(ft.constant([[1, 2, 3], [4, 5, 6]])).numpy()
/// array([[1, 4],
///        [2, 5],
///        [3, 6]], dtype=int32)
///
/// Args:
///     a: A tensor, or a value convertible to one.
///     perm: The permutation of the axes; by default the axes reversed.
///     conjugate: Ignored (real dtypes only).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     `a` with its axes permuted: axis i of the result is axis `perm[i]` of `a`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (a, perm=None, conjugate=Flag(false), name=None))]
fn transpose(
    a: &Bound<'_, PyAny>,
    perm: Option<&Bound<'_, PyAny>>,
    conjugate: Flag,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (conjugate, name);
    let t = to_tensor(a, None)?;
    let perm: Vec<usize> = match perm {
        Some(p) if !p.is_none() => ints_of(p)
            .map_err(in_argument("perm"))?
            .into_iter()
            .map(|i| {
                if i < 0 {
                    (i + t.rank() as i64) as usize
                } else {
                    i as usize
                }
            })
            .collect(),
        _ => (0..t.rank()).rev().collect(),
    };
    wrap(ops::transpose(&t, &perm))
}

#[doc = op_doc!(expand_dims)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.expand_dims(ft.constant([1.0, 2.0]), axis=-1).shape
/// TensorShape([2, 1])
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     axis: Where the new axis goes, in `[-rank - 1, rank]`.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     `input` with one more axis, of size 1.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, axis, name=None))]
fn expand_dims(
    input: &Bound<'_, PyAny>,
    axis: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let axis = int_of(axis).map_err(in_argument("axis"))?;
    wrap(ops::expand_dims(&to_tensor(input, None)?, axis))
}

#[doc = op_doc!(squeeze)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.squeeze(ft.zeros([1, 3, 1])).shape
/// TensorShape([3])
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     axis: An int or list of ints, the size-1 axes to remove; all of them when None.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     `input` without those axes.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, axis=None, name=None))]
fn squeeze(
    input: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let axes = crate::convert::axes_of(axis).map_err(in_argument("axis"))?;
    wrap(ops::squeeze(&to_tensor(input, None)?, axes.as_deref()))
}

#[doc = op_doc!(concat)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.concat([[[1, 2]], [[3, 4]]], axis=0).numpy()
/// array([[1, 2],
///        [3, 4]], dtype=int32)
///
/// Args:
///     values: A list of tensors of one dtype and rank, equal outside `axis`. A single
///         tensor, alone or in a list of one, comes back unchanged (as in TensorFlow).
///     axis: The axis to join along (negative counts from the end).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The joined tensor.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (values, axis, name=None))]
fn concat(
    values: &Bound<'_, PyAny>,
    axis: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let axis = int_of(axis).map_err(in_argument("axis"))?;
    // As TensorFlow: a value that is not a list or tuple (a tensor, a numpy array) is a list
    // of one, and a list of one comes back as it is, its axis never checked against its rank.
    if !(values.is_instance_of::<PyList>() || values.is_instance_of::<PyTuple>()) {
        return Ok(PyTensor::new(to_tensor(values, None)?));
    }
    let mut parts = tensor_list("concat", values)?;
    if parts.len() == 1 {
        return Ok(PyTensor::new(parts.remove(0)));
    }
    wrap(ops::concat(&parts, axis))
}

#[doc = op_doc!(stack)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.stack([[1, 2], [3, 4]], axis=1).numpy()
/// array([[1, 3],
///        [2, 4]], dtype=int32)
///
/// Args:
///     values: A list of tensors of one shape and dtype.
///     axis: Where the new axis goes (default 0).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of rank one more than the inputs'.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (values, axis=Int(0), name=None))]
fn stack(
    values: &Bound<'_, PyAny>,
    axis: Int,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = axis.0;
    let _ = name;
    wrap(ops::stack(&tensor_list("stack", values)?, axis))
}

#[doc = op_doc!(unstack)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> [t.numpy().tolist() for t in ft.unstack(ft.constant([[1, 2], [3, 4]]))]
/// [[1, 2], [3, 4]]
///
/// Args:
///     value: A tensor of rank at least 1.
///     num: The size of `axis`, checked when given.
///     axis: The axis to unpack along (default 0).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A list of `value.shape[axis]` tensors, each without `axis`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (value, num=None, axis=Int(0), name=None))]
fn unstack(
    value: &Bound<'_, PyAny>,
    num: Option<Int>,
    axis: Int,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTensor>> {
    let num = num.map(|v| v.0);
    let axis = axis.0;
    let _ = name;
    let parts = ops::unstack(&to_tensor(value, None)?, num, axis).raise()?;
    Ok(wrap_all(parts))
}

#[doc = op_doc!(split)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> [t.numpy().tolist() for t in ft.split(ft.range(5), [2, 3])]
/// [[0, 1], [2, 3, 4]]
///
/// Args:
///     value: A tensor, or a value convertible to one.
///     num_or_size_splits: The number of equal pieces, or a list of their sizes (one may be
///         -1).
///     axis: The axis to split (default 0).
///     num: Ignored (graph mode's count of outputs).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A list of tensors.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (value, num_or_size_splits, axis=Int(0), num=None, name=None))]
fn split(
    value: &Bound<'_, PyAny>,
    num_or_size_splits: &Bound<'_, PyAny>,
    axis: Int,
    num: Option<Int>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTensor>> {
    let axis = axis.0;
    // `num` only tells graph mode how many parts to expect; eager TensorFlow ignores it.
    let _ = (num, name);
    let t = to_tensor(value, None)?;
    let parts = match int_of(num_or_size_splits) {
        Ok(n) => ops::split_num(&t, n, axis),
        Err(_) => {
            let sizes = ints_of(num_or_size_splits).map_err(in_argument("num_or_size_splits"))?;
            ops::split_v(&t, &sizes, axis)
        }
    };
    Ok(wrap_all(parts.raise()?))
}

#[doc = op_doc!(tile)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.tile(ft.constant([[1, 2]]), [2, 2]).numpy()
/// array([[1, 2, 1, 2],
///        [1, 2, 1, 2]], dtype=int32)
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     multiples: A list of ints, the repeats per axis (length `rank(input)`).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor whose axis i has size `input.shape[i] * multiples[i]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, multiples, name=None))]
fn tile(
    input: &Bound<'_, PyAny>,
    multiples: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::tile(
        &to_tensor(input, None)?,
        &dims_of("Tile", multiples)?,
    ))
}

#[doc = op_doc!(pad)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.pad(ft.constant([[1, 2]]), [[0, 0], [1, 1]]).numpy()
/// array([[0, 1, 2, 0]], dtype=int32)
///
/// Args:
///     tensor: A tensor, or a value convertible to one.
///     paddings: An int tensor of shape `[rank, 2]`: how many values to add before and after
///         each axis.
///     mode: `"CONSTANT"`, `"REFLECT"` or `"SYMMETRIC"` (any case).
///     constant_values: The value padded with in CONSTANT mode.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The padded tensor, of `tensor`'s dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (tensor, paddings, mode=Text("CONSTANT".into()), constant_values=Given(None), name=None))]
fn pad(
    tensor: &Bound<'_, PyAny>,
    paddings: &Bound<'_, PyAny>,
    mode: Text,
    constant_values: Given<'_>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(tensor, None)?;
    let pairs = ops::paddings(&t, &to_tensor(paddings, None)?).raise()?;
    let mode = PadMode::from_name(&mode.0).raise()?;
    let constant = match constant_values.0 {
        Some(v) => scalar_attribute("PadV2", "constant_values", &v, t.dtype())
            .map_err(in_argument("constant_values"))?,
        None => 0.0,
    };
    wrap(ops::pad(&t, &pairs, mode, constant))
}

/// A scalar argument the kernel takes as an attribute of `dtype` (pad's `constant_values`,
/// one-hot's values), converted as TensorFlow converts it: a Python number to `dtype` (ints
/// wrap to its bits, a float for an integer dtype is a TypeError), a tensor only of `dtype`
/// itself; anything but a scalar is refused.
fn scalar_attribute(
    op: &'static str,
    argument: &str,
    value: &Bound<'_, PyAny>,
    dtype: DType,
) -> PyResult<f64> {
    let t = match as_tensor(value) {
        Some(t) if t.dtype() != dtype => {
            return Err(errors::invalid_argument(
                op,
                format!(
                    "`{argument}` was expected to be a {} tensor but is a {} tensor",
                    dtype.name(),
                    t.dtype().name()
                ),
            ))
        }
        Some(t) => {
            crate::function::note_value_read(value.py(), &t, "a scalar attribute of an op");
            t
        }
        None => to_tensor(value, Some(dtype))?,
    };
    if t.rank() != 0 {
        return Err(errors::invalid_argument(
            op,
            format!(
                "`{argument}` must be a scalar, but got shape {:?}",
                t.shape()
            ),
        ));
    }
    // The kernels take the value as f64 and cast it back to `dtype`: an integer travels as its
    // int64 bits (uint64's 2**64 - 2 as -2), which that cast wraps back.
    let value = match dtype.is_int() {
        true => kernels::cast(t.value(), DType::I64).raise()?,
        false => t.value().clone(),
    };
    Ok(value.scalar_f64().unwrap_or(0.0))
}

#[doc = op_doc!(broadcast_to)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.broadcast_to(ft.constant([1, 2]), [2, 2]).numpy()
/// array([[1, 2],
///        [1, 2]], dtype=int32)
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     shape: The target shape, broadcast-compatible with `input`'s.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, shape, name=None))]
fn broadcast_to(
    input: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::broadcast_to(
        &to_tensor(input, None)?,
        &dims_of("BroadcastTo", shape)?,
    ))
}

/// `tf.slice(input, begin, size)`; a size of -1 takes the rest of the axis.
#[doc = ""]
#[doc = op_doc!(slice)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.slice(ft.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]).numpy()
/// array([[2, 3],
///        [5, 6]], dtype=int32)
///
/// Args:
///     input_: A tensor, or a value convertible to one.
///     begin: A list of ints, the start on each axis.
///     size: A list of ints, the length on each axis (-1: to the end).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The slice, of `input_`'s dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input_, begin, size, name=None))]
fn slice(
    input_: &Bound<'_, PyAny>,
    begin: &Bound<'_, PyAny>,
    size: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(input_, None)?;
    let begin = dims_of("Slice", begin)?;
    let size: Vec<usize> = ints_of(size)
        .map_err(in_argument("size"))?
        .iter()
        .zip(t.shape().iter().zip(&begin))
        .map(|(&s, (&d, &b))| {
            if s < 0 {
                d.saturating_sub(b)
            } else {
                s as usize
            }
        })
        .collect();
    wrap(ops::slice(&t, &begin, &size))
}

#[doc = op_doc!(gather_v2)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.gather(ft.constant([10, 20, 30]), [2, 0]).numpy()
/// array([30, 10], dtype=int32)
///
/// Args:
///     params: The tensor to gather from.
///     indices: An int tensor of indices into `params`' `axis`.
///     validate_indices: Ignored (indices are always checked).
///     axis: The axis to gather along (default `batch_dims`).
///     batch_dims: How many leading axes of `params` and `indices` are batch axes: batch `k`
///         of `indices` picks from batch `k` of `params` (negative counts from the end of
///         `indices`' axes; as in TensorFlow, an explicit `axis=0` ignores it).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of shape `params.shape[:axis] + indices.shape[batch_dims:] +
///     params.shape[axis + 1:]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (params, indices, validate_indices=None, axis=None, batch_dims=Int(0), name=None))]
fn gather(
    params: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    validate_indices: Option<&Bound<'_, PyAny>>,
    axis: Option<&Bound<'_, PyAny>>,
    batch_dims: Int,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = (validate_indices, name);
    let axis = match axis {
        Some(a) if !a.is_none() => Some(int_of(a).map_err(in_argument("axis"))?),
        _ => None,
    };
    wrap(ops::gather_v2(
        &to_tensor(params, None)?,
        &to_tensor(indices, None)?,
        axis,
        batch_dims.0,
    ))
}

#[doc = op_doc!(gather_nd_v2)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.gather_nd(ft.constant([[1, 2], [3, 4]]), [[0, 1], [1, 0]]).numpy()
/// array([2, 3], dtype=int32)
///
/// Args:
///     params: The tensor to gather from.
///     indices: An int tensor whose last axis indexes the leading axes of `params`.
///     batch_dims: How many leading axes of `params` and `indices` are batch axes: batch `k`
///         of `indices` reads batch `k` of `params` (not negative, less than `indices`' rank).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of shape `indices.shape[:-1] + params.shape[batch_dims + indices.shape[-1]:]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (params, indices, batch_dims=Int(0), name=None))]
fn gather_nd(
    params: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    batch_dims: Int,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::gather_nd_v2(
        &to_tensor(params, None)?,
        &to_tensor(indices, None)?,
        batch_dims.0,
    ))
}

#[doc = op_doc!(scatter_nd)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.scatter_nd([[1], [3]], ft.constant([5.0, 7.0]), [4]).numpy()
/// array([0., 5., 0., 7.], dtype=float32)
///
/// Args:
///     indices: An int tensor whose last axis indexes the leading axes of the result.
///     updates: The values to add, of shape `indices.shape[:-1] + shape[indices.shape[-1]:]`.
///     shape: The shape of the result.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `shape` and `updates`' dtype: zeros plus `updates` summed at `indices`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (indices, updates, shape, name=None))]
fn scatter_nd(
    indices: &Bound<'_, PyAny>,
    updates: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::scatter_nd(
        &to_tensor(indices, None)?,
        &to_tensor(updates, None)?,
        &dims_of("ScatterNd", shape)?,
    ))
}

#[doc = op_doc!(one_hot)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.one_hot([0, 2], depth=3).numpy()
/// array([[1., 0., 0.],
///        [0., 0., 1.]], dtype=float32)
///
/// Args:
///     indices: An int tensor of class indices (out-of-range ones give all off values).
///     depth: The number of classes.
///     on_value: The value at the index (default 1).
///     off_value: The value elsewhere (default 0).
///     axis: Where the new axis of size `depth` goes (default -1, last).
///     dtype: The result's dtype; by default `on_value`'s or `off_value`'s, else float32.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `indices`' shape with an axis of size `depth` added.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None))]
#[allow(clippy::too_many_arguments)]
fn one_hot(
    indices: &Bound<'_, PyAny>,
    depth: &Bound<'_, PyAny>,
    on_value: Option<&Bound<'_, PyAny>>,
    off_value: Option<&Bound<'_, PyAny>>,
    axis: Option<Int>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = axis.map(|v| v.0);
    let _ = name;
    let depth = int_of(depth).map_err(in_argument("depth"))?;
    let (on_value, off_value) = (
        on_value.filter(|v| !v.is_none()),
        off_value.filter(|v| !v.is_none()),
    );
    // TensorFlow's rule: with `dtype`, Python values convert to it and tensors must have it;
    // without, each converts alone and the two must agree; float32 when neither is given.
    let dtype = match optional_dtype(dtype)? {
        Some(d) => {
            for (argument, value) in [("on_value", on_value), ("off_value", off_value)] {
                if let Some(t) = value.and_then(as_tensor).filter(|t| t.dtype() != d) {
                    return Err(errors::type_error(format!(
                        "dtype <dtype: '{}'> of {argument} does not match dtype parameter \
                         <dtype: '{}'>",
                        t.dtype().name(),
                        d.name()
                    )));
                }
            }
            d
        }
        None => {
            let dtype_of = |v: Option<&Bound<'_, PyAny>>| {
                v.map(|v| to_tensor(v, None).map(|t| t.dtype())).transpose()
            };
            match (dtype_of(on_value)?, dtype_of(off_value)?) {
                (Some(on), Some(off)) if on != off => {
                    return Err(errors::type_error(format!(
                        "dtype <dtype: '{}'> of on_value does not match dtype <dtype: '{}'> of \
                         off_value",
                        on.name(),
                        off.name()
                    )))
                }
                (Some(d), _) | (None, Some(d)) => d,
                (None, None) => DType::F32,
            }
        }
    };
    let value = |argument, v: Option<&Bound<'_, PyAny>>, default: f64| {
        v.map_or(Ok(default), |v| {
            scalar_attribute("OneHot", argument, v, dtype)
        })
    };
    wrap(ops::one_hot(
        &to_tensor(indices, None)?,
        depth,
        value("on_value", on_value, 1.0)?,
        value("off_value", off_value, 0.0)?,
        axis.unwrap_or(-1),
        dtype,
    ))
}

fn filled(
    op: &'static str,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    value: f64,
) -> PyResult<PyTensor> {
    let d = optional_dtype(dtype)?.unwrap_or(DType::F32);
    let a = Array::full(op, d, &dims_of(op, shape)?, value).raise()?;
    Ok(PyTensor::new(host_constant(a)))
}

/// A tensor of `shape` filled with 0 (float32 unless `dtype`); no gradient.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.zeros([2, 3], dtype=ft.int32).numpy()
/// array([[0, 0, 0],
///        [0, 0, 0]], dtype=int32)
///
/// Args:
///     shape: A list of ints, the shape.
///     dtype: The dtype (default float32).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of zeros.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, name=None))]
fn zeros(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    filled("Zeros", shape, dtype, 0.0)
}

/// A tensor of `shape` filled with 1 (float32 unless `dtype`); no gradient.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.ones([2]).numpy()
/// array([1., 1.], dtype=float32)
///
/// Args:
///     shape: A list of ints, the shape.
///     dtype: The dtype (default float32).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of ones.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, name=None))]
fn ones(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    filled("Ones", shape, dtype, 1.0)
}

fn filled_like(
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    value: f64,
) -> PyResult<PyTensor> {
    let t = to_tensor(input, None)?;
    let d = optional_dtype(dtype)?.unwrap_or(t.dtype());
    let y = host_constant(Array::full("Fill", d, t.shape(), value).raise()?);
    // Made from `input`'s shape at every replay, so that a trace follows other sizes (a
    // constant of the trace when `input` comes from outside it).
    ferrotape_autodiff::trace::node1_shaped_like("FillLike", &[], t.id(), &y, || {
        move |_: &[Tensor], shape: &[usize]| Ok(Tensor::new(Array::full("Fill", d, shape, value)?))
    });
    Ok(PyTensor::new(y))
}

/// Zeros of `input`'s shape (and dtype unless `dtype`); no gradient.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.zeros_like(ft.constant([[1, 2]])).numpy()
/// array([[0, 0]], dtype=int32)
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     dtype: The dtype (default `input`'s).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of zeros of `input`'s shape.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, dtype=None, name=None))]
fn zeros_like(
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    filled_like(input, dtype, 0.0)
}

/// Ones of `input`'s shape (and dtype unless `dtype`); no gradient.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.ones_like(ft.constant([1.5, 2.5])).numpy()
/// array([1., 1.], dtype=float32)
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     dtype: The dtype (default `input`'s).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of ones of `input`'s shape.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, dtype=None, name=None))]
fn ones_like(
    input: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    filled_like(input, dtype, 1.0)
}

/// `tf.fill(dims, value)`: the dtype is the value's (float32 for Python floats).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.fill([2, 2], 7).numpy()
/// array([[7, 7],
///        [7, 7]], dtype=int32)
///
/// Args:
///     dims: A list of ints, the shape.
///     value: A scalar, whose dtype the result takes.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `dims` filled with `value`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (dims, value, name=None))]
fn fill(
    dims: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let v = to_tensor(value, None)?;
    wrap(ops::fill(&dims_of("Fill", dims)?, &v))
}

/// The identity matrix `[num_rows, num_columns]` (square by default), batched over
/// `batch_shape`; no gradient.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.eye(2, 3).numpy()
/// array([[1., 0., 0.],
///        [0., 1., 0.]], dtype=float32)
///
/// Args:
///     num_rows: The number of rows.
///     num_columns: The number of columns (default `num_rows`).
///     batch_shape: Leading batch dimensions, a list of ints (default none).
///     dtype: The dtype (default float32).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of shape `batch_shape + [num_rows, num_columns]`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (num_rows, num_columns=None, batch_shape=None, dtype=None, name=None))]
fn eye(
    num_rows: Int,
    num_columns: Option<Int>,
    batch_shape: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let num_rows = num_rows.0;
    let num_columns = num_columns.map(|v| v.0);
    let _ = name;
    let batch = match batch_shape {
        Some(b) if !b.is_none() => dims_of("Eye", b)?,
        _ => vec![],
    };
    let d = optional_dtype(dtype)?.unwrap_or(DType::F32);
    let a = kernels::eye(num_rows, num_columns, &batch, d).raise()?;
    Ok(PyTensor::new(host_constant(a)))
}

/// A scalar argument `what` of `op` (`tf.range`'s `limit`, ...) as a float.
fn number(op: &'static str, what: &'static str, obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    let t = to_tensor(obj, None).map_err(in_argument(what))?;
    crate::function::note_value_read(obj.py(), &t, op);
    t.value().scalar_f64().ok_or_else(|| {
        errors::invalid_argument(
            op,
            format!("{what} must be a scalar, received shape {:?}", t.shape()),
        )
    })
}

/// `tf.range(limit)` or `tf.range(start, limit, delta)`, of the widest of its arguments' dtypes
/// (int32 < int64 < float32 < float64) unless `dtype` is given.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.range(5).numpy()
/// array([0, 1, 2, 3, 4], dtype=int32)
/// >>> ft.range(1.0, 2.0, 0.25).numpy()
/// array([1.  , 1.25, 1.5 , 1.75], dtype=float32)
/// >>> ft.range(2**31, 2**31 + 2).numpy()
/// array([2147483648, 2147483649])
///
/// Args:
///     start: The first value, or the limit when `limit` is None (then the start is 0).
///     limit: The end, excluded.
///     delta: The step (default 1; may be negative).
///     dtype: The dtype. By default each argument converts on its own, as TensorFlow's
///         `convert_to_tensor` does (a Python int int32, or int64 past int32; a Python float
///         float32; a tensor or numpy value its dtype), and the widest of them is used.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A 1-D tensor of the values `start, start + delta, ...` before `limit`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (start, limit=None, delta=None, dtype=None, name=None))]
fn range(
    start: &Bound<'_, PyAny>,
    limit: Option<&Bound<'_, PyAny>>,
    delta: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let py = start.py();
    let (s, l) = match limit {
        Some(l) if !l.is_none() => (start.clone(), l.clone()),
        _ => (0i64.into_pyobject(py)?.into_any(), start.clone()),
    };
    let d = match delta {
        Some(d) if !d.is_none() => d.clone(),
        _ => 1i64.into_pyobject(py)?.into_any(),
    };
    let args = [("start", &s), ("limit", &l), ("delta", &d)];
    let dtype = match optional_dtype(dtype)? {
        Some(dtype) => dtype,
        None => range_dtype(&args)?,
    };
    let [s, l, d] = args.map(|(what, obj)| range_arg(what, obj, dtype));
    let (s, l, d) = (s?, l?, d?);
    let a = if dtype.is_int() {
        let int = |a: Array| kernels::cast(&a, DType::I64).map(|a| a.to_vec::<i64>()[0]);
        let (s, l, d) = (int(s), int(l), int(d));
        kernels::range_int(s.raise()?, l.raise()?, d.raise()?, dtype)
    } else {
        let float = |a: Array| a.scalar_f64().unwrap_or(f64::NAN);
        kernels::range(float(s), float(l), float(d), dtype)
    };
    Ok(PyTensor::new(host_constant(a.raise()?)))
}

/// The dtypes `tf.range` infers from, narrowest first.
const RANGE_DTYPES: [DType; 4] = [DType::I32, DType::I64, DType::F32, DType::F64];

/// `tf.range`'s dtype when none is given: the widest of its arguments' own dtypes.
fn range_dtype(args: &[(&'static str, &Bound<'_, PyAny>)]) -> PyResult<DType> {
    let mut widest = 0;
    for (what, obj) in args {
        let d = to_tensor(obj, None).map_err(in_argument(what))?.dtype();
        let Some(rank) = RANGE_DTYPES.iter().position(|&r| r == d) else {
            return Err(errors::type_error(format!(
                "range: {what} has dtype {}; expected int32, int64, float32 or float64 \
                 (or pass `dtype`)",
                d.name()
            )));
        };
        widest = widest.max(rank);
    }
    Ok(RANGE_DTYPES[widest])
}

/// A scalar argument `what` of `tf.range` in `dtype`: a tensor is cast, a Python value
/// converts to it (a Python int wrapping as TensorFlow's conversion does).
fn range_arg(what: &'static str, obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Array> {
    let t = match crate::convert::as_tensor(obj) {
        Some(t) => {
            crate::function::note_value_read(obj.py(), &t, "Range");
            ops::cast(&t, dtype).raise()?
        }
        None => crate::convert::value_to_tensor(obj, dtype).map_err(in_argument(what))?,
    };
    if t.rank() != 0 {
        return Err(errors::invalid_argument(
            "Range",
            format!("{what} must be a scalar, received shape {:?}", t.shape()),
        ));
    }
    Ok(t.value().clone())
}

/// `num` evenly spaced values from `start` to `stop` inclusive (float32 for Python floats).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.linspace(0.0, 1.0, 5).numpy()
/// array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
///
/// Args:
///     start: The first value.
///     stop: The last value.
///     num: The number of values.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///     axis: Where the values' axis goes (default 0).
///
/// Returns:
///     A tensor of `num` values, of `start`'s dtype when it is a float tensor, else float32.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (start, stop, num, name=None, axis=Int(0)))]
fn linspace(
    start: &Bound<'_, PyAny>,
    stop: &Bound<'_, PyAny>,
    num: &Bound<'_, PyAny>,
    name: Option<&Bound<'_, PyAny>>,
    axis: Int,
) -> PyResult<PyTensor> {
    let axis = axis.0;
    let _ = name;
    let s = to_tensor(start, None)?;
    let dtype = if s.dtype().is_float() {
        s.dtype()
    } else {
        DType::F32
    };
    let (lo, hi) = (
        number("LinSpace", "start", start)?,
        number("LinSpace", "stop", stop)?,
    );
    let num = int_of(num).map_err(in_argument("num"))?;
    let a = kernels::linspace(lo, hi, num, axis, dtype).raise()?;
    Ok(PyTensor::new(host_constant(a)))
}

/// `tf.constant(value, dtype=None, shape=None)`: a scalar value fills `shape`.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.constant(0.5, shape=[2, 2]).numpy()
/// array([[0.5, 0.5],
///        [0.5, 0.5]], dtype=float32)
/// >>> ft.constant([1, 2], dtype=ft.float64).dtype
/// tf.float64
///
/// Args:
///     value: A nested list, number, NumPy array or tensor.
///     dtype: The dtype (default: TensorFlow's rules for `value`).
///     shape: The result's shape: a scalar `value` fills it, otherwise the values are reshaped
///         to it.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (value, dtype=None, shape=None, name=None))]
fn constant(
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    shape: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let d = optional_dtype(dtype)?;
    let t = match crate::convert::as_tensor(value) {
        Some(t) => match d {
            Some(d) => ops::cast(&t, d).raise()?,
            None => t,
        },
        None => to_tensor(value, d)?,
    };
    // A new tensor without history: a constant of a trace when made from Python values, a
    // recorded copy when made from a traced tensor.
    let t = ops::stop_gradient(&t);
    match shape {
        Some(s) if !s.is_none() => {
            let s = shape_of(s).map_err(in_argument("shape"))?;
            let dims = resolve_shape("Const", t.len(), &s).raise()?;
            if t.len() == 1 {
                let scalar = ops::reshape(&t, &[]).raise()?;
                return Ok(PyTensor::new(ops::fill(&dims, &scalar).raise()?));
            }
            Ok(PyTensor::new(ops::reshape(&t, &dims).raise()?))
        }
        _ => Ok(PyTensor::new(t)),
    }
}

/// `value` as a tensor (a tensor or variable passes through; Python and numpy values are
/// converted with TensorFlow's dtype rules, or to `dtype`, trying `dtype_hint` first).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.convert_to_tensor([1, 2]).dtype
/// tf.int32
/// >>> ft.convert_to_tensor(3, dtype_hint=ft.float32).dtype
/// tf.float32
///
/// Args:
///     value: A tensor, variable, nested list, number or NumPy array.
///     dtype: The dtype required (converting to it).
///     dtype_hint: A dtype tried first when `dtype` is None; ignored if the conversion fails.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor (`value` itself when it is one).
#[op_errors]
#[pyfunction]
#[pyo3(signature = (value, dtype=None, dtype_hint=None, name=None))]
fn convert_to_tensor(
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    dtype_hint: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    if let Some(d) = optional_dtype(dtype)? {
        return Ok(PyTensor::new(to_tensor(value, Some(d))?));
    }
    if let Some(hint) = optional_dtype(dtype_hint)? {
        if let Ok(t) = to_tensor(value, Some(hint)) {
            return Ok(PyTensor::new(t));
        }
    }
    Ok(PyTensor::new(to_tensor(value, None)?))
}

/// The shape of a tensor as an int32 (or `out_type`) tensor.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.shape(ft.zeros([2, 3])).numpy()
/// array([2, 3], dtype=int32)
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     out_type: The dtype of the result (default int32).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A 1-D tensor of `rank(input)` sizes.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, out_type=None, name=None))]
fn shape(
    input: &Bound<'_, PyAny>,
    out_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(input, None)?;
    let d = optional_dtype(out_type)?.unwrap_or(DType::I32);
    wrap(ops::shape_of(&t, d))
}

/// The number of elements of `input`, an int32 (or `out_type`) scalar.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> int(ft.size(ft.zeros([2, 3])))
/// 6
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     out_type: The dtype of the result (default int32).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A scalar tensor.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, out_type=None, name=None))]
fn size(
    input: &Bound<'_, PyAny>,
    out_type: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let t = to_tensor(input, None)?;
    let d = optional_dtype(out_type)?.unwrap_or(DType::I32);
    wrap(ops::size_of(&t, d))
}

/// The number of dimensions of `input`, an int32 scalar.
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> int(ft.rank(ft.zeros([2, 3])))
/// 2
///
/// Args:
///     input: A tensor, or a value convertible to one.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     An int32 scalar tensor.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (input, name=None))]
fn rank(input: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let _ = name;
    let r = to_tensor(input, None)?.rank();
    Ok(PyTensor::new(host_constant(Array::scalar(r as i32))))
}

/// Is this object a ferrotape tensor or variable?
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.is_tensor(ft.constant(1.0)), ft.is_tensor(1.0)
/// (True, False)
///
/// Args:
///     x: Any Python object.
///
/// Returns:
///     True for a `Tensor` or `Variable`, else False.
#[pyfunction]
fn is_tensor(x: &Bound<'_, PyAny>) -> bool {
    crate::convert::as_tensor(x).is_some()
}

/// The canonical name of a dtype-like value (for the Python helpers; no TensorFlow name).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft._core.dtype_name(ft.float32), ft._core.dtype_name('int64')
/// ('float32', 'int64')
///
/// Args:
///     x: A dtype-like value: a `DType`, a name or a NumPy dtype.
///
/// Returns:
///     The canonical name, such as `"float32"`.
#[op_errors]
#[pyfunction]
fn dtype_name(x: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    Ok(dtype_of(x)?.name())
}

functions! {
    reshape ["reshape"] grad,
    transpose ["transpose"] grad,
    expand_dims ["expand_dims"] grad,
    squeeze ["squeeze"] grad,
    concat ["concat"] grad,
    stack ["stack"] grad,
    unstack ["unstack"] grad,
    split ["split"] grad,
    tile ["tile"] grad,
    pad ["pad"] grad,
    broadcast_to ["broadcast_to"] grad,
    slice ["slice"] grad,
    gather ["gather"] grad,
    gather_nd ["gather_nd"] grad,
    scatter_nd ["scatter_nd"] grad,
    one_hot ["one_hot"] no_grad,
    zeros ["zeros"] no_grad,
    ones ["ones"] no_grad,
    zeros_like ["zeros_like"] no_grad,
    ones_like ["ones_like"] no_grad,
    fill ["fill"] no_grad,
    eye ["eye", "linalg.eye"] no_grad,
    range ["range"] no_grad,
    linspace ["linspace"] no_grad,
    constant ["constant"] no_grad,
    convert_to_tensor ["convert_to_tensor"] no_grad,
    shape ["shape"] no_grad,
    size ["size"] no_grad,
    rank ["rank"] no_grad,
    is_tensor ["is_tensor"] no_grad,
    dtype_name [] no_grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_functions(m)
}
