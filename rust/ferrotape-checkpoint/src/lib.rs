//! TensorFlow's checkpoint files, read and written: the TensorBundle format that
//! `tf.train.Checkpoint` saves (tensorflow/core/util/tensor_bundle/), and the
//! `TrackableObjectGraph` proto it stores alongside the variables.
//!
//! # The format (fixed by TensorFlow; these choices cannot change without breaking files)
//!
//! A checkpoint at prefix `P` is:
//! - `P.index`: a LevelDB-style table ([`table`](crate::table) has its layout) mapping the key
//!   `""` to a `BundleHeaderProto` (`num_shards`, endianness LITTLE, `version { producer: 1 }`)
//!   and every tensor's name to a `BundleEntryProto` (dtype number, shape, shard, offset, size,
//!   masked CRC32C, slices). Keys are sorted bytewise. Written uncompressed, as TensorFlow does.
//! - `P.data-00000-of-00001` (in general `P.data-%05d-of-%05d`): the tensors' bytes, one after
//!   another with no padding, in the order they were added. A fixed-size dtype is its elements in
//!   little-endian row-major order. A DT_STRING tensor is every element's length as a varint64,
//!   then 4 bytes of masked CRC32C over those lengths taken as little-endian uint32s (uint64 for a
//!   string over 4 GiB), then the bytes of every element.
//! - An entry's `crc32c` is the masked CRC32C of the tensor's stored bytes; for DT_STRING it is
//!   taken over the lengths as fixed-width integers (not their varint bytes), the 4 checksum
//!   bytes, and the strings.
//! - "Masked" is LevelDB's `((crc >> 15) | (crc << 17)) + 0xa282ead8`.
//!
//! What is written matches TensorFlow 2.21's `BundleWriter` byte for byte for the same tensors in
//! the same order (the tests in tests/test_tensor_bundle.py compare against files TensorFlow made).
//!
//! Reading checks, before any tensor data is read, that the entry's size is what its dtype and
//! shape need and that it lies inside the shard file, so a crafted index cannot make the reader
//! allocate more than the files hold; every failure is an [`Error`] naming the file and key.
//! Not handled, and refused by name: partitioned variables (entries with `slices`), dtypes
//! without a fixed element size other than DT_STRING (resources, variants), big-endian bundles.
//!
//! The object graph (`_CHECKPOINTABLE_OBJECT_GRAPH`, a scalar DT_STRING) is
//! [`TrackableObjectGraph`], encoded and decoded by [`encode_object_graph`] and
//! [`decode_object_graph`].

mod bundle;
mod dtype;
mod error;
mod proto;
mod table;

use prost::Message;

pub use bundle::{
    data_path, index_path, read_index, read_tensor, write_bundle, BundleReader, Entry, IndexEntry,
    TensorBytes, TensorValue,
};
pub use dtype::DataType;
pub use error::{Error, Result};
pub use proto::{
    ObjectReference, RegisteredSaver, SerializedTensor, SlotVariableReference, TrackableObject,
    TrackableObjectGraph,
};

/// The key TensorFlow stores the serialized [`TrackableObjectGraph`] under.
pub const OBJECT_GRAPH_KEY: &str = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// The object graph as TensorFlow serializes it (fields in number order, defaults left out).
pub fn encode_object_graph(graph: &TrackableObjectGraph) -> Vec<u8> {
    graph.encode_to_vec()
}

/// Parses a serialized object graph and checks that every node id it holds names a node.
pub fn decode_object_graph(bytes: &[u8]) -> Result<TrackableObjectGraph> {
    let graph = TrackableObjectGraph::decode(bytes)
        .map_err(|e| Error::ObjectGraph(format!("not a TrackableObjectGraph proto: {e}")))?;
    let n = graph.nodes.len();
    let check = |node: usize, what: &str, id: i32| {
        if (0..n as i64).contains(&i64::from(id)) {
            Ok(())
        } else {
            Err(Error::ObjectGraph(format!(
                "node {node}: {what} refers to node {id}, but the graph has {n} nodes"
            )))
        }
    };
    for (i, node) in graph.nodes.iter().enumerate() {
        for child in &node.children {
            check(i, &format!("child {:?}", child.local_name), child.node_id)?;
        }
        for slot in &node.slot_variables {
            let what = format!("slot variable {:?}", slot.slot_name);
            check(i, &what, slot.original_variable_node_id)?;
            check(i, &what, slot.slot_variable_node_id)?;
        }
    }
    Ok(graph)
}

#[cfg(test)]
mod tests;
