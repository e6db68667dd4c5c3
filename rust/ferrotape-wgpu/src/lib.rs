//! ferrotape-wgpu: the optional GPU backend. Device buffers and WGSL compute kernels on wgpu
//! (Vulkan, Metal, DX12), registered with the core's device seam (`ferrotape_core::device`)
//! by [`init`]; the Python extension builds it only with its `gpu` feature.
//!
//! Design choices:
//! - Adapters: one [`Gpu`] per adapter wgpu lists on its primary backends, numbered in that
//!   order as TensorFlow's `GPU:0`, `GPU:1`, ... An adapter that is the CPU in disguise (a
//!   software rasteriser such as Mesa's lavapipe, `DeviceType::Cpu`) is listed only when
//!   `FERROTAPE_GPU_ALLOW_SOFTWARE=1`: tests and CI run on it, but a user never gets a slow
//!   "GPU" by surprise.
//! - Memory: a device array's elements are the raw bytes of its dtype in one storage buffer
//!   (any dtype can live on the device; kernels exist for some dtypes only, and the others
//!   fall back to the CPU through the seam). Buffers come from a per-device pool bucketed by
//!   power-of-two sizes and go back to it when the last array viewing them is dropped.
//! - Submission is asynchronous: a kernel records one compute pass and submits it without
//!   waiting; only reading a value (a download) waits for the queue. wgpu orders submissions,
//!   so a kernel reading another's output needs no barrier of ours.
//! - Kernels read strided views (offset, any strides, broadcast zero strides) directly, as the
//!   CPU kernels do, so views never force a copy. Element counts past `u32` fall back to the
//!   CPU.

mod context;
mod conv;
mod gather;
mod kernels;
mod norm;
mod optim;
mod reduce;
mod typed;

use std::sync::{Arc, OnceLock};

pub use context::{Gpu, GpuMemory};

/// What `tf.config.list_physical_devices('GPU')` reports about one device.
#[derive(Clone, Debug)]
pub struct AdapterDescription {
    /// The index in `GPU:<index>`.
    pub index: u32,
    /// The adapter's name (its driver's).
    pub name: String,
    /// wgpu's backend (Vulkan, Metal, Dx12).
    pub backend: String,
    /// Whether it is a software rasteriser on the CPU (listed only when allowed).
    pub software: bool,
    /// Whether float16 arrays compute on it (element-wise ops, matmul and sums); without it
    /// they run on the CPU.
    pub float16: bool,
}

/// Whether software adapters may be listed (see the module docs).
fn software_allowed() -> bool {
    std::env::var("FERROTAPE_GPU_ALLOW_SOFTWARE").is_ok_and(|v| v == "1")
}

/// Finds the usable adapters, opens a device on each and registers its backend with the core;
/// later calls return the first call's answer. No adapter (or none allowed) is an empty list.
pub fn init() -> &'static [AdapterDescription] {
    static DEVICES: OnceLock<Vec<AdapterDescription>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let mut found = Vec::new();
        for gpu in context::open_all(software_allowed()) {
            let gpu = Arc::new(gpu);
            found.push(gpu.description());
            ferrotape_core::device::register(Arc::new(kernels::WgpuBackend::new(gpu)));
        }
        found
    })
}
