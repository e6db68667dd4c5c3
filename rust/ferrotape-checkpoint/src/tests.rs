//! Bundles written and read back, TensorFlow's own files reproduced byte for byte, and every
//! kind of corrupt file refused with its error.

use std::fs;
use std::path::{Path, PathBuf};

use prost::Message;

use crate::bundle::{index_table, write_shard};
use crate::proto::{BundleEntryProto, BundleHeaderProto, TensorSliceProto, VersionDef};
use crate::*;

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "ferrotape-checkpoint-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn prefix(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn raw<'a>(key: &'a str, dtype: DataType, shape: &'a [i64], data: &'a [u8]) -> Entry<'a> {
    Entry {
        key,
        dtype,
        shape,
        data: TensorBytes::Raw(data),
    }
}

fn strings<'a>(key: &'a str, shape: &'a [i64], items: &[&'a [u8]]) -> Entry<'a> {
    Entry {
        key,
        dtype: DataType::STRING,
        shape,
        data: TensorBytes::Strings(items.to_vec()),
    }
}

/// Every dtype this crate writes, with the element width it implies.
const FIXED: [DataType; 15] = [
    DataType::FLOAT,
    DataType::DOUBLE,
    DataType::INT32,
    DataType::UINT8,
    DataType::INT16,
    DataType::INT8,
    DataType::COMPLEX64,
    DataType::INT64,
    DataType::BOOL,
    DataType::BFLOAT16,
    DataType::UINT16,
    DataType::COMPLEX128,
    DataType::HALF,
    DataType::UINT32,
    DataType::UINT64,
];

#[test]
fn every_dtype_round_trips() {
    let dir = TempDir::new("dtypes");
    let prefix = dir.prefix("nested/dir/ckpt");
    let keys: Vec<String> = FIXED.iter().map(|t| format!("v/{}", t.0)).collect();
    let shape = [2i64, 3];
    let data: Vec<Vec<u8>> = FIXED
        .iter()
        .map(|t| {
            (0..6 * t.element_size().unwrap())
                .map(|i| (i * 7 + t.0 as usize) as u8)
                .collect()
        })
        .collect();
    let entries: Vec<Entry> = FIXED
        .iter()
        .zip(&keys)
        .zip(&data)
        .map(|((&t, k), d)| raw(k, t, &shape, d))
        .collect();
    write_bundle(&prefix, &entries).unwrap();
    let reader = BundleReader::open(&prefix).unwrap();
    let index = reader.index();
    assert_eq!(index.len(), FIXED.len());
    for ((&t, k), d) in FIXED.iter().zip(&keys).zip(&data) {
        let e = index.iter().find(|e| &e.key == k).unwrap();
        assert_eq!(
            (e.dtype, e.shape.as_slice(), e.size),
            (t, &shape[..], d.len() as u64)
        );
        assert_eq!(reader.read(k).unwrap(), TensorValue::Raw(d.clone()));
    }
    // Nothing but the two files is left in the directory (no temporary files).
    let mut names: Vec<_> = fs::read_dir(prefix.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["ckpt.data-00000-of-00001", "ckpt.index"]);
}

#[test]
fn string_tensors_round_trip_with_their_layout() {
    let dir = TempDir::new("strings");
    let prefix = dir.prefix("ckpt");
    let long = vec![b'x'; 300];
    let items: [&[u8]; 4] = [b"", b"ab", b"\x00\xff", &long];
    write_bundle(
        &prefix,
        &[
            strings("s", &[2, 2], &items),
            strings("scalar", &[], &[b"graph"]),
            strings("empty", &[0], &[]),
        ],
    )
    .unwrap();
    let reader = BundleReader::open(&prefix).unwrap();
    let want: Vec<Vec<u8>> = items.iter().map(|s| s.to_vec()).collect();
    assert_eq!(reader.read("s").unwrap(), TensorValue::Strings(want));
    assert_eq!(
        reader.read("scalar").unwrap(),
        TensorValue::Strings(vec![b"graph".to_vec()])
    );
    assert_eq!(reader.read("empty").unwrap(), TensorValue::Strings(vec![]));
    // Lengths 0, 2, 2, 300 as varints (300 takes two bytes), 4 checksum bytes, then 304 bytes.
    let data = fs::read(data_path(&prefix, 0, 1)).unwrap();
    assert_eq!(&data[..5], &[0, 2, 2, 0xac, 0x02]);
    let s = reader.index().into_iter().find(|e| e.key == "s").unwrap();
    assert_eq!((s.offset, s.size), (0, 5 + 4 + 304));
}

