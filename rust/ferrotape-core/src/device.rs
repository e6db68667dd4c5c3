//! Devices: where an array's elements live, and the seam a device backend plugs into.
//!
//! Design choice (hard to undo): the core knows no GPU API. A device buffer is a trait object
//! ([`DeviceMemory`]) inside an [`Array`], and a backend crate (`ferrotape-wgpu`) registers a
//! [`Backend`] at start-up that holds the device's kernels. The kernels a backend may run
//! (the element-wise, matmul and reduction families, relu's gradient, comparisons, `select`,
//! casts, batch norm, the optimizer rules) and materialising a strided view ask [`Backend`]
//! first, through one relaxed atomic load and a branch while no backend is
//! registered (the default build registers none, so it pays that branch and nothing else).
//! Placement follows TensorFlow's: an op runs on the device of the innermost `tf.device`
//! scope ([`set_placement`]), else on the device of its first input that lives off the CPU,
//! else on the CPU. Soft placement: where the backend has no kernel for an op or dtype
//! (`None` from the hook), the CPU kernel runs instead; it reads the device input through
//! [`Array::buffer`], which downloads it once and keeps the host copy beside the device buffer
//! (tensors are immutable, so the copy never goes stale), and its result lives on the CPU, as
//! TensorFlow's soft-placed op's does. So every kernel in `kernels` works on device arrays
//! unchanged, the tape and its higher-order gradients included, and a backend grows by adding
//! hooks, never by rewriting ops. Device arrays are never written in place (`buffer_mut` is
//! `None` for them), so variable updates replace their value; an update runs on the device its
//! variable lives on, whatever the scope, as TensorFlow places its resource ops.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use crate::kernels::{
    BatchNormGrads, BinaryOp, CompareOp, OptimizerStep, ReduceOp, UnaryOp, Window2d,
};
use crate::{Array, Buffer, DType, Result};

/// Where a buffer lives: the CPU, or a backend's device (its index among that backend's
/// devices, TensorFlow's `GPU:<index>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    #[default]
    Cpu,
    Gpu(u32),
}

impl Device {
    /// TensorFlow's full device name (`tensor.device`).
    pub fn tf_name(self) -> String {
        match self {
            Device::Cpu => "/job:localhost/replica:0/task:0/device:CPU:0".into(),
            Device::Gpu(i) => format!("/job:localhost/replica:0/task:0/device:GPU:{i}"),
        }
    }
}

/// Elements held by a device: the storage half of a device [`Array`] (whose layout says which
/// of them it views). Implemented by a backend crate.
pub trait DeviceMemory: Send + Sync + std::fmt::Debug + 'static {
    fn device(&self) -> Device;
    fn dtype(&self) -> DType;
    /// The number of elements.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A host copy of every element; waits for the queued work that writes them.
    fn download(&self) -> Result<Buffer>;
    /// For the backend to recover its own type from an array's memory.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A device's kernels. Each hook returns `None` when the device has no kernel for the op or
