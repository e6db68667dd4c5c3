//! `ft.nn`: activations, softmax and the cross-entropy losses.

use ferrotape_autodiff::ops;
use ferrotape_autodiff::Tensor;
use ferrotape_core::kernels::{Conv2dParams, Padding, Window2d};
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;

use crate::convert::{binary_operands, to_tensor, Flag, Int, Real, Text};
use crate::errors::{to_py, value_error};
use crate::registry::{self, functions};
use crate::tensor::{compute, wrap, PyTensor};

/// Rows of one-tensor activations (`features`): makes one `#[pyfunction]` per row,
/// `register_activations` and `ACTIVATIONS` (row kinds: `registry.rs`).
macro_rules! activations {
    ($($name:ident $tf:tt => $kind:ident $args:tt),* $(,)?) => {
        $(
            #[op_errors]
            #[pyfunction]
            #[pyo3(signature = (features, name=None))]
            #[doc = registry::row_doc!(activation $tf $kind $args)]
            fn $name(py: Python<'_>, features: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                let _ = name;
                let t = to_tensor(features, None)?;
                wrap(compute(py, t.len(), || (registry::row_forward!($kind $args))(&t)))
            }
        )*
        fn register_activations(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
        const ACTIVATIONS: &[registry::Row] = &[$(registry::row_of!($name $tf $kind $args)),*];
    };
}

activations! {
    relu ["nn.relu"] => op(relu),
    relu6 ["nn.relu6"] => op(relu6),
    elu ["nn.elu"] => op(elu),
    selu ["nn.selu"] => op(selu),
    softplus ["nn.softplus", "math.softplus"] => op(softplus),
}

#[doc = op_doc!(leaky_relu)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.nn.leaky_relu([-1.0, 2.0]).numpy()
/// array([-0.2,  2. ], dtype=float32)
///
/// Args:
///     features: A floating-point tensor.
///     alpha: The slope for negative inputs (default 0.2).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `features`' shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (features, alpha=Real(0.2), name=None))]
fn leaky_relu(
    features: &Bound<'_, PyAny>,
    alpha: Real,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::leaky_relu(&to_tensor(features, None)?, alpha.0))
}

#[doc = op_doc!(gelu)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.nn.gelu([-1.0, 0.0, 1.0]).numpy().round(4)
/// array([-0.1587,  0.    ,  0.8413], dtype=float32)
///
/// Args:
///     features: A floating-point tensor.
///     approximate: If true, use the tanh approximation.
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `features`' shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (features, approximate=Flag(false), name=None))]
fn gelu(
    features: &Bound<'_, PyAny>,
    approximate: Flag,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::gelu(&to_tensor(features, None)?, approximate.0))
}

/// x·sigmoid(beta·x); d/dx = s + beta·x·s·(1 - s) with s = sigmoid(beta·x).
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.nn.silu([0.0, 1.0]).numpy().round(4)
/// array([0.    , 0.7311], dtype=float32)
///
/// Args:
///     features: A floating-point tensor.
///     beta: The sigmoid's scale (default 1).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `features`' shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (features, beta=Real(1.0), name=None))]
fn silu(
    features: &Bound<'_, PyAny>,
    beta: Real,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    wrap(ops::silu(&to_tensor(features, None)?, beta.0))
}

fn axis_or_last(axis: Option<i64>) -> i64 {
    axis.unwrap_or(-1)
}

#[doc = op_doc!(softmax)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.nn.softmax([[0.0, 0.0], [0.0, 2.0]]).numpy().round(4)
/// array([[0.5   , 0.5   ],
///        [0.1192, 0.8808]], dtype=float32)
///
/// Args:
///     logits: A floating-point tensor.
///     axis: The axis normalised over (default -1, last).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `logits`' shape and dtype, summing to 1 along `axis`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (logits, axis=None, name=None))]
fn softmax(
    py: Python<'_>,
    logits: &Bound<'_, PyAny>,
    axis: Option<Int>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = axis.map(|v| v.0);
    let _ = name;
    let t = to_tensor(logits, None)?;
    wrap(compute(py, t.len(), || {
        ops::softmax(&t, axis_or_last(axis))
    }))
}