#[test]
fn an_empty_bundle_has_only_its_header() {
    let dir = TempDir::new("empty");
    let prefix = dir.prefix("ckpt");
    write_bundle(&prefix, &[]).unwrap();
    assert!(read_index(&prefix).unwrap().is_empty());
    assert_eq!(fs::read(data_path(&prefix, 0, 1)).unwrap().len(), 0);
}

#[test]
fn rewriting_a_prefix_replaces_the_bundle() {
    let dir = TempDir::new("rewrite");
    let prefix = dir.prefix("ckpt");
    write_bundle(&prefix, &[raw("a", DataType::INT8, &[1], &[1])]).unwrap();
    write_bundle(&prefix, &[raw("b", DataType::INT8, &[2], &[2, 3])]).unwrap();
    let keys: Vec<_> = read_index(&prefix)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, ["b"]);
    assert_eq!(
        read_tensor(&prefix, "b").unwrap(),
        TensorValue::Raw(vec![2, 3])
    );
}

#[test]
fn an_interrupted_write_leaves_the_previous_bundle_and_no_temporary_files() {
    let dir = TempDir::new("interrupted");
    let prefix = dir.prefix("ckpt");
    write_bundle(&prefix, &[raw("a", DataType::INT8, &[1], &[7])]).unwrap();
    let big = vec![1u8; 1 << 20];
    let temps = || {
        fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains(".tempstate"))
            .count()
    };
    let err = crate::bundle::write_bundle_then(
        &prefix,
        &[raw("b", DataType::UINT8, &[1 << 20], &big)],
        || {
            // Both new files exist in full beside the old ones, and nothing is renamed yet.
            assert_eq!(temps(), 2);
            Err(Error::InvalidArgument("interrupted".into()))
        },
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "write_bundle: interrupted");
    assert_eq!(temps(), 0);
    assert_eq!(
        read_tensor(&prefix, "a").unwrap(),
        TensorValue::Raw(vec![7])
    );
    assert!(matches!(
        read_tensor(&prefix, "b"),
        Err(Error::KeyNotFound { .. })
    ));
    // A directory where the index goes: the failure is the file system's, with the path.
    let blocked = dir.prefix("blocked");
    fs::create_dir_all(index_path(&blocked)).unwrap();
    let err = write_bundle(&blocked, &[raw("a", DataType::INT8, &[1], &[8])]).unwrap_err();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("blocked.index"),
        "{err}"
    );
    assert_eq!(temps(), 0);
}

#[test]
fn bad_entries_are_refused_before_writing() {
    let dir = TempDir::new("invalid");
    let prefix = dir.prefix("ckpt");
    let cases: Vec<(Vec<Entry>, &str)> = vec![
        (vec![raw("", DataType::INT8, &[1], &[1])], "the empty key"),
        (
            vec![
                raw("a", DataType::INT8, &[1], &[1]),
                raw("a", DataType::INT8, &[1], &[1]),
            ],
            "appears twice",
        ),
        (
            vec![raw("a", DataType::FLOAT, &[2], &[0; 4])],
            "expected 2 elements of 4 bytes",
        ),
        (vec![raw("a", DataType::FLOAT, &[-1], &[])], "negative"),
        (
            vec![strings("a", &[3], &[b"x"])],
            "1 strings for shape [3], expected 3",
        ),
        (
            vec![raw("a", DataType(21), &[], &[])],
            "DT_VARIANT (21) cannot be written",
        ),
        (
            vec![raw("a", DataType::STRING, &[], &[])],
            "DT_STRING (7) cannot be written",
        ),
    ];
    for (entries, part) in cases {
        let err = write_bundle(&prefix, &entries).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument(_)) && err.to_string().contains(part),
            "{err}"
        );
    }
    assert!(!index_path(&prefix).exists() && !data_path(&prefix, 0, 1).exists());
}

