//! One opened adapter: its device and queue, the buffer pool, compiled pipelines, and the
//! device memory type arrays hold.

use std::collections::HashMap;
use std::sync::Arc;

use ferrotape_core::{Array, Buffer, Complex, DType, Device, Error, Result};
use parking_lot::Mutex;

use crate::AdapterDescription;

/// Pooled bytes kept per device for reuse; beyond this freed buffers are released to wgpu.
const POOL_LIMIT: u64 = 1 << 30;

/// Sizes are rounded up to a power of two from this, so the pool's buckets are few.
const MIN_BUFFER: u64 = 256;

/// An opened adapter.
pub struct Gpu {
    pub(crate) index: u32,
    pub(crate) info: wgpu::AdapterInfo,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    /// The largest storage binding, in bytes: larger arrays stay on (or fall back to) the CPU.
    pub(crate) max_binding: u64,
    /// Whether kernels may hold float16 in buffers (WGSL's `f16`, wgpu's `SHADER_F16`); without
    /// it float16 ops run on the CPU.
    pub(crate) shader_f16: bool,
    /// Storage buffers one kernel may bind (parameters and output included): kernels that
    /// need more fall back to the CPU or split their work.
    pub(crate) max_bindings: u32,
    pool: Mutex<Pool>,
    pipelines: Mutex<HashMap<String, Arc<wgpu::ComputePipeline>>>,
}

#[derive(Default)]
struct Pool {
    free: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

/// Opens every usable adapter (see the crate docs for which are).
pub(crate) fn open_all(allow_software: bool) -> Vec<Gpu> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for adapter in adapters {
        let info = adapter.get_info();
        let software = info.device_type == wgpu::DeviceType::Cpu;
        // One device can be listed once per API (Vulkan and DX12 on Windows): keep the first.
        let key = (info.vendor, info.device, info.name.clone());
        if (software && !allow_software) || seen.contains(&key) {
            continue;
        }
        let limits = adapter.limits();
        // Eight is WebGPU's default (every Vulkan, Metal and DX12 adapter has it) and the most
        // a kernel binds: five for a convolution with its bias, eight for the optimizer and
        // batch norm kernels. Downlevel adapters may offer only four.
        let max_bindings = limits.max_storage_buffers_per_shader_stage.min(8);
        let shader_f16 = adapter.features().contains(wgpu::Features::SHADER_F16);
        let request = wgpu::DeviceDescriptor {
            label: Some("ferrotape"),
            required_features: if shader_f16 {
                wgpu::Features::SHADER_F16
            } else {
                wgpu::Features::empty()
            },
            required_limits: wgpu::Limits {
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                max_storage_buffers_per_shader_stage: max_bindings,
                ..wgpu::Limits::downlevel_defaults()
            },
            ..Default::default()
        };
        let Ok((device, queue)) = pollster::block_on(adapter.request_device(&request)) else {
            continue;
        };
        seen.push(key);
        out.push(Gpu {
            index: out.len() as u32,
            info,
            device,
            queue,
            max_binding: limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size),
            shader_f16,
            max_bindings,
            pool: Mutex::new(Pool::default()),
            pipelines: Mutex::new(HashMap::new()),
        });
    }
    out
}

/// The bytes a buffer of `n` elements of `dtype` takes on the device (bools as one byte).
fn byte_len(dtype: DType, n: usize) -> u64 {
    (dtype.size_in_bytes() * n) as u64
}

impl Gpu {
    pub(crate) fn device_id(&self) -> Device {
        Device::Gpu(self.index)
    }

    pub(crate) fn description(&self) -> AdapterDescription {
        AdapterDescription {
            index: self.index,
            name: self.info.name.clone(),
            backend: format!("{:?}", self.info.backend),
            software: self.info.device_type == wgpu::DeviceType::Cpu,
            float16: self.shader_f16,
        }
    }

