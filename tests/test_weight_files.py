"""Weight files never lose data, never hang and always explain themselves: file modes follow
the umask, symbolic links are written through, interrupted saves leave the old file, and odd or
hostile files (FIFOs, devices, huge or deeply nested headers, bf16/f16/f64 data) load or fail
with a clear error."""

import json
import os
import signal
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from isolated import run_snippet

import ferrotape as tf
from ferrotape.keras import saving


def small_model():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    return model


def test_a_new_file_gets_its_mode_from_the_umask_and_an_overwrite_keeps_the_old_mode(tmp_path):
    path = tmp_path / "w.safetensors"
    previous = os.umask(0o027)
    try:
        saving.save_weights_file(path, {"a": np.zeros(2)})
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o644)
    saving.save_weights_file(path, {"a": np.ones(2)})
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_saving_through_a_symlink_writes_its_target(tmp_path):
    target = tmp_path / "real.safetensors"
    link = tmp_path / "link.safetensors"
    saving.save_weights_file(target, {"a": np.zeros(2)})
    link.symlink_to(target)
    saving.save_weights_file(link, {"a": np.ones(2)})
    assert link.is_symlink()
    np.testing.assert_array_equal(saving.load_weights_file(target)["a"], np.ones(2))


def test_an_interrupted_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    saving.save_weights_file(path, {"a": np.zeros(2)})

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        saving.save_weights_file(path, {"a": np.ones(2)})
    monkeypatch.undo()
    np.testing.assert_array_equal(saving.load_weights_file(path)["a"], np.zeros(2))
    assert sorted(os.listdir(tmp_path)) == ["w.safetensors"]


def test_a_save_killed_outright_leaves_the_old_file_and_the_next_save_cleans_up(tmp_path):
    path = tmp_path / "w.safetensors"
    saving.save_weights_file(path, {"a": np.zeros(2)})
    # A writer that stops for ever inside the write, then is killed with SIGKILL.
    script = textwrap.dedent(
        f"""
        import os, sys, time
        import numpy as np
        from ferrotape.keras import saving
        def hang(fd):
            sys.stdout.write("writing\\n"); sys.stdout.flush(); time.sleep(60)
        os.fsync = hang
        saving.save_weights_file({str(path)!r}, {{"a": np.ones(2)}})
        """
    )
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    leftovers = [n for n in os.listdir(tmp_path) if n != "w.safetensors"]
    assert leftovers and all(n.startswith(".w.safetensors.") for n in leftovers)
    np.testing.assert_array_equal(saving.load_weights_file(path)["a"], np.zeros(2))
    saving.save_weights_file(path, {"a": np.ones(2)})
    assert os.listdir(tmp_path) == ["w.safetensors"]


def raw_file(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize(
    ("contents", "match"),
    [
        (struct.pack("<Q", 67_000_000) + b"{" * 100, "header length"),
        (struct.pack("<Q", 2**63) + b"{}", "header length"),
        (b"\x01\x02", "shorter than"),
        (
            raw_file({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
            "truncated",
        ),
        (raw_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}), "bad entry"),
        (
            raw_file({"a": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
            "cannot load",
        ),
        (
            raw_file(
                {
                    "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                    "__metadata__": {"k": [1]},
                },
                b"\0" * 4,
            ),
            "__metadata__",
        ),
    ],
)
def test_corrupt_files_are_value_errors_naming_the_file(tmp_path, contents, match):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(contents)
    with pytest.raises(ValueError, match=match) as caught:
        saving.load_weights_file(path)
    assert str(path) in str(caught.value)


def test_a_deeply_nested_json_header_is_a_value_error_not_a_recursion_error(tmp_path):
    bomb = b"[" * 200_000 + b"]" * 200_000
    path = tmp_path / "bomb.safetensors"
    path.write_bytes(struct.pack("<Q", len(bomb)) + bomb)
    with pytest.raises(ValueError, match="nested too deeply"):
        saving.load_weights_file(path)


def test_fifos_devices_and_directories_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.safetensors"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        outcome = run_snippet(
            f"from ferrotape.keras import saving\nsaving.load_weights_file({str(path)!r})",
            timeout=20,
        )
        assert outcome.kind == "raised" and "not a regular file" in outcome.message, outcome
    with pytest.raises(IsADirectoryError, match="directory"):
        saving.load_weights_file(tmp_path)


@pytest.mark.parametrize("stored", ["BF16", "F16", "F64", "F32"])
def test_weights_stored_in_any_float_width_load_into_float32_variables(tmp_path, stored):
    model = small_model()
    values = [np.arange(6, dtype=np.float32).reshape(3, 2) / 4, np.array([0.5, -2.0], np.float32)]
    path = tmp_path / "w.safetensors"
    model.save_weights(path)
    arrays = saving.load_weights_file(path)
    header, data, offset = {}, b"", 0
    for (name, _), value in zip(arrays.items(), values, strict=True):
        if stored == "BF16":
            raw = (value.view(np.uint32) >> 16).astype("<u2").tobytes()
        else:
            raw = value.astype({"F16": "<f2", "F64": "<f8", "F32": "<f4"}[stored]).tobytes()
        header[name] = {
            "dtype": stored,
            "shape": list(value.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        data, offset = data + raw, offset + len(raw)
    path.write_bytes(raw_file(header, data))
    model.load_weights(path)
    for variable, value in zip(model.weights, values, strict=True):
        assert variable.dtype == tf.float32
        np.testing.assert_array_equal(variable.numpy(), value)