/// dtype (the CPU kernel then runs: soft placement), else the result, a device array. Inputs
/// are already on the backend's device (the dispatcher uploads host inputs first), in any
/// layout (views keep their strides and offset).
pub trait Backend: Send + Sync + 'static {
    fn device(&self) -> Device;
    /// The adapter's name, for `tf.config.list_physical_devices`' details.
    fn name(&self) -> String;
    /// A device copy of a host array (any layout; the copy is contiguous).
    fn upload(&self, a: &Array) -> Result<Array>;
    /// A contiguous copy of a device view.
    fn contiguous(&self, a: &Array) -> Option<Result<Array>>;
    fn unary(&self, op: UnaryOp, a: &Array) -> Option<Result<Array>>;
    fn binary(&self, op: BinaryOp, a: &Array, b: &Array) -> Option<Result<Array>>;
    fn matmul(&self, a: &Array, b: &Array, ta: bool, tb: bool) -> Option<Result<Array>>;
    fn reduce(
        &self,
        op: ReduceOp,
        a: &Array,
        mask: &[bool],
        keepdims: bool,
    ) -> Option<Result<Array>>;

    // The indexing kernels, as runs of `inner` consecutive elements of a contiguous array (the
    // CPU's form of gather, pad, gather_nd and their adjoints; see `kernels/shape.rs`). The
    // run starts are element offsets computed and checked on the host; `None` is a run of
    // `fill` (gather) or a run that is dropped (scatter).

    /// An array of `out_shape` made of the runs `a[s..s + inner]` for each start `s` in order.
    fn gather_runs(
        &self,
        _a: &Array,
        _starts: &[Option<usize>],
        _inner: usize,
        _fill: f64,
        _out_shape: &[usize],
    ) -> Option<Result<Array>> {
        None
    }

    /// Zeros of `out_shape` with run `j` of `src` (its elements `j·inner..(j + 1)·inner`)
    /// added at `starts[j]`; runs landing on the same place sum, in the order of `j`.
    fn scatter_add_runs(
        &self,
        _src: &Array,
        _starts: &[Option<usize>],
        _inner: usize,
        _out_shape: &[usize],
    ) -> Option<Result<Array>> {
        None
    }

    // Convolution and pooling over NHWC images (`kernels::conv`). The core has checked the
    // shapes against the window `w` before asking (dtypes it has not: a hook declines those),
    // and each default declines, so a backend offers only the kernels it has.

    /// NHWC `x` convolved with HWIO `filter`, plus `bias` (`[out_channels]`) when given.
    fn conv2d(
        &self,
        _x: &Array,
        _filter: &Array,
        _bias: Option<&Array>,
        _w: &Window2d,
    ) -> Option<Result<Array>> {
        None
    }
    /// The input gradient of `conv2d` (shape `[batch, in_h, in_w, channels]` of `w`).
    fn conv2d_backprop_input(
        &self,
        _filter: &Array,
        _dy: &Array,
        _w: &Window2d,
    ) -> Option<Result<Array>> {
        None
    }
    /// The filter gradient of `conv2d` (shape `[k_h, k_w, channels, dy's channels]`).
    fn conv2d_backprop_filter(
        &self,
        _x: &Array,
        _dy: &Array,
        _w: &Window2d,
    ) -> Option<Result<Array>> {
        None
    }
    fn max_pool(&self, _x: &Array, _w: &Window2d) -> Option<Result<Array>> {
        None
    }
    /// Each of `dy` added to the first maximum of its window of `x`; `y = max_pool(x)`, which
    /// a backend may use or recompute.
    fn max_pool_grad(
        &self,
        _x: &Array,
        _y: &Array,
        _dy: &Array,
        _w: &Window2d,
    ) -> Option<Result<Array>> {
        None
    }
    /// For each window, `g` (shaped as `x`) at the window's first maximum of `x`.
    fn max_pool_grad_grad(
        &self,
        _x: &Array,
        _y: &Array,
        _g: &Array,
        _w: &Window2d,
    ) -> Option<Result<Array>> {
        None
    }
    fn avg_pool(&self, _x: &Array, _w: &Window2d) -> Option<Result<Array>> {
        None
    }
    fn avg_pool_grad(&self, _dy: &Array, _w: &Window2d) -> Option<Result<Array>> {
        None
    }

    // The training step's other kernels: relu's gradient, selection and casts, batch norm and
    // the optimizer rules. Defaults decline (`None`), so a backend adds them one at a time.

    /// `kernels::relu_grad`: `g` where `y > 0`, else 0, broadcast.
    fn relu_grad(&self, _g: &Array, _y: &Array) -> Option<Result<Array>> {
        None
    }
    /// `kernels::compare`: a bool array, operands broadcast (same dtype, checked by the caller).
    fn compare(&self, _op: CompareOp, _a: &Array, _b: &Array) -> Option<Result<Array>> {
        None
    }
    /// `kernels::select`: `x` where `cond`, else `y`, all three broadcast (`cond` is bool and
    /// `x`, `y` share a dtype: checked by the caller).
    fn select(&self, _cond: &Array, _x: &Array, _y: &Array) -> Option<Result<Array>> {
        None
    }
    /// `kernels::cast` to a different dtype.
    fn cast(&self, _a: &Array, _dtype: DType) -> Option<Result<Array>> {
        None
    }
    /// `kernels::batch_norm_statistics`: per-feature mean and variance as host vectors.
    fn batch_norm_statistics(&self, _x: &Array, _axis: usize) -> Option<Result<[Vec<f64>; 2]>> {
        None
    }
    /// `kernels::batch_norm_apply`: `x·scale + shift` per feature of `axis`.
    fn batch_norm_apply(
        &self,
        _x: &Array,
        _axis: usize,
        _scale: &[f64],
        _shift: &[f64],
    ) -> Option<Result<Array>> {
        None
    }
    /// `kernels::batch_norm_backward` (`x` and `dy` share shape and dtype: checked by the
    /// caller); `stats` is `[mean, inv_std, gamma]`.
    fn batch_norm_backward(
        &self,
        _x: &Array,
        _dy: &Array,
        _axis: usize,
        _stats: [&[f64]; 3],
    ) -> Option<Result<BatchNormGrads>> {
        None
    }
    /// One optimizer step (`kernels::apply_optimizer_step`, arrays checked by the caller):
    /// the new variable value followed by the new slots, in `step`'s slot order. Device
    /// arrays are immutable, so the caller replaces the variable's and slots' values.
    fn optimizer_step(
        &self,
        _step: &OptimizerStep,
        _param: &Array,
        _slots: &[&Array],
        _grad: &Array,
    ) -> Option<Result<Vec<Array>>> {
        None
    }
}

