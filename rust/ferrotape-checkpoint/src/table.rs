//! The index file's container: TensorFlow's copy of LevelDB's table format
//! (tensorflow/core/lib/io/table_builder.cc, block_builder.cc, format.cc), written and read here.
//!
//! Why by hand: the Rust crates that read and write this format (`sstable`, the table modules of
//! `rusty-leveldb`, which keeps them private) size a block's buffer from the handle stored in the
//! file and index blocks with `unwrap` and unchecked slices, so a crafted or truncated index
//! would allocate what it declares or panic; and they cut blocks by LevelDB's rules, not
//! TensorFlow's (256 KiB blocks, a separate block for an entry of twice that), so their files
//! would not be TensorFlow's byte for byte. The format is small.
//!
//! Layout, all integers little-endian:
//! - data blocks, then an empty metaindex block, then the index block; each block is followed by
//!   a 5-byte trailer: the compression type (0, none: TensorFlow writes checkpoint indexes
//!   uncompressed) and the masked CRC32C of the block and that type byte;
//! - a block is a run of entries `varint32 shared, varint32 non_shared, varint32 value_len,
//!   key[shared..], value`, where `shared` bytes of the key are the previous key's; every 16th
//!   entry (every entry in the index block) is a restart point with `shared = 0`, and the block
//!   ends with the restart offsets (fixed32 each) and their count (fixed32);
//! - the index block maps, for each data block, a key `>=` its last key and `<` the next block's
//!   first key (the shortest such) to the block's handle `varint64 offset, varint64 size`;
//! - a 48-byte footer: the metaindex and index handles, zero padding to 40 bytes, and the magic
//!   number 0xdb4775248b80fb57.

use std::path::Path;

use crate::error::{Error, Result};

const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const FOOTER_LEN: usize = 48;
/// Compression type byte + masked CRC32C.
const TRAILER_LEN: usize = 5;
/// TensorFlow's `table::Options` defaults (table_options.h), which its bundle writer keeps.
const BLOCK_SIZE: usize = 262_144;
const RESTART_INTERVAL: usize = 16;
/// A real index's keys are at most this many times its bytes (see [`read_table`]).
const KEY_EXPANSION_BOUND: usize = RESTART_INTERVAL;

/// CRC32C as LevelDB and TensorFlow store it: rotated and offset, so that a checksum of bytes
/// that themselves contain checksums does not degenerate.
pub(crate) fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

pub(crate) fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(0xa282_ead8).rotate_left(15)
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a varint64 at `*pos`, advancing it; `None` if the bytes end first or it runs past
/// ten bytes.
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

fn fixed32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// One block being filled: prefix-compressed entries and restart points.
struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    interval: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    fn new(interval: usize) -> Self {
        Self {
            buf: Vec::new(),
            restarts: vec![0],
            since_restart: 0,
            interval,
            last_key: Vec::new(),
        }
    }

    fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart < self.interval {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.since_restart += 1;
    }

    fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The finished block, leaving the builder empty.
    fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        *self = Self::new(self.interval);
        out
    }
}

#[derive(Clone, Copy, Debug)]
struct Handle {
    offset: u64,
    size: u64,
}

impl Handle {
    fn encode(self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }
}

/// Appends a block and its trailer to `file`.
fn write_block(file: &mut Vec<u8>, block: &mut BlockBuilder) -> Handle {
    let contents = block.finish();
    let handle = Handle {
        offset: file.len() as u64,
        size: contents.len() as u64,
    };
    let crc = crc32c::crc32c_append(crc32c::crc32c(&contents), &[0]);
    file.extend_from_slice(&contents);
    file.push(0);
    file.extend_from_slice(&mask(crc).to_le_bytes());
    handle
}

/// The shortest key `>= start` and `< limit` that shares `start`'s prefix (LevelDB's bytewise
/// `FindShortestSeparator`).
fn shortest_separator(start: &mut Vec<u8>, limit: &[u8]) {
    let common = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
    if common < start.len().min(limit.len()) {
        let byte = start[common];
        if byte < 0xff && byte + 1 < limit[common] {
            start[common] += 1;
            start.truncate(common + 1);
        }
    }
}

/// The shortest key `>= key` (`FindShortSuccessor`).
fn short_successor(key: &mut Vec<u8>) {
    if let Some(i) = key.iter().position(|&b| b != 0xff) {
        key[i] += 1;
        key.truncate(i + 1);
    }
}

