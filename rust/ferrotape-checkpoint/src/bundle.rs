//! Writing and reading the bundle at a prefix: the data shard(s) and the index that describes
//! them (the layout is in the crate docs).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use prost::Message;

use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::proto::{BundleEntryProto, BundleHeaderProto, Dim, TensorShapeProto, VersionDef};
use crate::table::{self, get_varint, mask, put_varint, unmask};

/// The bundle format version TensorFlow writes and this crate reads (`kTensorBundleVersion`).
const BUNDLE_VERSION: i32 = 1;

/// `PREFIX.index`.
pub fn index_path(prefix: &Path) -> PathBuf {
    with_suffix(prefix, ".index")
}

/// `PREFIX.data-SSSSS-of-NNNNN`, the shard `shard` of `num_shards` (TensorFlow's `DataFilename`).
pub fn data_path(prefix: &Path, shard: i32, num_shards: i32) -> PathBuf {
    with_suffix(prefix, &format!(".data-{shard:05}-of-{num_shards:05}"))
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(prefix.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

/// A tensor's contents to write: the raw little-endian elements of a fixed-size dtype, or the
/// elements of a DT_STRING tensor in row-major order.
#[derive(Clone, Debug)]
pub enum TensorBytes<'a> {
    Raw(&'a [u8]),
    Strings(Vec<&'a [u8]>),
}

/// A tensor read back: the same two forms, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensorValue {
    Raw(Vec<u8>),
    Strings(Vec<Vec<u8>>),
}

/// One tensor to write under `key`.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub key: &'a str,
    pub dtype: DataType,
    pub shape: &'a [i64],
    pub data: TensorBytes<'a>,
}

/// What the index says about one tensor, without its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub key: String,
    pub dtype: DataType,
    pub shape: Vec<i64>,
    pub shard_id: i32,
    pub offset: u64,
    pub size: u64,
    /// How many slices a partitioned variable was saved as; 0 for a whole tensor. A sliced entry
    /// has no bytes of its own (each slice has an entry) and [`BundleReader::read`] refuses it.
    pub num_slices: usize,
}

fn element_count(shape: &[i64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &d| {
        u64::try_from(d).ok().and_then(|d| n.checked_mul(d))
    })
}