/// Whether any backend is registered: the only cost the dispatch adds to a CPU-only process.
static ACTIVE: AtomicBool = AtomicBool::new(false);

fn registry() -> &'static RwLock<Vec<Arc<dyn Backend>>> {
    static BACKENDS: OnceLock<RwLock<Vec<Arc<dyn Backend>>>> = OnceLock::new();
    BACKENDS.get_or_init(|| RwLock::new(Vec::new()))
}

/// Adds a device's backend (replacing one registered for the same device).
pub fn register(backend: Arc<dyn Backend>) {
    let mut all = registry().write().unwrap_or_else(|e| e.into_inner());
    all.retain(|b| b.device() != backend.device());
    all.push(backend);
    ACTIVE.store(true, Ordering::Release);
}

/// The backend of `device`, if one is registered.
pub fn backend(device: Device) -> Option<Arc<dyn Backend>> {
    if !ACTIVE.load(Ordering::Acquire) {
        return None;
    }
    let all = registry().read().unwrap_or_else(|e| e.into_inner());
    all.iter().find(|b| b.device() == device).cloned()
}

/// The registered devices besides the CPU, in registration order.
pub fn devices() -> Vec<Device> {
    let all = registry().read().unwrap_or_else(|e| e.into_inner());
    all.iter().map(|b| b.device()).collect()
}

thread_local! {
    static PLACEMENT: Cell<Option<Device>> = const { Cell::new(None) };
}

/// Sets this thread's placement scope (`None`: no scope, ops follow their inputs) and returns
/// the previous one, for the caller to restore when its scope ends.
pub fn set_placement(device: Option<Device>) -> Option<Device> {
    PLACEMENT.with(|p| p.replace(device))
}

/// This thread's placement scope.
pub fn placement() -> Option<Device> {
    PLACEMENT.with(|p| p.get())
}

/// Where an op with `inputs` runs (see the module docs): `None` for the CPU, else the
/// backend of the device.
fn target(inputs: &[&Array]) -> Option<Arc<dyn Backend>> {
    let device = placement().unwrap_or_else(|| {
        inputs
            .iter()
            .map(|a| a.device())
            .find(|&d| d != Device::Cpu)
            .unwrap_or(Device::Cpu)
    });
    match device {
        Device::Cpu => None,
        d => backend(d),
    }
}

/// `a`, an array a kernel made on the host from `inputs` (none for a creation op such as a
/// random draw), moved to the device the op was placed on (see the module docs): the kernels
/// with no device version still give their result where the program expects it. On the CPU,
/// or where the device cannot take it (soft placement), `a` itself.
pub fn placed(a: Array, inputs: &[&Array]) -> Array {
    if !ACTIVE.load(Ordering::Relaxed) {
        return a;
    }
    match target(inputs) {
        Some(backend) if a.device() != backend.device() => {
            a.to_device(backend.device()).unwrap_or(a)
        }
        _ => a,
    }
}

/// Runs `kernel` on the device chosen for `inputs` with every input moved there, or returns
/// `None` for the CPU kernel to run (no backend is registered, the op is placed on the CPU,
/// or the device has no kernel for it).
#[inline]
pub(crate) fn dispatch<const N: usize, R>(
    inputs: [&Array; N],
    kernel: impl FnOnce(&dyn Backend, [&Array; N]) -> Option<Result<R>>,
) -> Option<Result<R>> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return None;
    }
    dispatch_slow(inputs, kernel)
}

