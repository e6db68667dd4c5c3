//! ferrotape-core: the numbers. Dtypes, shapes, storage and the CPU kernels that every
//! differentiable op of `ferrotape-autodiff` calls, and the seam a device backend registers
//! its kernels through ([`device`]). No tape and no Python here, so every kernel
//! is reachable from `cargo test`.
//!
//! Each `unsafe` block says what it relies on in a safety comment above it, and each
//! `unsafe fn` in a `# Safety` section; `scripts/sanitize.sh` runs the tests under
//! AddressSanitizer at every SIMD level the CPU has.
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod aligned_alloc;
mod array;
mod buffer;
pub mod device;
mod dtype;
mod error;
pub mod interrupt;
pub mod kernels;
pub mod pool;
pub mod random;
pub mod simd;
pub mod threads;

pub use array::{
    broadcast_shapes, checked_num_elements, for_each_offset, num_elements, row_major_strides,
    Array, Shape, Strides,
};
pub use buffer::{
    alloc, alloc_full, alloc_zeros, check_alloc, Buffer, Complex, Element, ForeignOwner, Retag,
    Storage,
};
pub use device::Device;
pub use dtype::DType;
pub use error::{Error, Result};
pub use half::{bf16, f16};
