//! `ferrotape._core.checkpoint`: TensorFlow's checkpoint files (ferrotape-checkpoint) for
//! `ferrotape/_tensor_bundle.py`, which turns these bytes into numpy arrays and these tuples into
//! its dataclasses. Raw tensor bytes come in as a flat uint8 array (no copy) and go out as one
//! (the buffer read from the file, handed to numpy without a copy).

use std::path::PathBuf;

use ferrotape_checkpoint as ckpt;
use ferrotape_py_macros::op_errors;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{checkpoint_error, type_error};

/// A tensor as the binding takes it: raw little-endian bytes, or the elements of a string tensor.
#[derive(FromPyObject)]
enum Data<'py> {
    Raw(PyReadonlyArray1<'py, u8>),
    Strings(Vec<Bound<'py, PyBytes>>),
}

/// (key, TensorFlow DataType number, shape, data).
type EntryArgs<'py> = (String, i32, Vec<i64>, Data<'py>);

/// Writes the tensors `entries` ((key, DataType number, shape, uint8 array or list of bytes))
/// as the TensorFlow checkpoint at `prefix` (`prefix.index`, `prefix.data-00000-of-00001`).
#[op_errors]
#[pyfunction]
#[pyo3(signature = (prefix, entries, /))]
fn write_bundle(prefix: PathBuf, entries: Vec<EntryArgs<'_>>) -> PyResult<()> {
    let mut raw = Vec::with_capacity(entries.len());
    for (key, _, _, data) in &entries {
        raw.push(match data {
            Data::Raw(array) => Some(array.as_slice().map_err(|_| {
                type_error(format!("write_bundle: {key:?}: expected contiguous bytes"))
            })?),
            Data::Strings(_) => None,
        });
    }
    let bundle: Vec<ckpt::Entry> = entries
        .iter()
        .zip(&raw)
        .map(|((key, dtype, shape, data), raw)| ckpt::Entry {
            key,
            dtype: ckpt::DataType(*dtype),
            shape,
            data: match (data, raw) {
                (Data::Strings(items), _) => {
                    ckpt::TensorBytes::Strings(items.iter().map(|b| b.as_bytes()).collect())
                }
                (Data::Raw(_), raw) => ckpt::TensorBytes::Raw(raw.unwrap_or_default()),
            },
        })
        .collect();
    ckpt::write_bundle(&prefix, &bundle).map_err(checkpoint_error)
}

/// An opened checkpoint: its index read once, tensors read by key.
#[pyclass(name = "BundleReader", module = "ferrotape._core.checkpoint", frozen)]
struct PyBundleReader(ckpt::BundleReader);

#[pymethods]
impl PyBundleReader {
    /// Opens the checkpoint at `prefix`, reading and checking its index (not its data).
    #[new]
    #[pyo3(signature = (prefix, /))]
    fn new(prefix: PathBuf) -> PyResult<Self> {
        ckpt::BundleReader::open(&prefix)
            .map(Self)
            .map_err(checkpoint_error)
    }

    /// Every tensor's entry as (key, DataType number, shape, shard, offset, size, number of
    /// slices), keys in bytewise order.
    #[allow(clippy::type_complexity)]
    fn index(&self) -> Vec<(String, i32, Vec<i64>, i32, u64, u64, usize)> {
        self.0
            .index()
            .into_iter()
            .map(|e| {
                let ckpt::IndexEntry {
                    key,
                    dtype,
                    shape,
                    shard_id,
                    offset,
                    size,
                    num_slices,
                } = e;
                (key, dtype.0, shape, shard_id, offset, size, num_slices)
            })
            .collect()
    }