/// Writes `entries` as the bundle at `prefix` (`PREFIX.index`, `PREFIX.data-00000-of-00001`),
/// creating missing parent directories. Data is laid out in the order given; the index is sorted.
///
/// Both files are written in full under temporary names in the same directory and synced to
/// disk before either is renamed into place, the index last: a save interrupted while writing
/// leaves an earlier bundle at the same prefix as it was. (Between the two renames the old
/// index would meet the new data; reads then fail their checksums instead of returning wrong
/// values. Distinct prefixes per save, as `tf.train.CheckpointManager` uses, avoid even that.)
pub fn write_bundle(prefix: &Path, entries: &[Entry<'_>]) -> Result<()> {
    write_bundle_then(prefix, entries, || Ok(()))
}

/// [`write_bundle`], calling `before_rename` once both temporary files are complete: the tests
/// fail there to stand for a save interrupted before anything was renamed.
pub(crate) fn write_bundle_then(
    prefix: &Path,
    entries: &[Entry<'_>],
    before_rename: impl FnOnce() -> Result<()>,
) -> Result<()> {
    validate(entries)?;
    if let Some(dir) = prefix.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(Error::io(dir))?;
    }
    let final_data = data_path(prefix, 0, 1);
    let final_index = index_path(prefix);
    let temp_data = temp_name(&final_data);
    let temp_index = temp_name(&final_index);
    let result = (|| {
        let protos = write_shard(&temp_data, 0, entries)?;
        let header = BundleHeaderProto {
            num_shards: 1,
            endianness: 0,
            version: Some(VersionDef {
                producer: BUNDLE_VERSION,
                ..Default::default()
            }),
        };
        let keyed = entries.iter().map(|e| e.key).zip(protos);
        write_synced(&temp_index, &index_table(&header, keyed))?;
        before_rename()?;
        fs::rename(&temp_data, &final_data).map_err(Error::io(&final_data))?;
        fs::rename(&temp_index, &final_index).map_err(Error::io(&final_index))?;
        sync_dir(prefix)
    })();
    if result.is_err() {
        // Best effort: the error being returned matters more than a leftover temporary file.
        let _ = fs::remove_file(&temp_data);
        let _ = fs::remove_file(&temp_index);
    }
    result
}

/// Every entry's key and bytes agree with its dtype and shape, before a file is touched.
fn validate(entries: &[Entry<'_>]) -> Result<()> {
    let bad = |key: &str, detail: String| Err(Error::InvalidArgument(format!("{key:?}: {detail}")));
    let mut seen = HashSet::new();
    for e in entries {
        if e.key.is_empty() {
            return bad(
                e.key,
                "the empty key is the bundle's header; name the tensor".into(),
            );
        }
        if !seen.insert(e.key) {
            return bad(e.key, "the key appears twice".into());
        }
        let Some(count) = element_count(e.shape) else {
            return bad(
                e.key,
                format!("shape {:?} has a negative or too large dimension", e.shape),
            );
        };
        match (&e.data, e.dtype) {
            (TensorBytes::Strings(items), DataType::STRING) => {
                if items.len() as u64 != count {
                    return bad(
                        e.key,
                        format!(
                            "{} strings for shape {:?}, expected {count}",
                            items.len(),
                            e.shape
                        ),
                    );
                }
            }
            (TensorBytes::Raw(bytes), dtype) => {
                let Some(size) = dtype.element_size() else {
                    return bad(
                        e.key,
                        format!("dtype {} cannot be written as raw bytes", dtype.name()),
                    );
                };
                let expected = count.checked_mul(size as u64);
                if expected != Some(bytes.len() as u64) {
                    return bad(
                        e.key,
                        format!(
                            "{} bytes for {} of shape {:?}, expected {count} elements of {size} bytes",
                            bytes.len(),
                            dtype.name(),
                            e.shape
                        ),
                    );
                }
            }
            (TensorBytes::Strings(_), dtype) => {
                return bad(
                    e.key,
                    format!(
                        "a list of strings for dtype {}, expected DT_STRING",
                        dtype.name()
                    ),
                )
            }
        }
    }
    Ok(())
}

/// A unique name beside `path` (same directory, so the rename stays on one file system).
fn temp_name(path: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    with_suffix(
        path,
        &format!(".tempstate{}-{nanos}-{n}", std::process::id()),
    )
}

/// Writes `entries`' bytes to the data shard `path` and returns their index entries.
pub(crate) fn write_shard(
    path: &Path,
    shard_id: i32,
    entries: &[Entry<'_>],
) -> Result<Vec<BundleEntryProto>> {
    let file = File::create(path).map_err(Error::io(path))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut offset = 0u64;
    let mut protos = Vec::with_capacity(entries.len());
    for e in entries {
        let (size, crc) = match &e.data {
            TensorBytes::Raw(bytes) => {
                out.write_all(bytes).map_err(Error::io(path))?;
                (bytes.len() as u64, crc32c::crc32c(bytes))
            }
            TensorBytes::Strings(items) => {
                write_strings(&mut out, items).map_err(Error::io(path))?
            }
        };
        protos.push(BundleEntryProto {
            dtype: e.dtype.0,
            shape: Some(shape_proto(e.shape)),
            shard_id,
            offset: offset as i64,
            size: size as i64,
            crc32c: mask(crc),
            slices: Vec::new(),
        });
        offset += size;
    }
    let file = out
        .into_inner()
        .map_err(|e| Error::io(path)(e.into_error()))?;
    file.sync_all().map_err(Error::io(path))?;
    Ok(protos)
}

/// A DT_STRING tensor as TensorFlow's `WriteStringTensor` lays it out: every length as a
/// varint64, the masked CRC32C of those lengths, then the bytes. The entry's checksum covers
/// the lengths *as fixed-width integers* (a uint32 for a string under 4 GiB, which TensorFlow keeps
/// so that older checkpoints still verify, else a uint64), the 4 stored checksum bytes, and the
/// string bytes.
fn write_strings(out: &mut impl Write, items: &[&[u8]]) -> std::io::Result<(u64, u32)> {
    let mut lengths = Vec::with_capacity(items.len());
    let mut crc = 0u32;
    for item in items {
        let len = item.len() as u64;
        put_varint(&mut lengths, len);
        crc = extend_with_length(crc, len);
    }
    let length_checksum = mask(crc).to_le_bytes();
    crc = crc32c::crc32c_append(crc, &length_checksum);
    out.write_all(&lengths)?;
    out.write_all(&length_checksum)?;
    let mut size = (lengths.len() + 4) as u64;
    for item in items {
        out.write_all(item)?;
        crc = crc32c::crc32c_append(crc, item);
        size += item.len() as u64;
    }
    Ok((size, crc))
}

fn extend_with_length(crc: u32, len: u64) -> u32 {
    match u32::try_from(len) {
        Ok(short) => crc32c::crc32c_append(crc, &short.to_le_bytes()),
        Err(_) => crc32c::crc32c_append(crc, &len.to_le_bytes()),
    }
}

fn shape_proto(shape: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: shape
            .iter()
            .map(|&size| Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

/// The index table: the header under "" then every entry, keys in bytewise order.
pub(crate) fn index_table<'a>(
    header: &BundleHeaderProto,
    entries: impl IntoIterator<Item = (&'a str, BundleEntryProto)>,
) -> Vec<u8> {
    let mut sorted: BTreeMap<&[u8], Vec<u8>> = BTreeMap::new();
    sorted.insert(b"", header.encode_to_vec());
    for (key, proto) in entries {
        sorted.insert(key.as_bytes(), proto.encode_to_vec());
    }
    table::build_table(sorted.iter().map(|(k, v)| (*k, v.as_slice())))
}

pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = File::create(path).map_err(Error::io(path))?;
    file.write_all(bytes).map_err(Error::io(path))?;
    file.sync_all().map_err(Error::io(path))
}

/// Makes the renames themselves durable (POSIX keeps directory entries in the directory).
fn sync_dir(prefix: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let dir = match prefix.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(Error::io(dir))?;
    }
    #[cfg(not(unix))]
    let _ = prefix;
    Ok(())
}

/// An opened bundle: its index parsed once, tensors read on demand.
#[derive(Debug)]
pub struct BundleReader {
    prefix: PathBuf,
    index_path: PathBuf,
    num_shards: i32,
    entries: BTreeMap<String, BundleEntryProto>,
}

impl BundleReader {
    /// Reads and checks `PREFIX.index` (not the data).
    pub fn open(prefix: &Path) -> Result<Self> {
        let index_path = index_path(prefix);
        let bytes = fs::read(&index_path).map_err(Error::io(&index_path))?;
        let bad = |detail: String| Error::not_an_index(&index_path, detail);
        let mut rows = table::read_table(&index_path, &bytes)?.into_iter();
        let header = match rows.next() {
            Some((key, value)) if key.is_empty() => BundleHeaderProto::decode(value.as_slice())
                .map_err(|e| bad(format!("the header entry does not parse: {e}")))?,
            _ => return Err(bad("no header entry (the key \"\")".into())),
        };
        check_header(&header).map_err(bad)?;
        let mut entries = BTreeMap::new();
        for (key, value) in rows {
            // A partitioned tensor's slices each have an entry keyed by TensorFlow's
            // `EncodeTensorNameSlice`, binary OrderedCode that starts with a 0 byte; the full
            // tensor's own entry (with `slices`) stands for them, as in `tf.train.list_variables`.
            if key.first() == Some(&0) {
                continue;
            }
            let key = String::from_utf8(key)
                .map_err(|e| bad(format!("key {:?} is not UTF-8", e.as_bytes())))?;
            let entry = BundleEntryProto::decode(value.as_slice())
                .map_err(|e| bad(format!("the entry for key {key} does not parse: {e}")))?;
            let shape = entry.shape.clone().unwrap_or_default();
            if shape.unknown_rank || element_count(&dims(&shape)).is_none() {
                return Err(bad(format!(
                    "the entry for key {key} has an invalid shape {:?}",
                    dims(&shape)
                )));
            }
            entries.insert(key, entry);
        }
        Ok(Self {
            prefix: prefix.to_path_buf(),
            index_path,
            num_shards: header.num_shards,
            entries,
        })
    }

    /// Every tensor's entry, keys in bytewise order.
    pub fn index(&self) -> Vec<IndexEntry> {
        self.entries
            .iter()
            .map(|(key, e)| IndexEntry {
                key: key.clone(),
                dtype: DataType(e.dtype),
                shape: dims(e.shape.as_ref().unwrap_or(&TensorShapeProto::default())),
                shard_id: e.shard_id,
                offset: e.offset.max(0) as u64,
                size: e.size.max(0) as u64,
                num_slices: e.slices.len(),
            })
            .collect()
    }

    /// Reads one tensor. Before any data is read, the entry's size must be what its dtype and
    /// shape need and must lie inside the shard file; after, the checksum must match.
    pub fn read(&self, key: &str) -> Result<TensorValue> {
        let entry = self.entries.get(key).ok_or_else(|| Error::KeyNotFound {
            index: self.index_path.clone(),
            key: key.to_string(),
        })?;
        let dtype = DataType(entry.dtype);
        let shape = dims(entry.shape.as_ref().unwrap_or(&TensorShapeProto::default()));
        let unsupported = |detail: String| Error::unsupported(&self.index_path, key, detail);
        if !entry.slices.is_empty() {
            return Err(unsupported(format!(
                "a partitioned variable saved as {} slices of shape {shape:?}; reading slices \
                 is not supported",
                entry.slices.len()
            )));
        }
        if !dtype.is_supported() {
            return Err(unsupported(format!(
                "dtype {} is not a fixed-size type or DT_STRING",
                dtype.name()
            )));
        }
        if !(0..self.num_shards).contains(&entry.shard_id) {
            return Err(Error::data_loss(
                &self.index_path,
                key,
                format!(
                    "shard {} of a bundle of {} shards",
                    entry.shard_id, self.num_shards
                ),
            ));
        }
        let path = data_path(&self.prefix, entry.shard_id, self.num_shards);
        let loss = |detail: String| Error::data_loss(&path, key, detail);
        let (offset, size) = match (u64::try_from(entry.offset), u64::try_from(entry.size)) {
            (Ok(o), Ok(s)) => (o, s),
            _ => return Err(loss(format!("offset {} size {}", entry.offset, entry.size))),
        };
        // element_count was checked when the index was opened.
        let count = element_count(&shape).unwrap_or(0);
        if let Some(width) = dtype.element_size() {
            if count.checked_mul(width as u64) != Some(size) {
                return Err(loss(format!(
                    "the index gives {size} bytes for {} of shape {shape:?}, which needs \
                     {count} x {width} bytes",
                    dtype.name()
                )));
            }
        } else if count > size {
            // Each string needs at least a one-byte length.
            return Err(loss(format!(
                "{size} bytes cannot hold the lengths of {count} strings"
            )));
        }
        let mut file = File::open(&path).map_err(Error::io(&path))?;
        let file_len = file.metadata().map_err(Error::io(&path))?.len();
        if offset.checked_add(size).is_none_or(|end| end > file_len) {
            return Err(loss(format!(
                "the index places it at bytes [{offset}, {offset} + {size}) but the file is \
                 {file_len} bytes; it is truncated"
            )));
        }
        let mut bytes = vec![0u8; size as usize];
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(Error::io(&path))?;
        let (value, crc) = if dtype == DataType::STRING {
            let (strings, crc) = parse_strings(&bytes, count as usize).map_err(loss)?;
            (TensorValue::Strings(strings), crc)
        } else {
            let crc = crc32c::crc32c(&bytes);
            (TensorValue::Raw(bytes), crc)
        };
        let expected = unmask(entry.crc32c);
        if crc != expected {
            return Err(loss(format!(
                "checksum mismatch: the index says {expected:#010x}, the data gives {crc:#010x}"
            )));
        }
        Ok(value)
    }
}

/// Splits a stored DT_STRING tensor of `count` elements (see [`write_strings`]) and returns it
/// with the checksum of what was read.
fn parse_strings(bytes: &[u8], count: usize) -> std::result::Result<(Vec<Vec<u8>>, u32), String> {
    if bytes.is_empty() && count == 0 {
        // TensorFlow reads a zero-size entry as no strings without checking anything further.
        return Ok((Vec::new(), 0));
    }
    let mut pos = 0;
    let mut crc = 0u32;
    // count <= bytes.len() was checked by the caller, which bounds this allocation.
    let mut lengths = Vec::with_capacity(count);
    for i in 0..count {
        let len = get_varint(bytes, &mut pos)
            .ok_or_else(|| format!("the length of string {i} of {count} does not decode"))?;
        crc = extend_with_length(crc, len);
        lengths.push(len);
    }
    let stored = bytes
        .get(pos..pos + 4)
        .ok_or_else(|| "the bytes end before the lengths' checksum".to_string())?;
    let stored_crc = unmask(u32::from_le_bytes([
        stored[0], stored[1], stored[2], stored[3],
    ]));
    if stored_crc != crc {
        return Err(format!(
            "the string lengths' checksum does not match: stored {stored_crc:#010x}, \
             computed {crc:#010x}"
        ));
    }
    crc = crc32c::crc32c_append(crc, stored);
    pos += 4;
    let total: Option<u64> = lengths.iter().try_fold(0u64, |t, &l| t.checked_add(l));
    if total != Some((bytes.len() - pos) as u64) {
        return Err(format!(
            "the string lengths add up to {total:?} bytes but {} follow them",
            bytes.len() - pos
        ));
    }
    let strings = lengths
        .iter()
        .map(|&len| {
            let item = bytes[pos..pos + len as usize].to_vec();
            pos += len as usize;
            crc = crc32c::crc32c_append(crc, &item);
            item
        })
        .collect();
    Ok((strings, crc))
}

fn dims(shape: &TensorShapeProto) -> Vec<i64> {
    shape.dim.iter().map(|d| d.size).collect()
}

/// The header's format must be one this reader understands (TensorFlow's `CheckVersions` for
/// the bundle version, and little-endian data).
fn check_header(header: &BundleHeaderProto) -> std::result::Result<(), String> {
    let version = header.version.clone().unwrap_or_default();
    if version.min_consumer > BUNDLE_VERSION || version.bad_consumers.contains(&BUNDLE_VERSION) {
        return Err(format!(
            "the bundle needs a reader of version {} (bad: {:?}); this one is version \
             {BUNDLE_VERSION}",
            version.min_consumer, version.bad_consumers
        ));
    }
    if header.endianness != 0 {
        return Err("the bundle was written big-endian; only little-endian is read".into());
    }
    if header.num_shards < 1 {
        return Err(format!(
            "the header declares {} data shards",
            header.num_shards
        ));
    }
    Ok(())
}

/// Reads `PREFIX.index`: every tensor's entry without its data.
pub fn read_index(prefix: &Path) -> Result<Vec<IndexEntry>> {
    Ok(BundleReader::open(prefix)?.index())
}

/// Reads one tensor (opening the index each call: use [`BundleReader`] for several).
pub fn read_tensor(prefix: &Path, key: &str) -> Result<TensorValue> {
    BundleReader::open(prefix)?.read(key)
}
