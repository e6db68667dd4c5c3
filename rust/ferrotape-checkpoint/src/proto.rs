//! The protocol buffers a checkpoint holds, written as structs with prost's derive. Field numbers
//! and wire types follow TensorFlow's .proto files (named above each message); proto3 leaves a
//! field at its default value out, which prost does too, so an encoding here is byte for byte
//! what TensorFlow's serializer writes for the same message.

use prost::Message;

/// `tensorflow.VersionDef` (framework/versions.proto).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct VersionDef {
    #[prost(int32, tag = "1")]
    pub producer: i32,
    #[prost(int32, tag = "2")]
    pub min_consumer: i32,
    #[prost(int32, repeated, tag = "3")]
    pub bad_consumers: Vec<i32>,
}

/// `tensorflow.BundleHeaderProto` (protobuf/tensor_bundle.proto), the value of the key "".
#[derive(Clone, PartialEq, Message)]
pub(crate) struct BundleHeaderProto {
    #[prost(int32, tag = "1")]
    pub num_shards: i32,
    /// `Endianness`: 0 LITTLE, 1 BIG.
    #[prost(int32, tag = "2")]
    pub endianness: i32,
    #[prost(message, optional, tag = "3")]
    pub version: Option<VersionDef>,
}

/// `tensorflow.TensorShapeProto.Dim` (framework/tensor_shape.proto).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Dim {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(string, tag = "2")]
    pub name: String,
}

/// `tensorflow.TensorShapeProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorShapeProto {
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dim>,
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// `tensorflow.TensorSliceProto.Extent` (framework/tensor_slice.proto); `length` is a oneof of
/// one field, so "absent" (the whole dimension) differs from 0.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Extent {
    #[prost(int64, tag = "1")]
    pub start: i64,
    #[prost(int64, optional, tag = "2")]
    pub length: Option<i64>,
}

/// `tensorflow.TensorSliceProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorSliceProto {
    #[prost(message, repeated, tag = "1")]
    pub extent: Vec<Extent>,
}

/// `tensorflow.BundleEntryProto`, the value of every tensor's key.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct BundleEntryProto {
    /// A `DataType` number (an enum is a varint on the wire, as an int32 is).
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    /// Always present in what TensorFlow writes, even for a scalar (an empty message).
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    #[prost(int32, tag = "3")]
    pub shard_id: i32,
    #[prost(int64, tag = "4")]
    pub offset: i64,
    #[prost(int64, tag = "5")]
    pub size: i64,
    /// Masked CRC32C of the tensor's bytes as stored (see the crate docs for DT_STRING).
    #[prost(fixed32, tag = "6")]
    pub crc32c: u32,
    #[prost(message, repeated, tag = "7")]
    pub slices: Vec<TensorSliceProto>,
}

/// `tensorflow.TrackableObjectGraph` (protobuf/trackable_object_graph.proto): the objects of a
/// program that own checkpointed values, stored as a scalar DT_STRING under
/// `_CHECKPOINTABLE_OBJECT_GRAPH`. Node 0 is the root (the `tf.train.Checkpoint`).
#[derive(Clone, PartialEq, Message)]
pub struct TrackableObjectGraph {
    #[prost(message, repeated, tag = "1")]
    pub nodes: Vec<TrackableObject>,
}

/// `TrackableObjectGraph.TrackableObject`: one object, its edges and its saved values.
#[derive(Clone, PartialEq, Message)]
pub struct TrackableObject {
    #[prost(message, repeated, tag = "1")]
    pub children: Vec<ObjectReference>,
    #[prost(message, repeated, tag = "2")]
    pub attributes: Vec<SerializedTensor>,
    #[prost(message, repeated, tag = "3")]
    pub slot_variables: Vec<SlotVariableReference>,
    #[prost(message, optional, tag = "4")]
    pub registered_saver: Option<RegisteredSaver>,
    /// A `google.protobuf.BoolValue`: prost encodes `Option<bool>` as that wrapper (field 1 of
    /// a nested message), so `Some(false)` is an empty message and `None` no field at all.
    #[prost(message, optional, tag = "5")]
    pub has_checkpoint_values: Option<bool>,
}

/// `TrackableObject.ObjectReference`: an edge to `nodes[node_id]` named `local_name`.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectReference {
    #[prost(int32, tag = "1")]
    pub node_id: i32,
    #[prost(string, tag = "2")]
    pub local_name: String,
}

/// `TrackableObject.SerializedTensor`: a value of the object saved under `checkpoint_key`
/// (`name` is "VARIABLE_VALUE" for a variable).
#[derive(Clone, PartialEq, Message)]
pub struct SerializedTensor {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub full_name: String,
    #[prost(string, tag = "3")]
    pub checkpoint_key: String,
    // Field 4 (`optional_restore`) of older TensorFlow is gone from 2.21's proto; a graph that
    // still has it decodes with it skipped, as TensorFlow's parser skips it.
}

/// `TrackableObject.SlotVariableReference`: an optimizer's slot (`"m"`) for a variable.
#[derive(Clone, PartialEq, Message)]
pub struct SlotVariableReference {
    #[prost(int32, tag = "1")]
    pub original_variable_node_id: i32,
    #[prost(string, tag = "2")]
    pub slot_name: String,
    #[prost(int32, tag = "3")]
    pub slot_variable_node_id: i32,
}

/// `tensorflow.RegisteredSaver`: a saver function registered by name that saves the object.
#[derive(Clone, PartialEq, Message)]
pub struct RegisteredSaver {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub object_name: String,
}