/// A whole table holding `entries`, whose keys must be strictly increasing bytewise; cut into
/// blocks where TensorFlow's `TableBuilder` cuts them.
pub(crate) fn build_table<'a>(entries: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> Vec<u8> {
    let mut file = Vec::new();
    let mut data = BlockBuilder::new(RESTART_INTERVAL);
    let mut index = BlockBuilder::new(1);
    let mut last_key: Vec<u8> = Vec::new();
    // A block's index entry waits for the next block's first key, to pick a short separator.
    let mut pending: Option<Handle> = None;
    let mut first = true;
    for (key, value) in entries {
        debug_assert!(first || key > last_key.as_slice(), "keys must increase");
        // An entry of twice the block size goes in a block of its own.
        if !first && key.len() + value.len() >= 2 * BLOCK_SIZE && !data.is_empty() {
            pending = Some(write_block(&mut file, &mut data));
        }
        if let Some(handle) = pending.take() {
            shortest_separator(&mut last_key, key);
            let mut encoded = Vec::new();
            handle.encode(&mut encoded);
            index.add(&last_key, &encoded);
        }
        last_key.clear();
        last_key.extend_from_slice(key);
        first = false;
        data.add(key, value);
        if data.size_estimate() >= BLOCK_SIZE {
            pending = Some(write_block(&mut file, &mut data));
        }
    }
    if !data.is_empty() {
        pending = Some(write_block(&mut file, &mut data));
    }
    let metaindex = write_block(&mut file, &mut BlockBuilder::new(RESTART_INTERVAL));
    if let Some(handle) = pending {
        short_successor(&mut last_key);
        let mut encoded = Vec::new();
        handle.encode(&mut encoded);
        index.add(&last_key, &encoded);
    }
    let index_handle = write_block(&mut file, &mut index);
    let footer_start = file.len();
    metaindex.encode(&mut file);
    index_handle.encode(&mut file);
    file.resize(footer_start + FOOTER_LEN - 8, 0);
    file.extend_from_slice(&(MAGIC as u32).to_le_bytes());
    file.extend_from_slice(&((MAGIC >> 32) as u32).to_le_bytes());
    file
}

/// Every entry of a table, in order. `file` is the whole file and `path` names it in errors.
///
/// Every length read from the file is checked against the bytes actually there before it is
/// used, so nothing is allocated beyond what the file holds, with one multiplier: a key shares
/// its prefix with the previous key, so a crafted block could rebuild one long key many times.
/// A writer that starts a restart run every 16 entries (TensorFlow, LevelDB) produces at most
/// 16 times the file's bytes in keys; more than that is refused as corrupt.
pub(crate) fn read_table(path: &Path, file: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let bad = |detail: String| Error::not_an_index(path, detail);
    if file.len() < FOOTER_LEN {
        return Err(bad(format!(
            "the file is {} bytes, shorter than the {FOOTER_LEN}-byte table footer",
            file.len()
        )));
    }
    let footer = &file[file.len() - FOOTER_LEN..];
    let magic = u64::from(fixed32(footer, 40)) | (u64::from(fixed32(footer, 44)) << 32);
    if magic != MAGIC {
        return Err(bad(format!(
            "bad magic number {magic:#018x} at the end of the file, expected {MAGIC:#018x}"
        )));
    }
    let mut pos = 0;
    let mut handle = || -> Result<Handle> {
        let offset = get_varint(footer, &mut pos);
        let size = get_varint(footer, &mut pos);
        match (offset, size) {
            (Some(offset), Some(size)) if pos <= FOOTER_LEN - 8 => Ok(Handle { offset, size }),
            _ => Err(bad("the footer's block handles do not decode".into())),
        }
    };
    let _metaindex = handle()?;
    let index_handle = handle()?;

    let mut budget = KEY_EXPANSION_BOUND.saturating_mul(file.len());
    let index = read_block(path, file, index_handle, "index")?;
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (_separator, encoded) in block_entries(path, index, &mut budget, "index")? {
        let mut p = 0;
        let data_handle = match (get_varint(&encoded, &mut p), get_varint(&encoded, &mut p)) {
            (Some(offset), Some(size)) => Handle { offset, size },
            _ => return Err(bad("an index entry's block handle does not decode".into())),
        };
        let data = read_block(path, file, data_handle, "data")?;
        for (key, value) in block_entries(path, data, &mut budget, "data")? {
            if let Some((last, _)) = out.last() {
                if key <= *last {
                    return Err(bad(format!(
                        "keys are not in increasing order ({:?} after {:?})",
                        String::from_utf8_lossy(&key),
                        String::from_utf8_lossy(last)
                    )));
                }
            }
            out.push((key, value));
        }
    }
    Ok(out)
}

