//! The ways reading or writing a bundle fails. Every message names the file (and the key, where
//! there is one) and what was expected versus found; the bindings map each kind to TensorFlow's
//! exception of the same meaning (`NotFoundError`, `DataLossError`, ...).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// A bundle operation's failure.
#[derive(Debug, Error)]
pub enum Error {
    /// A file of the bundle could not be opened, read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The index has no entry for the key.
    #[error("Key {key} not found in checkpoint {}", index.display())]
    KeyNotFound { index: PathBuf, key: String },
    /// The index file is not a TensorBundle index: not a table, truncated, or a checksum fails.
    #[error("not a TensorFlow checkpoint index: {}: {detail}", path.display())]
    NotAnIndex { path: PathBuf, detail: String },
    /// A tensor's bytes in a data shard disagree with its index entry (short file, checksum).
    #[error("corrupt checkpoint data for key {key} in {}: {detail}", path.display())]
    DataLoss {
        path: PathBuf,
        key: String,
        detail: String,
    },
    /// A valid entry of a kind this reader does not handle (a partitioned variable, a dtype
    /// without a fixed element size, a big-endian bundle).
    #[error("{}: key {key}: {detail}", path.display())]
    Unsupported {
        path: PathBuf,
        key: String,
        detail: String,
    },
    /// Bytes given as a serialized object graph are not one, or name nodes it does not have.
    #[error("{0}")]
    ObjectGraph(String),
    /// The caller's tensors cannot be written as given (a duplicate key, bytes that do not
    /// match the shape).
    #[error("write_bundle: {0}")]
    InvalidArgument(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn not_an_index(path: &Path, detail: impl Into<String>) -> Error {
        Error::NotAnIndex {
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    pub(crate) fn data_loss(path: &Path, key: &str, detail: impl Into<String>) -> Error {
        Error::DataLoss {
            path: path.to_path_buf(),
            key: key.to_string(),
            detail: detail.into(),
        }
    }

    pub(crate) fn unsupported(path: &Path, key: &str, detail: impl Into<String>) -> Error {
        Error::Unsupported {
            path: path.to_path_buf(),
            key: key.to_string(),
            detail: detail.into(),
        }
    }
}