/// A bundle of two shards, as TensorFlow's sharded saves merge them.
fn write_two_shards(prefix: &Path) {
    let a = [raw("a", DataType::INT32, &[2], &[1, 0, 0, 0, 2, 0, 0, 0])];
    let b = [
        raw("b", DataType::INT8, &[3], &[9, 8, 7]),
        strings("c", &[], &[b"hi"]),
    ];
    let mut protos = write_shard(&data_path(prefix, 0, 2), 0, &a).unwrap();
    protos.extend(write_shard(&data_path(prefix, 1, 2), 1, &b).unwrap());
    let header = BundleHeaderProto {
        num_shards: 2,
        endianness: 0,
        version: Some(VersionDef {
            producer: 1,
            ..Default::default()
        }),
    };
    let table = index_table(&header, ["a", "b", "c"].into_iter().zip(protos));
    fs::write(index_path(prefix), table).unwrap();
}

#[test]
fn a_bundle_of_several_shards_reads_each_from_its_file() {
    let dir = TempDir::new("shards");
    let prefix = dir.prefix("ckpt");
    write_two_shards(&prefix);
    let reader = BundleReader::open(&prefix).unwrap();
    let shards: Vec<_> = reader
        .index()
        .iter()
        .map(|e| (e.shard_id, e.offset))
        .collect();
    assert_eq!(shards, [(0, 0), (1, 0), (1, 3)]);
    assert_eq!(
        reader.read("a").unwrap(),
        TensorValue::Raw(vec![1, 0, 0, 0, 2, 0, 0, 0])
    );
    assert_eq!(reader.read("b").unwrap(), TensorValue::Raw(vec![9, 8, 7]));
    assert_eq!(
        reader.read("c").unwrap(),
        TensorValue::Strings(vec![b"hi".to_vec()])
    );
    fs::remove_file(data_path(&prefix, 1, 2)).unwrap();
    let err = reader.read("b").unwrap_err();
    assert!(
        err.to_string().contains("ckpt.data-00001-of-00002"),
        "{err}"
    );
}

/// The index rewritten with one entry changed, everything else as written.
fn patch_entry(prefix: &Path, key: &str, patch: impl FnOnce(&mut BundleEntryProto)) {
    let path = index_path(prefix);
    let rows = table::read_table(&path, &fs::read(&path).unwrap()).unwrap();
    let header = BundleHeaderProto::decode(rows[0].1.as_slice()).unwrap();
    let mut entries: Vec<(String, BundleEntryProto)> = rows[1..]
        .iter()
        .map(|(k, v)| {
            let key = String::from_utf8(k.clone()).unwrap();
            (key, BundleEntryProto::decode(v.as_slice()).unwrap())
        })
        .collect();
    patch(&mut entries.iter_mut().find(|(k, _)| k == key).unwrap().1);
    let table = index_table(
        &header,
        entries.iter().map(|(k, e)| (k.as_str(), e.clone())),
    );
    fs::write(path, table).unwrap();
}

fn small_bundle(dir: &TempDir) -> PathBuf {
    let prefix = dir.prefix("ckpt");
    let floats: Vec<u8> = [1.5f32, -2.0, 3.25]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    write_bundle(
        &prefix,
        &[
            raw("w", DataType::FLOAT, &[3], &floats),
            strings("s", &[2], &[b"one", b"two"]),
        ],
    )
    .unwrap();
    prefix
}

fn message(result: Result<impl std::fmt::Debug>) -> (String, Error) {
    let err = result.unwrap_err();
    (err.to_string(), err)
}