/// A block's contents (without trailer), after checking that it lies inside the file, that its
/// checksum matches and that it is uncompressed.
fn read_block<'f>(path: &Path, file: &'f [u8], handle: Handle, what: &str) -> Result<&'f [u8]> {
    let bad = |detail: String| Error::not_an_index(path, detail);
    let end = handle
        .offset
        .checked_add(handle.size)
        .and_then(|e| e.checked_add(TRAILER_LEN as u64))
        .filter(|&e| e <= (file.len() - FOOTER_LEN) as u64)
        .ok_or_else(|| {
            bad(format!(
                "the {what} block at offset {} of {} bytes runs past the end of the file \
                 ({} bytes before the footer); the file is truncated",
                handle.offset,
                handle.size,
                file.len() - FOOTER_LEN
            ))
        })? as usize;
    let start = handle.offset as usize;
    let contents = &file[start..end - TRAILER_LEN];
    let kind = file[end - TRAILER_LEN];
    let stored = unmask(fixed32(file, end - 4));
    let actual = crc32c::crc32c_append(crc32c::crc32c(contents), &[kind]);
    if stored != actual {
        return Err(bad(format!(
            "checksum mismatch in the {what} block at offset {start}: stored {stored:#010x}, \
             computed {actual:#010x}"
        )));
    }
    match kind {
        0 => Ok(contents),
        1 => Err(bad(format!(
            "the {what} block at offset {start} is Snappy-compressed; TensorFlow writes \
             checkpoint indexes uncompressed and this reader does not decompress"
        ))),
        other => Err(bad(format!(
            "unknown compression type {other} in the {what} block at offset {start}"
        ))),
    }
}