    /// A pooled buffer of at least `bytes` (rounded to the pool's bucket).
    fn take(&self, bytes: u64) -> Result<wgpu::Buffer> {
        let size = bytes.max(MIN_BUFFER).next_power_of_two();
        if bytes > self.max_binding {
            return Err(Error::resource_exhausted(
                "GPU",
                format!(
                    "OOM when allocating {bytes} bytes on {}: the device binds at most {} bytes",
                    self.device_id().tf_name(),
                    self.max_binding
                ),
            ));
        }
        {
            let mut pool = self.pool.lock();
            if let Some(b) = pool.free.get_mut(&size).and_then(Vec::pop) {
                pool.bytes -= size;
                return Ok(b);
            }
        }
        // The binding limit may not be a power of two: the last bucket is the exact limit.
        let size = size.min(self.max_binding.max(MIN_BUFFER));
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    fn give_back(&self, buffer: wgpu::Buffer) {
        let mut pool = self.pool.lock();
        let size = buffer.size();
        if pool.bytes + size <= POOL_LIMIT {
            pool.bytes += size;
            pool.free.entry(size).or_default().push(buffer);
        }
    }

    /// Device memory for `n` elements of `dtype`, contents unspecified.
    pub(crate) fn alloc(self: &Arc<Self>, dtype: DType, n: usize) -> Result<GpuMemory> {
        Ok(GpuMemory {
            gpu: self.clone(),
            buffer: Some(self.take(byte_len(dtype, n))?),
            dtype,
            len: n,
        })
    }

    /// A buffer holding `data` (padded to wgpu's 4-byte copy alignment), written through the
    /// queue, so it is ordered before the next submission.
    pub(crate) fn upload_bytes(
        self: &Arc<Self>,
        dtype: DType,
        n: usize,
        data: &[u8],
    ) -> Result<GpuMemory> {
        let memory = self.alloc(dtype, n)?;
        if !data.is_empty() {
            let padded;
            let bytes = if data.len().is_multiple_of(4) {
                data
            } else {
                padded = [data, &[0u8; 3][..4 - data.len() % 4]].concat();
                &padded
            };
            self.queue.write_buffer(memory.buffer(), 0, bytes);
        }
        Ok(memory)
    }

    /// A small read-only buffer of kernel parameters.
    pub(crate) fn params(self: &Arc<Self>, words: &[u32]) -> Result<GpuMemory> {
        self.upload_bytes(DType::I32, words.len(), bytemuck::cast_slice(words))
    }

    /// The pipeline compiled from `source` (entry point `main`), compiled once per key.
    pub(crate) fn pipeline(
        &self,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> Arc<wgpu::ComputePipeline> {
        if let Some(p) = self.pipelines.lock().get(key) {
            return p.clone();
        }
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(key),
                source: wgpu::ShaderSource::Wgsl(source().into()),
            });
        let pipeline = Arc::new(self.device.create_compute_pipeline(
            &wgpu::ComputePipelineDescriptor {
                label: Some(key),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            },
        ));
        self.pipelines
            .lock()
            .insert(key.to_string(), pipeline.clone());
        pipeline
    }

    /// Records one compute pass of `pipeline` over `bindings` (binding i is buffer i) with
    /// `groups` workgroups and submits it without waiting.
    pub(crate) fn run(
        &self,
        pipeline: &wgpu::ComputePipeline,
        bindings: &[&GpuMemory],
        groups: [u32; 3],
    ) {
        let layout = pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> = bindings
            .iter()
            .enumerate()
            .map(|(i, m)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: m.buffer().as_entire_binding(),
            })
            .collect();
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        }
        self.queue.submit([encoder.finish()]);
    }

    /// The first `bytes` bytes of `buffer`, after all submitted work (the one wait).
    fn read(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        let size = bytes.div_ceil(4) * 4;
        if size == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("ferrotape download"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let (send, receive) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = send.send(r);
        });
        let lost = |what: String| {
            Error::runtime(
                "GPU",
                format!("reading from {}: {what}", self.device_id().tf_name()),
            )
        };
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| lost(e.to_string()))?;
        receive
            .recv()
            .map_err(|e| lost(e.to_string()))?
            .map_err(|e| lost(e.to_string()))?;
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| lost(e.to_string()))?;
        let out = view[..bytes as usize].to_vec();
        drop(view);
        staging.unmap();
        Ok(out)
    }
}

/// An array's elements on a [`Gpu`]: `len` elements of `dtype` as raw bytes at the start of a
/// pooled buffer (which may be larger).
pub struct GpuMemory {
    pub(crate) gpu: Arc<Gpu>,
    buffer: Option<wgpu::Buffer>,
    dtype: DType,
    len: usize,
}