#[test]
fn a_missing_key_or_file_is_named() {
    let dir = TempDir::new("missing");
    let prefix = small_bundle(&dir);
    let (msg, err) = message(read_tensor(&prefix, "nope"));
    assert!(matches!(err, Error::KeyNotFound { .. }), "{msg}");
    assert!(msg.starts_with("Key nope not found in checkpoint") && msg.contains("ckpt.index"));
    let (msg, err) = message(read_index(&dir.prefix("absent")));
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
    assert!(msg.contains("absent.index"), "{msg}");
}

#[test]
fn a_file_that_is_not_an_index_is_named() {
    let dir = TempDir::new("notindex");
    let prefix = small_bundle(&dir);
    let path = index_path(&prefix);
    let good = fs::read(&path).unwrap();
    let cases: [(Vec<u8>, &str); 4] = [
        (b"{\"this\": \"is json\"}".repeat(4), "bad magic number"),
        (good[..good.len() - 1].to_vec(), "bad magic number"),
        (good[..30].to_vec(), "shorter than the 48-byte table footer"),
        (
            {
                let mut flipped = good.clone();
                flipped[10] ^= 1;
                flipped
            },
            "checksum mismatch",
        ),
    ];
    for (bytes, part) in cases {
        fs::write(&path, &bytes).unwrap();
        let (msg, err) = message(read_index(&prefix));
        assert!(matches!(err, Error::NotAnIndex { .. }), "{msg}");
        assert!(
            msg.starts_with("not a TensorFlow checkpoint index: ") && msg.contains(part),
            "{msg}"
        );
        assert!(msg.contains("ckpt.index"), "{msg}");
    }
    // A valid table without the header entry.
    fs::write(&path, table::build_table([(&b"k"[..], &b"v"[..])])).unwrap();
    assert!(message(read_index(&prefix)).0.contains("no header entry"));
}

#[test]
fn corrupt_or_truncated_data_is_named_with_file_and_key() {
    let dir = TempDir::new("dataloss");
    let prefix = small_bundle(&dir);
    let data = data_path(&prefix, 0, 1);
    let good = fs::read(&data).unwrap();
    let mut flipped = good.clone();
    flipped[1] ^= 4;
    fs::write(&data, &flipped).unwrap();
    let (msg, err) = message(read_tensor(&prefix, "w"));
    assert!(matches!(err, Error::DataLoss { .. }), "{msg}");
    assert!(
        msg.contains("key w") && msg.contains("checksum mismatch"),
        "{msg}"
    );
    assert!(msg.contains("ckpt.data-00000-of-00001"), "{msg}");
    // A string's length changed: the lengths' own checksum catches it.
    let mut flipped = good.clone();
    flipped[12] = 4;
    fs::write(&data, &flipped).unwrap();
    assert!(message(read_tensor(&prefix, "s"))
        .0
        .contains("lengths' checksum"));
    fs::write(&data, &good[..14]).unwrap();
    let (msg, _) = message(read_tensor(&prefix, "s"));
    assert!(msg.contains("truncated") && msg.contains("key s"), "{msg}");
}

#[test]
fn an_oversized_declared_entry_is_refused_before_reading() {
    let dir = TempDir::new("oversized");
    let prefix = small_bundle(&dir);
    // A size that disagrees with dtype x shape, and a shape whose bytes exceed the file.
    patch_entry(&prefix, "w", |e| e.size = 1 << 50);
    let (msg, _) = message(read_tensor(&prefix, "w"));
    assert!(msg.contains("needs 3 x 4 bytes"), "{msg}");
    patch_entry(&prefix, "w", |e| {
        e.shape.as_mut().unwrap().dim[0].size = 1 << 40;
        e.size = 4 << 40;
    });
    let (msg, _) = message(read_tensor(&prefix, "w"));
    assert!(msg.contains("it is truncated"), "{msg}");
    // A string tensor claiming more elements than its bytes can describe.
    patch_entry(&prefix, "s", |e| {
        e.shape.as_mut().unwrap().dim[0].size = 1 << 40
    });
    assert!(message(read_tensor(&prefix, "s"))
        .0
        .contains("cannot hold the lengths"));
    // A shape whose element count overflows is refused when the index opens.
    patch_entry(&prefix, "w", |e| {
        e.shape.as_mut().unwrap().dim = vec![
            proto::Dim {
                size: i64::MAX,
                name: String::new()
            };
            2
        ];
    });
    assert!(message(read_index(&prefix)).0.contains("invalid shape"));
}