/// The (key, value) pairs of one block, keys rebuilt from their shared prefixes; `budget` is the
/// key bytes still allowed (see [`read_table`]).
fn block_entries(
    path: &Path,
    block: &[u8],
    budget: &mut usize,
    what: &str,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let bad = |detail: String| Error::not_an_index(path, format!("{what} block: {detail}"));
    if block.len() < 4 {
        return Err(bad(format!("{} bytes, too short for a block", block.len())));
    }
    let restarts = fixed32(block, block.len() - 4) as usize;
    let end = restarts
        .checked_mul(4)
        .and_then(|r| (block.len() - 4).checked_sub(r))
        .ok_or_else(|| bad(format!("{restarts} restart points do not fit in its bytes")))?;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut pos = 0;
    while pos < end {
        let entry = &block[..end];
        let (shared, non_shared, value_len) = match (
            get_varint(entry, &mut pos),
            get_varint(entry, &mut pos),
            get_varint(entry, &mut pos),
        ) {
            (Some(s), Some(n), Some(v)) => (s as usize, n as usize, v as usize),
            _ => return Err(bad(format!("entry header at offset {pos} does not decode"))),
        };
        let previous = entries.last().map_or(&[][..], |(k, _)| k.as_slice());
        if shared > previous.len() {
            return Err(bad(format!(
                "an entry shares {shared} key bytes with a previous key of {}",
                previous.len()
            )));
        }
        let key_end = pos.checked_add(non_shared).filter(|&e| e <= end);
        let value_end = key_end
            .and_then(|k| k.checked_add(value_len))
            .filter(|&e| e <= end);
        let (Some(key_end), Some(value_end)) = (key_end, value_end) else {
            return Err(bad(format!(
                "an entry at offset {pos} runs past the block's end"
            )));
        };
        let key_len = shared + non_shared;
        *budget = budget.checked_sub(key_len).ok_or_else(|| {
            bad("its shared key prefixes expand far beyond the file's size".to_string())
        })?;
        let mut key = Vec::with_capacity(key_len);
        key.extend_from_slice(&previous[..shared]);
        key.extend_from_slice(&block[pos..key_end]);
        entries.push((key, block[key_end..value_end].to_vec()));
        pos = value_end;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pairs: &[(&str, &str)]) -> Vec<u8> {
        build_table(pairs.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())))
    }

    #[test]
    fn masking_round_trips_and_matches_leveldb() {
        // LevelDB's crc32c_test: Mask(Unmask) round trip and CRC32C("123456789") = 0xe3069283.
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        for crc in [0u32, 1, 0xe306_9283, u32::MAX] {
            assert_eq!(unmask(mask(crc)), crc);
            assert_ne!(mask(crc), crc);
        }
    }

    #[test]
    fn varints_round_trip_and_stop_at_ten_bytes() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            let mut pos = 0;
            assert_eq!(get_varint(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
        }
        assert_eq!(get_varint(&[0x80; 11], &mut 0), None);
        assert_eq!(get_varint(&[0x80], &mut 0), None);
    }

    #[test]
    fn separators_are_short_and_between() {
        let mut s = b"abcd".to_vec();
        shortest_separator(&mut s, b"abzz");
        assert_eq!(s, b"abd");
        // A prefix or adjacent byte leaves the key as it is.
        let mut s = b"ab".to_vec();
        shortest_separator(&mut s, b"abc");
        assert_eq!(s, b"ab");
        let mut s = b"abc".to_vec();
        shortest_separator(&mut s, b"abd");
        assert_eq!(s, b"abc");
        let mut s = b"\xff\xffa".to_vec();
        short_successor(&mut s);
        assert_eq!(s, b"\xff\xffb");
    }

    #[test]
    fn a_table_round_trips_with_many_blocks_and_restarts() {
        let values: Vec<(String, String)> = (0..3000)
            .map(|i| (format!("key/{i:06}"), "v".repeat(i % 700)))
            .collect();
        let file = build_table(values.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes())));
        // ~1 MB of values: several 256 KiB blocks.
        assert!(file.len() > 3 * BLOCK_SIZE);
        let read = read_table(Path::new("t.index"), &file).unwrap();
        assert_eq!(read.len(), values.len());
        for ((k, v), (rk, rv)) in values.iter().zip(&read) {
            assert_eq!((k.as_bytes(), v.as_bytes()), (rk.as_slice(), rv.as_slice()));
        }
    }

    #[test]
    fn an_oversized_entry_gets_a_block_of_its_own() {
        let big = "x".repeat(2 * BLOCK_SIZE);
        let file = build_table([(&b"a"[..], &b"1"[..]), (b"b", big.as_bytes()), (b"c", b"3")]);
        let read = read_table(Path::new("t.index"), &file).unwrap();
        assert_eq!(read[1].1.len(), big.len());
        assert_eq!(read[2], (b"c".to_vec(), b"3".to_vec()));
    }

    #[test]
    fn an_empty_table_is_an_empty_block_and_footer() {
        let file = table(&[]);
        // Metaindex and index blocks are 8 bytes (one restart and its count) plus trailers.
        assert_eq!(file.len(), 2 * (8 + TRAILER_LEN) + FOOTER_LEN);
        assert!(read_table(Path::new("t.index"), &file).unwrap().is_empty());
    }

    fn message(result: Result<Vec<(Vec<u8>, Vec<u8>)>>) -> String {
        match result {
            Err(e @ Error::NotAnIndex { .. }) => e.to_string(),
            other => panic!("expected NotAnIndex, got {other:?}"),
        }
    }

    #[test]
    fn corrupt_tables_are_refused_by_name() {
        let file = table(&[("a", "1"), ("b", "2")]);
        let p = Path::new("x.index");
        let short = message(read_table(p, &file[..20]));
        assert!(
            short.contains("shorter than the 48-byte table footer"),
            "{short}"
        );
        let mut magic = file.clone();
        *magic.last_mut().unwrap() ^= 1;
        assert!(message(read_table(p, &magic)).contains("bad magic number"));
        let mut flipped = file.clone();
        flipped[5] ^= 0x40;
        assert!(message(read_table(p, &flipped)).contains("checksum mismatch"));
        // Cut the blocks but keep a footer: the handles point past the end.
        let mut cut = file[..4].to_vec();
        cut.extend_from_slice(&file[file.len() - FOOTER_LEN..]);
        assert!(message(read_table(p, &cut)).contains("truncated"));
    }

    #[test]
    fn a_huge_declared_block_is_refused_before_allocating() {
        let mut file = table(&[("a", "1")]);
        // Rewrite the footer's index handle to claim an exabyte.
        let footer = file.len() - FOOTER_LEN;
        let mut enc = Vec::new();
        Handle { offset: 0, size: 0 }.encode(&mut enc);
        Handle {
            offset: 0,
            size: 1 << 60,
        }
        .encode(&mut enc);
        file[footer..footer + enc.len()].copy_from_slice(&enc);
        assert!(message(read_table(Path::new("x"), &file)).contains("runs past the end"));
    }

    #[test]
    fn shared_prefixes_cannot_expand_past_the_bound() {
        // One 4 KiB key, then many entries that repeat it plus one byte: small file, huge keys.
        let mut block = Vec::new();
        let long = vec![b'k'; 4096];
        put_varint(&mut block, 0);
        put_varint(&mut block, long.len() as u64);
        put_varint(&mut block, 0);
        block.extend_from_slice(&long);
        for _ in 0..20_000 {
            put_varint(&mut block, 4096);
            put_varint(&mut block, 1);
            put_varint(&mut block, 0);
            block.push(b'z');
        }
        block.extend_from_slice(&0u32.to_le_bytes());
        block.extend_from_slice(&1u32.to_le_bytes());
        let mut budget = 16 * block.len();
        let err = block_entries(Path::new("x"), &block, &mut budget, "data").unwrap_err();
        assert!(err.to_string().contains("expand far beyond"), "{err}");
    }
}
