//! The device API's native half: the GPUs this build can use (`tf.config.list_physical_devices`)
//! and the placement scope (`tf.device`) that ops consult. Without the `gpu` feature there are
//! no GPUs and the scope can only name the CPU.

use ferrotape_core::device::{placement, set_placement as set_scope};
use ferrotape_core::Device;
use ferrotape_py_macros::op_errors;
use pyo3::prelude::*;

use crate::errors::value_error;

/// The GPUs, as `(index, adapter name, API, software)` tuples (the first call opens them).
/// A software adapter (Mesa's lavapipe) is listed only with `FERROTAPE_GPU_ALLOW_SOFTWARE=1`.
#[pyfunction]
fn gpu_devices() -> Vec<(u32, String, String, bool)> {
    #[cfg(feature = "gpu")]
    {
        ferrotape_wgpu::init()
            .iter()
            .map(|d| (d.index, d.name.clone(), d.backend.clone(), d.software))
            .collect()
    }
    #[cfg(not(feature = "gpu"))]
    {
        Vec::new()
    }
}

fn name(device: Option<Device>) -> Option<String> {
    device.map(|d| match d {
        Device::Cpu => "CPU:0".to_string(),
        Device::Gpu(i) => format!("GPU:{i}"),
    })
}

/// Sets this thread's placement scope to `"CPU:0"`, `"GPU:<i>"` (an existing GPU) or None and
/// returns the previous one, for `ft.device`'s scope to restore.
#[op_errors]
#[pyfunction]
#[pyo3(signature = (device, /))]
fn set_placement(device: Option<&str>) -> PyResult<Option<String>> {
    let parsed = match device {
        None => None,
        Some("CPU:0") => Some(Device::Cpu),
        Some(other) => {
            let gpu = other
                .strip_prefix("GPU:")
                .and_then(|i| i.parse::<u32>().ok())
                .map(Device::Gpu)
                .filter(|d| ferrotape_core::device::backend(*d).is_some());
            match gpu {
                Some(d) => Some(d),
                None => {
                    return Err(value_error(format!(
                        "set_placement: expected \"CPU:0\", an existing \"GPU:<index>\" or None, received {other:?}"
                    )))
                }
            }
        }
    };
    Ok(name(set_scope(parsed)))
}

/// This thread's placement scope (`"CPU:0"`, `"GPU:<i>"` or None).
#[pyfunction]
fn current_placement() -> Option<String> {
    name(placement())
}

/// The copies between the host and the devices so far, as a dict of counts and bytes
/// (`uploads`, `uploaded_bytes`, `downloads`, `downloaded_bytes`): how the tests and
/// `scripts/gpu_check.py` see that a training step stays on the device.
#[op_errors]
#[pyfunction]
fn device_transfers(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let t = ferrotape_core::device::transfers();
    let out = pyo3::types::PyDict::new(py);
    out.set_item("uploads", t.uploads)?;
    out.set_item("uploaded_bytes", t.uploaded_bytes)?;
    out.set_item("downloads", t.downloads)?;
    out.set_item("downloaded_bytes", t.downloaded_bytes)?;
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(device_transfers, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_devices, m)?)?;
    m.add_function(wrap_pyfunction!(set_placement, m)?)?;
    m.add_function(wrap_pyfunction!(current_placement, m)?)?;
    Ok(())
}