#[test]
fn partitioned_and_unreadable_entries_are_listed_but_refused() {
    let dir = TempDir::new("slices");
    let prefix = small_bundle(&dir);
    patch_entry(&prefix, "w", |e| {
        e.slices = vec![TensorSliceProto::default(); 2]
    });
    let w = read_index(&prefix)
        .unwrap()
        .into_iter()
        .find(|e| e.key == "w")
        .unwrap();
    assert_eq!(w.num_slices, 2);
    let (msg, err) = message(read_tensor(&prefix, "w"));
    assert!(matches!(err, Error::Unsupported { .. }), "{msg}");
    assert!(
        msg.contains("partitioned variable saved as 2 slices"),
        "{msg}"
    );
    patch_entry(&prefix, "s", |e| e.dtype = 20);
    assert!(message(read_tensor(&prefix, "s"))
        .0
        .contains("DT_RESOURCE (20)"));
}

#[test]
fn the_header_is_what_tensorflow_writes() {
    let dir = TempDir::new("header");
    let prefix = small_bundle(&dir);
    let path = index_path(&prefix);
    let rows = table::read_table(&path, &fs::read(&path).unwrap()).unwrap();
    // num_shards 1, endianness LITTLE left out, version { producer: 1 }.
    assert_eq!(rows[0], (vec![], vec![0x08, 0x01, 0x1a, 0x02, 0x08, 0x01]));
    // A scalar's shape is present and empty, as TensorShape::AsProto leaves it.
    let scalar = BundleEntryProto {
        dtype: 9,
        shape: Some(Default::default()),
        size: 8,
        ..Default::default()
    };
    assert_eq!(scalar.encode_to_vec()[..4], [0x08, 0x09, 0x12, 0x00]);
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/tf_checkpoints")
        .join(name)
}

/// TensorFlow's own files (written by scripts/make_tf_checkpoint_fixtures.py): read, then written
/// again from what was read in TensorFlow's data order, they come out byte for byte the same.
#[test]
fn tensorflow_bundles_are_reproduced_byte_for_byte() {
    let dir = TempDir::new("reproduce");
    for name in ["dtypes", "keras_model", "slot_variables"] {
        let prefix = fixture(name).join("ckpt");
        let reader = BundleReader::open(&prefix).unwrap();
        let mut index = reader.index();
        index.sort_by_key(|e| e.offset);
        let values: Vec<TensorValue> = index.iter().map(|e| reader.read(&e.key).unwrap()).collect();
        let entries: Vec<Entry> = index
            .iter()
            .zip(&values)
            .map(|(e, v)| Entry {
                key: &e.key,
                dtype: e.dtype,
                shape: &e.shape,
                data: match v {
                    TensorValue::Raw(bytes) => TensorBytes::Raw(bytes),
                    TensorValue::Strings(items) => {
                        TensorBytes::Strings(items.iter().map(Vec::as_slice).collect())
                    }
                },
            })
            .collect();
        let copy = dir.prefix(name);
        write_bundle(&copy, &entries).unwrap();
        for (theirs, ours) in [
            (index_path(&prefix), index_path(&copy)),
            (data_path(&prefix, 0, 1), data_path(&copy, 0, 1)),
        ] {
            assert!(
                fs::read(&theirs).unwrap() == fs::read(&ours).unwrap(),
                "{name}: {theirs:?}"
            );
        }
        // The object graph re-encodes to TensorFlow's bytes.
        let TensorValue::Strings(graph) = reader.read(OBJECT_GRAPH_KEY).unwrap() else {
            panic!("{name}: the object graph is not a string tensor");
        };
        let decoded = decode_object_graph(&graph[0]).unwrap();
        assert!(!decoded.nodes.is_empty());
        assert_eq!(encode_object_graph(&decoded), graph[0], "{name}");
    }
}