    /// The tensor `key`: a uint8 array of its raw bytes, or a list of bytes for a string tensor.
    #[pyo3(signature = (key, /))]
    fn read<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.0.read(key).map_err(checkpoint_error)? {
            ckpt::TensorValue::Raw(bytes) => Ok(PyArray1::from_vec(py, bytes).into_any()),
            ckpt::TensorValue::Strings(items) => {
                let items: Vec<Bound<'py, PyBytes>> =
                    items.iter().map(|s| PyBytes::new(py, s)).collect();
                Ok(items.into_pyobject(py)?.into_any())
            }
        }
    }
}

/// (children: [(node_id, local_name)], attributes: [(name, full_name, checkpoint_key)],
/// slot_variables: [(original_variable_node_id, slot_name, slot_variable_node_id)],
/// registered_saver: (name, object_name) | None, has_checkpoint_values: bool | None).
type NodeTuple = (
    Vec<(i32, String)>,
    Vec<(String, String, String)>,
    Vec<(i32, String, i32)>,
    Option<(String, String)>,
    Option<bool>,
);

/// Serializes a `TrackableObjectGraph` given as one tuple per node (see `decode_object_graph`),
/// byte for byte as TensorFlow does.
#[pyfunction]
#[pyo3(signature = (nodes, /))]
fn encode_object_graph<'py>(py: Python<'py>, nodes: Vec<NodeTuple>) -> Bound<'py, PyBytes> {
    let nodes = nodes
        .into_iter()
        .map(
            |(children, attributes, slots, saver, has_values)| ckpt::TrackableObject {
                children: children
                    .into_iter()
                    .map(|(node_id, local_name)| ckpt::ObjectReference {
                        node_id,
                        local_name,
                    })
                    .collect(),
                attributes: attributes
                    .into_iter()
                    .map(|(name, full_name, checkpoint_key)| ckpt::SerializedTensor {
                        name,
                        full_name,
                        checkpoint_key,
                    })
                    .collect(),
                slot_variables: slots
                    .into_iter()
                    .map(|(original, slot_name, slot)| ckpt::SlotVariableReference {
                        original_variable_node_id: original,
                        slot_name,
                        slot_variable_node_id: slot,
                    })
                    .collect(),
                registered_saver: saver
                    .map(|(name, object_name)| ckpt::RegisteredSaver { name, object_name }),
                has_checkpoint_values: has_values,
            },
        )
        .collect();
    let bytes = ckpt::encode_object_graph(&ckpt::TrackableObjectGraph { nodes });
    PyBytes::new(py, &bytes)
}

/// Parses a serialized `TrackableObjectGraph` into one tuple per node: (children
/// [(node_id, local_name)], attributes [(name, full_name, checkpoint_key)], slot_variables
/// [(original_variable_node_id, slot_name, slot_variable_node_id)], registered_saver
/// (name, object_name) or None, has_checkpoint_values bool or None).
#[op_errors]
#[pyfunction]
#[pyo3(signature = (data, /))]
fn decode_object_graph(data: &[u8]) -> PyResult<Vec<NodeTuple>> {
    let graph = ckpt::decode_object_graph(data).map_err(checkpoint_error)?;
    Ok(graph
        .nodes
        .into_iter()
        .map(|n| {
            (
                n.children
                    .into_iter()
                    .map(|c| (c.node_id, c.local_name))
                    .collect(),
                n.attributes
                    .into_iter()
                    .map(|a| (a.name, a.full_name, a.checkpoint_key))
                    .collect(),
                n.slot_variables
                    .into_iter()
                    .map(|s| {
                        (
                            s.original_variable_node_id,
                            s.slot_name,
                            s.slot_variable_node_id,
                        )
                    })
                    .collect(),
                n.registered_saver.map(|r| (r.name, r.object_name)),
                n.has_checkpoint_values,
            )
        })
        .collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_bundle, m)?)?;
    m.add_function(wrap_pyfunction!(encode_object_graph, m)?)?;
    m.add_function(wrap_pyfunction!(decode_object_graph, m)?)?;
    m.add_class::<PyBundleReader>()?;
    Ok(())
}