#[cold]
fn dispatch_slow<const N: usize, R>(
    inputs: [&Array; N],
    kernel: impl FnOnce(&dyn Backend, [&Array; N]) -> Option<Result<R>>,
) -> Option<Result<R>> {
    let backend = target(&inputs)?;
    let moved = match moved_to(&*backend, &inputs) {
        Ok(moved) => moved,
        Err(e) => return Some(Err(e)),
    };
    let on_device: [&Array; N] = std::array::from_fn(|i| moved[i].as_ref().unwrap_or(inputs[i]));
    kernel(&*backend, on_device)
}

/// Copies between the host and the devices since the process started: how a program (or a
/// test) sees that a step stays on the device, since soft placement is otherwise silent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfers {
    /// Host arrays copied to a device.
    pub uploads: u64,
    pub uploaded_bytes: u64,
    /// Device arrays copied to the host (once each: the copy is kept).
    pub downloads: u64,
    pub downloaded_bytes: u64,
}

static UPLOADS: AtomicU64 = AtomicU64::new(0);
static UPLOADED_BYTES: AtomicU64 = AtomicU64::new(0);
static DOWNLOADS: AtomicU64 = AtomicU64::new(0);
static DOWNLOADED_BYTES: AtomicU64 = AtomicU64::new(0);

/// The copies made so far (see [`Transfers`]).
pub fn transfers() -> Transfers {
    Transfers {
        uploads: UPLOADS.load(Ordering::Relaxed),
        uploaded_bytes: UPLOADED_BYTES.load(Ordering::Relaxed),
        downloads: DOWNLOADS.load(Ordering::Relaxed),
        downloaded_bytes: DOWNLOADED_BYTES.load(Ordering::Relaxed),
    }
}