#[test]
fn tensorflow_sharded_bundles_read_every_shard() {
    let prefix = fixture("sharded").join("ckpt");
    let reader = BundleReader::open(&prefix).unwrap();
    let index = reader.index();
    let shards: std::collections::BTreeSet<i32> = index.iter().map(|e| e.shard_id).collect();
    assert_eq!(shards.len(), 2);
    for e in &index {
        let value = reader.read(&e.key).unwrap();
        if let TensorValue::Raw(bytes) = value {
            assert_eq!(bytes.len(), 64, "{}", e.key);
        }
    }
}

/// TensorFlow's `MaxShardSizePolicy` splits variables that do not fit a shard into slices: the
/// index lists each variable once, with its slices counted, and reading one is refused by name.
#[test]
fn tensorflow_sliced_variables_are_listed_once_and_refused() {
    let prefix = fixture("sliced").join("ckpt");
    let reader = BundleReader::open(&prefix).unwrap();
    let index = reader.index();
    let keys: Vec<&str> = index.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    let sliced: Vec<&IndexEntry> = index.iter().filter(|e| e.num_slices > 0).collect();
    assert!(!sliced.is_empty());
    for e in &index {
        match reader.read(&e.key) {
            Ok(_) => assert_eq!(e.num_slices, 0),
            Err(err) => {
                assert!(
                    e.num_slices > 0 && matches!(err, Error::Unsupported { .. }),
                    "{err}"
                );
                assert!(err.to_string().contains("partitioned variable"), "{err}");
            }
        }
    }
}

#[test]
fn object_graphs_round_trip_and_encode_wrappers_as_tensorflow_does() {
    let graph = TrackableObjectGraph {
        nodes: vec![
            TrackableObject {
                children: vec![ObjectReference {
                    node_id: 1,
                    local_name: "v".into(),
                }],
                has_checkpoint_values: Some(true),
                ..Default::default()
            },
            TrackableObject {
                attributes: vec![SerializedTensor {
                    name: "VARIABLE_VALUE".into(),
                    full_name: "Variable".into(),
                    checkpoint_key: "v/.ATTRIBUTES/VARIABLE_VALUE".into(),
                }],
                slot_variables: vec![SlotVariableReference {
                    original_variable_node_id: 1,
                    slot_name: "m".into(),
                    slot_variable_node_id: 0,
                }],
                registered_saver: Some(RegisteredSaver {
                    name: "saver".into(),
                    object_name: "obj".into(),
                }),
                has_checkpoint_values: Some(false),
                children: Vec::new(),
            },
        ],
    };
    let bytes = encode_object_graph(&graph);
    assert_eq!(decode_object_graph(&bytes).unwrap(), graph);
    // Node 0: children {node_id 1, "v"}, then has_checkpoint_values = BoolValue{true}.
    assert_eq!(
        &bytes[..13],
        &[0x0a, 0x0b, 0x0a, 0x05, 0x08, 0x01, 0x12, 0x01, b'v', 0x2a, 0x02, 0x08, 0x01]
    );
    // BoolValue{false} is present and empty: `2a 00` ends node 1.
    assert_eq!(&bytes[bytes.len() - 2..], &[0x2a, 0x00]);
}

#[test]
fn object_graphs_that_do_not_parse_or_point_nowhere_are_refused() {
    let (msg, err) = message(decode_object_graph(b"\x0a\xff"));
    assert!(matches!(err, Error::ObjectGraph(_)) && msg.contains("not a TrackableObjectGraph"));
    let dangling = TrackableObjectGraph {
        nodes: vec![TrackableObject {
            children: vec![ObjectReference {
                node_id: 3,
                local_name: "x".into(),
            }],
            ..Default::default()
        }],
    };
    let (msg, _) = message(decode_object_graph(&encode_object_graph(&dangling)));
    assert!(
        msg.contains("node 0: child \"x\" refers to node 3, but the graph has 1 nodes"),
        "{msg}"
    );
}