#[doc = op_doc!(log_softmax)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> ft.nn.log_softmax([0.0, 0.0]).numpy().round(4)
/// array([-0.6931, -0.6931], dtype=float32)
///
/// Args:
///     logits: A floating-point tensor.
///     axis: The axis normalised over (default -1, last).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     A tensor of `logits`' shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (logits, axis=None, name=None))]
fn log_softmax(
    py: Python<'_>,
    logits: &Bound<'_, PyAny>,
    axis: Option<Int>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = axis.map(|v| v.0);
    let _ = name;
    let t = to_tensor(logits, None)?;
    wrap(compute(py, t.len(), || {
        ops::log_softmax(&t, axis_or_last(axis))
    }))
}

fn required<'a, 'py>(
    arg: Option<&'a Bound<'py, PyAny>>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyAny>> {
    arg.filter(|a| !a.is_none())
        .ok_or_else(|| value_error(format!("{what} must be provided")))
}

#[doc = op_doc!(softmax_cross_entropy_with_logits)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> loss = ft.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=[[0.0, 0.0]])
/// >>> loss.numpy().round(4)
/// array([0.6931], dtype=float32)
///
/// Args:
///     labels: Class probabilities, of `logits`' shape (required).
///     logits: Unnormalised log-probabilities (required).
///     axis: The class axis (default -1).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The loss per example: `logits`' shape without `axis`.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, axis=Int(-1), name=None))]
fn softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    axis: Int,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = axis.0;
    let _ = name;
    let (z, x) = binary_operands(required(labels, "labels")?, required(logits, "logits")?)?;
    let x2 = x.clone();
    let z = if z.dtype() != x.dtype() {
        ops::cast(&z, x.dtype()).map_err(crate::errors::to_py)?
    } else {
        z
    };
    wrap(compute(py, x2.len(), || {
        ops::softmax_cross_entropy_with_logits(&z, &x2, axis)
    }))
}

#[doc = op_doc!(sparse_softmax_cross_entropy_with_logits)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> loss = ft.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[0.0, 0.0]])
/// >>> loss.numpy().round(4)
/// array([0.6931], dtype=float32)
///
/// Args:
///     labels: Int class indices, of `logits`' shape without the last axis (required).
///     logits: Unnormalised log-probabilities, classes on the last axis (required).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The loss per example, of `labels`' shape.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, name=None))]
fn sparse_softmax_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let z = to_tensor(required(labels, "labels")?, None)?;
    let x = to_tensor(required(logits, "logits")?, None)?;
    wrap(compute(py, x.len(), || {
        ops::sparse_softmax_cross_entropy_with_logits(&z, &x)
    }))
}

#[doc = op_doc!(sigmoid_cross_entropy_with_logits)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> loss = ft.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 0.0])
/// >>> loss.numpy().round(4)
/// array([0.6931, 0.6931], dtype=float32)
///
/// Args:
///     labels: Targets in [0, 1], of `logits`' shape (required).
///     logits: Unnormalised log-odds (required).
///     name: Ignored (TensorFlow's op name; ferrotape runs eagerly).
///
/// Returns:
///     The element-wise loss, of `logits`' shape and dtype.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (labels=None, logits=None, name=None))]
fn sigmoid_cross_entropy_with_logits(
    py: Python<'_>,
    labels: Option<&Bound<'_, PyAny>>,
    logits: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let _ = name;
    let x = to_tensor(required(logits, "logits")?, None)?;
    let z: Tensor = to_tensor(required(labels, "labels")?, Some(x.dtype()))
        .or_else(|_| to_tensor(required(labels, "labels")?, None))?;
    wrap(compute(py, x.len(), || {
        ops::sigmoid_cross_entropy_with_logits(&z, &x)
    }))
}

fn conv_params(stride: [usize; 2], dilation: [usize; 2], padding: &str) -> PyResult<Conv2dParams> {
    Ok(Conv2dParams {
        stride,
        dilation,
        padding: Padding::parse("Conv2D", padding).map_err(to_py)?,
    })
}