impl GpuMemory {
    pub(crate) fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("present until dropped")
    }
}

impl Drop for GpuMemory {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.gpu.give_back(b);
        }
    }
}

impl std::fmt::Debug for GpuMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuMemory({} x {} on GPU:{})",
            self.len, self.dtype, self.gpu.index
        )
    }
}

impl ferrotape_core::device::DeviceMemory for GpuMemory {
    fn device(&self) -> Device {
        self.gpu.device_id()
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn len(&self) -> usize {
        self.len
    }
    fn download(&self) -> Result<Buffer> {
        let bytes = self
            .gpu
            .read(self.buffer(), byte_len(self.dtype, self.len))?;
        Ok(from_bytes(self.dtype, &bytes))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A host buffer of `dtype` from its raw bytes.
fn from_bytes(dtype: DType, bytes: &[u8]) -> Buffer {
    fn typed<T: ferrotape_core::Element + bytemuck::Pod>(bytes: &[u8]) -> Buffer {
        // Copied element by element: the downloaded bytes need not be aligned for `T`.
        T::into_buffer(bytemuck::pod_collect_to_vec(bytes))
    }
    match dtype {
        DType::F16 => typed::<ferrotape_core::f16>(bytes),
        DType::BF16 => typed::<ferrotape_core::bf16>(bytes),
        DType::F32 => typed::<f32>(bytes),
        DType::F64 => typed::<f64>(bytes),
        DType::I32 => typed::<i32>(bytes),
        DType::I64 => typed::<i64>(bytes),
        DType::Bool => Buffer::Bool(bytes.iter().map(|&b| b != 0).collect::<Vec<_>>().into()),
        DType::I8 => typed::<i8>(bytes),
        DType::I16 => typed::<i16>(bytes),
        DType::U8 => typed::<u8>(bytes),
        DType::U16 => typed::<u16>(bytes),
        DType::U32 => typed::<u32>(bytes),
        DType::U64 => typed::<u64>(bytes),
        DType::C64 => complex::<f32>(bytes),
        DType::C128 => complex::<f64>(bytes),
    }
}

/// Complex elements from their raw bytes (each the real part, then the imaginary part).
fn complex<T>(bytes: &[u8]) -> Buffer
where
    T: bytemuck::Pod,
    Complex<T>: ferrotape_core::Element,
{
    let parts: Vec<[T; 2]> = bytemuck::pod_collect_to_vec(bytes);
    let values = parts.into_iter().map(|[re, im]| Complex { re, im });
    <Complex<T> as ferrotape_core::Element>::into_buffer(values.collect())
}

/// The raw bytes of a contiguous host array.
pub(crate) fn to_bytes(a: &Array) -> Vec<u8> {
    fn typed<T: ferrotape_core::Element + bytemuck::Pod>(a: &Array) -> Vec<u8> {
        bytemuck::cast_slice(&a.to_vec::<T>()).to_vec()
    }
    match a.dtype() {
        DType::F16 => typed::<ferrotape_core::f16>(a),
        DType::BF16 => typed::<ferrotape_core::bf16>(a),
        DType::F32 => typed::<f32>(a),
        DType::F64 => typed::<f64>(a),
        DType::I32 => typed::<i32>(a),
        DType::I64 => typed::<i64>(a),
        DType::Bool => a.to_vec::<bool>().into_iter().map(u8::from).collect(),
        DType::I8 => typed::<i8>(a),
        DType::I16 => typed::<i16>(a),
        DType::U8 => typed::<u8>(a),
        DType::U16 => typed::<u16>(a),
        DType::U32 => typed::<u32>(a),
        DType::U64 => typed::<u64>(a),
        DType::C64 => complex_bytes::<f32>(a),
        DType::C128 => complex_bytes::<f64>(a),
    }
}

/// The raw bytes of a contiguous complex host array (see [`complex`]).
fn complex_bytes<T>(a: &Array) -> Vec<u8>
where
    T: bytemuck::Pod,
    Complex<T>: ferrotape_core::Element,
{
    let parts: Vec<[T; 2]> = a
        .to_vec::<Complex<T>>()
        .into_iter()
        .map(|c| [c.re, c.im])
        .collect();
    bytemuck::cast_slice(&parts).to_vec()
}