/// Counts one download of `bytes` (called where a device array's host copy is made).
pub(crate) fn count_download(bytes: usize) {
    DOWNLOADS.fetch_add(1, Ordering::Relaxed);
    DOWNLOADED_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Copies of the `inputs` that are not on `backend`'s device yet, made there (`None` for the
/// others).
fn moved_to(backend: &dyn Backend, inputs: &[&Array]) -> Result<Vec<Option<Array>>> {
    inputs
        .iter()
        .map(|a| {
            (a.device() != backend.device())
                .then(|| a.to_device(backend.device()))
                .transpose()
        })
        .collect()
}

/// Like [`dispatch`] for any number of inputs, on the device `inputs[0]` lives on whatever the
/// scope says: a variable's update runs where the variable lives, as TensorFlow places its
/// resource ops. A variable on the CPU takes the CPU kernel.
#[inline]
pub(crate) fn dispatch_on_first<R>(
    inputs: &[&Array],
    kernel: impl FnOnce(&dyn Backend, &[&Array]) -> Option<Result<R>>,
) -> Option<Result<R>> {
    if !ACTIVE.load(Ordering::Relaxed) || inputs[0].device() == Device::Cpu {
        return None;
    }
    let backend = backend(inputs[0].device())?;
    let moved = match moved_to(&*backend, inputs) {
        Ok(moved) => moved,
        Err(e) => return Some(Err(e)),
    };
    let on_device: Vec<&Array> = moved
        .iter()
        .zip(inputs)
        .map(|(m, &a)| m.as_ref().unwrap_or(a))
        .collect();
    kernel(&*backend, &on_device)
}

impl Array {
    /// Where the elements live.
    pub fn device(&self) -> Device {
        match self.device_memory() {
            Some(m) => m.device(),
            None => Device::Cpu,
        }
    }

    /// The same values on `device`: `self` when already there, else a contiguous copy.
    pub fn to_device(&self, device: Device) -> Result<Array> {
        if self.device() == device {
            return Ok(self.clone());
        }
        match device {
            Device::Cpu => Ok(self.host_copy()),
            d => match backend(d) {
                Some(b) => {
                    let host = self.host_copy();
                    UPLOADS.fetch_add(1, Ordering::Relaxed);
                    UPLOADED_BYTES.fetch_add(
                        (host.len() * host.dtype().size_in_bytes()) as u64,
                        Ordering::Relaxed,
                    );
                    b.upload(&host)
                }
                None => Err(crate::Error::invalid(
                    "Device",
                    format!(
                        "{} is not available: no backend is registered for it",
                        d.tf_name()
                    ),
                )),
            },
        }
    }

    /// A contiguous host array with the same values (for a device array, from its downloaded
    /// copy).
    fn host_copy(&self) -> Array {
        let host = self.on_host_view();
        host.contiguous()
    }
}

#[cfg(test)]
mod tests {
    //! The seam without a GPU: a fake device whose "memory" is a host buffer, with a kernel
    //! for `Neg` only, checks placement, soft placement and the transparent host copy.

    use super::*;
    use crate::kernels;

    const FAKE: Device = Device::Gpu(7);

    #[derive(Debug)]
    struct FakeMemory(Buffer);

    impl DeviceMemory for FakeMemory {
        fn device(&self) -> Device {
            FAKE
        }
        fn dtype(&self) -> DType {
            self.0.dtype()
        }
        fn len(&self) -> usize {
            self.0.len()
        }
        fn download(&self) -> Result<Buffer> {
            Ok(self.0.clone())
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    struct FakeBackend;

    impl Backend for FakeBackend {
        fn device(&self) -> Device {
            FAKE
        }
        fn name(&self) -> String {
            "fake".into()
        }
        fn upload(&self, a: &Array) -> Result<Array> {
            let host = a.contiguous();
            Array::from_device(Box::new(FakeMemory(host.buffer().clone())), a.shape())
        }
        fn contiguous(&self, _: &Array) -> Option<Result<Array>> {
            None
        }
        fn unary(&self, op: UnaryOp, a: &Array) -> Option<Result<Array>> {
            // The one "device kernel": the CPU's, on the host copy (placed on the CPU, else
            // the dispatcher would send it back here), uploaded again.
            (op == UnaryOp::Neg).then(|| {
                let outer = set_placement(Some(Device::Cpu));
                let host = kernels::unary(op, &a.on_host_view());
                set_placement(outer);
                self.upload(&host?)
            })
        }
        fn binary(&self, _: BinaryOp, _: &Array, _: &Array) -> Option<Result<Array>> {
            None
        }
        fn matmul(&self, _: &Array, _: &Array, _: bool, _: bool) -> Option<Result<Array>> {
            None
        }
        fn reduce(&self, _: ReduceOp, _: &Array, _: &[bool], _: bool) -> Option<Result<Array>> {
            None
        }
    }

    #[test]
    fn ops_follow_the_scope_then_their_inputs_and_fall_back_to_the_cpu() {
        register(Arc::new(FakeBackend));
        assert!(devices().contains(&FAKE));
        let host = Array::from_vec(vec![1.0f32, -2.0, 3.0], &[3]).unwrap();
        let before = transfers();
        let on = host.to_device(FAKE).unwrap();
        assert!(transfers().uploads > before.uploads);
        assert_eq!(
            (on.device(), on.dtype(), on.shape()),
            (FAKE, DType::F32, &[3][..])
        );
        // A kernel the device has runs there; one it lacks runs on the host copy (downloaded
        // once: here by the fake kernel already, which reads it too).
        let before = transfers();
        let neg = kernels::unary(UnaryOp::Neg, &on).unwrap();
        assert_eq!(neg.device(), FAKE);
        assert_eq!(neg.to_vec::<f32>(), vec![-1.0, 2.0, -3.0]);
        assert!(transfers().downloads > before.downloads);
        let abs = kernels::unary(UnaryOp::Abs, &on).unwrap();
        assert_eq!(abs.device(), Device::Cpu);
        assert_eq!(abs.to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
        let sum = kernels::binary(BinaryOp::Add, &on, &host).unwrap();
        assert_eq!(sum.to_vec::<f32>(), vec![2.0, -4.0, 6.0]);
        // The scope moves host inputs to the device, or device inputs to the CPU.
        let outer = set_placement(Some(FAKE));
        assert_eq!(kernels::unary(UnaryOp::Neg, &host).unwrap().device(), FAKE);
        set_placement(Some(Device::Cpu));
        assert_eq!(
            kernels::unary(UnaryOp::Neg, &on).unwrap().device(),
            Device::Cpu
        );
        set_placement(outer);
        // Views of device memory stay device arrays; writing in place is refused.
        let mut view = on.transpose(&[0]).unwrap();
        assert_eq!(view.device(), FAKE);
        assert!(view.buffer_mut().is_none());
        assert_eq!(view.to_device(Device::Cpu).unwrap().device(), Device::Cpu);
        assert!(on.to_device(Device::Gpu(99)).is_err());
    }
}