/// NHWC input, HWIO filter; the Python wrapper normalises TensorFlow's stride forms.
#[doc = ""]
#[doc = op_doc!(conv2d)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.reshape(ft.range(9.0), [1, 3, 3, 1])
/// >>> y = ft._core.nn.conv2d_nhwc(x, ft.ones([2, 2, 1, 1]), [1, 1], [1, 1], "VALID")
/// >>> y.numpy().reshape(2, 2)
/// array([[ 8., 12.],
///        [20., 24.]], dtype=float32)
///
/// Args:
///     input: The images, `[batch, height, width, in_channels]`.
///     filters: The kernel, `[height, width, in_channels, out_channels]`.
///     stride: The `[height, width]` strides.
///     dilation: The `[height, width]` dilations.
///     padding: `"VALID"` or `"SAME"`.
///
/// Returns:
///     The convolution, `[batch, out_height, out_width, out_channels]`.
#[op_errors]
#[pyfunction]
fn conv2d_nhwc(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    filters: &Bound<'_, PyAny>,
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: Text,
) -> PyResult<PyTensor> {
    let (x, f) = binary_operands(input, filters)?;
    let params = conv_params(stride, dilation, &padding.0)?;
    let work = x.len() * f.shape().iter().take(2).product::<usize>().max(1);
    wrap(compute(py, work, || ops::conv2d(&x, &f, None, params)))
}

/// The input gradient of conv2d (also `tf.nn.conv2d_transpose`).
#[doc = ""]
#[doc = op_doc!(conv2d_backprop_input)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> w, dy = ft.ones([2, 2, 1, 1]), ft.ones([1, 2, 2, 1])
/// >>> dx = ft._core.nn.conv2d_backprop_input_nhwc([1, 3, 3, 1], w, dy, [1, 1], [1, 1], "VALID")
/// >>> dx.numpy().reshape(3, 3)
/// array([[1., 2., 1.],
///        [2., 4., 2.],
///        [1., 2., 1.]], dtype=float32)
///
/// Args:
///     input_sizes: The shape of conv2d's input, `[batch, height, width, in_channels]`.
///     filters: The kernel, `[height, width, in_channels, out_channels]`.
///     out_backprop: The gradient of conv2d's output.
///     stride: The `[height, width]` strides.
///     dilation: The `[height, width]` dilations.
///     padding: `"VALID"` or `"SAME"`.
///
/// Returns:
///     The gradient with respect to conv2d's input, of shape `input_sizes`.
#[op_errors]
#[pyfunction]
fn conv2d_backprop_input_nhwc(
    py: Python<'_>,
    input_sizes: Vec<usize>,
    filters: &Bound<'_, PyAny>,
    out_backprop: &Bound<'_, PyAny>,
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: Text,
) -> PyResult<PyTensor> {
    let (f, dy) = binary_operands(filters, out_backprop)?;
    let params = conv_params(stride, dilation, &padding.0)?;
    let work = dy.len() * f.shape().iter().take(2).product::<usize>().max(1);
    wrap(compute(py, work, || {
        ops::conv2d_backprop_input(&input_sizes, &f, &dy, params)
    }))
}

#[doc = op_doc!(conv2d_backprop_filter)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.reshape(ft.range(9.0), [1, 3, 3, 1])
/// >>> dy = ft.ones([1, 2, 2, 1])
/// >>> df = ft._core.nn.conv2d_backprop_filter_nhwc(x, [2, 2, 1, 1], dy, [1, 1], [1, 1], "VALID")
/// >>> df.numpy().reshape(2, 2)
/// array([[ 8., 12.],
///        [20., 24.]], dtype=float32)
///
/// Args:
///     input: conv2d's input, `[batch, height, width, in_channels]`.
///     filter_sizes: The shape of the kernel, `[height, width, in_channels, out_channels]`.
///     out_backprop: The gradient of conv2d's output.
///     stride: The `[height, width]` strides.
///     dilation: The `[height, width]` dilations.
///     padding: `"VALID"` or `"SAME"`.
///
/// Returns:
///     The gradient with respect to the kernel, of shape `filter_sizes`.
#[op_errors]
#[pyfunction]
fn conv2d_backprop_filter_nhwc(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    filter_sizes: Vec<usize>,
    out_backprop: &Bound<'_, PyAny>,
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: Text,
) -> PyResult<PyTensor> {
    let (x, dy) = binary_operands(input, out_backprop)?;
    let params = conv_params(stride, dilation, &padding.0)?;
    let work = x.len() * filter_sizes.iter().take(2).product::<usize>().max(1);
    wrap(compute(py, work, || {
        ops::conv2d_backprop_filter(&x, &filter_sizes, &dy, params)
    }))
}

fn pool_window(
    op: &'static str,
    x: &Tensor,
    window: [usize; 2],
    stride: [usize; 2],
    padding: Text,
) -> PyResult<Window2d> {
    let padding = Padding::parse(op, &padding.0).map_err(to_py)?;
    Window2d::new(op, x.shape(), window, stride, [1, 1], padding).map_err(to_py)
}

#[doc = op_doc!(max_pool2d)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
/// >>> ft._core.nn.max_pool_nhwc(x, [2, 2], [2, 2], "VALID").numpy().reshape(2, 2)
/// array([[ 5.,  7.],
///        [13., 15.]], dtype=float32)
///
/// Args:
///     input: The images, `[batch, height, width, channels]`.
///     window: The `[height, width]` window.
///     stride: The `[height, width]` strides.
///     padding: `"VALID"` or `"SAME"`.
///
/// Returns:
///     The pooled images, `[batch, out_height, out_width, channels]`.
#[op_errors]
#[pyfunction]
fn max_pool_nhwc(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    window: [usize; 2],
    stride: [usize; 2],
    padding: Text,
) -> PyResult<PyTensor> {
    let x = to_tensor(input, None)?;
    let w = pool_window("MaxPool", &x, window, stride, padding)?;
    wrap(compute(py, x.len(), || ops::max_pool2d(&x, &w)))
}

#[doc = op_doc!(avg_pool2d)]
///
/// For example:
///
/// >>> import ferrotape as ft
/// >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
/// >>> ft._core.nn.avg_pool_nhwc(x, [2, 2], [2, 2], "VALID").numpy().reshape(2, 2)
/// array([[ 2.5,  4.5],
///        [10.5, 12.5]], dtype=float32)
///
/// Args:
///     input: The images, `[batch, height, width, channels]`.
///     window: The `[height, width]` window.
///     stride: The `[height, width]` strides.
///     padding: `"VALID"` or `"SAME"`.
///
/// Returns:
///     The pooled images, `[batch, out_height, out_width, channels]`.
#[op_errors]
#[pyfunction]
fn avg_pool_nhwc(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    window: [usize; 2],
    stride: [usize; 2],
    padding: Text,
) -> PyResult<PyTensor> {
    let x = to_tensor(input, None)?;
    let w = pool_window("AvgPool", &x, window, stride, padding)?;
    wrap(compute(py, x.len(), || ops::avg_pool2d(&x, &w)))
}

functions! {
    leaky_relu ["nn.leaky_relu"] grad,
    gelu ["nn.gelu"] grad,
    silu ["nn.silu", "nn.swish"] grad,
    softmax ["nn.softmax"] grad,
    log_softmax ["nn.log_softmax"] grad,
    softmax_cross_entropy_with_logits ["nn.softmax_cross_entropy_with_logits"] grad,
    sparse_softmax_cross_entropy_with_logits ["nn.sparse_softmax_cross_entropy_with_logits"] grad,
    sigmoid_cross_entropy_with_logits ["nn.sigmoid_cross_entropy_with_logits"] grad,
    conv2d_nhwc [] grad,
    conv2d_backprop_input_nhwc [] grad,
    conv2d_backprop_filter_nhwc [] grad,
    max_pool_nhwc [] grad,
    avg_pool_nhwc [] grad,
}

/// This namespace's binding rows (`registry::op_table`).
pub const ROWS: &[&[registry::Row]] = &[ACTIVATIONS, FUNCTIONS];

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_activations(m)?;
    register_functions(m)
}
