"""benches/compare.py, the comparison harness of issue 3: a smoke run and its pieces.

The smoke run starts the real harness (`--quick`: one call per sample) on three small workloads
and the memory workload with ferrotape and numpy, with PyTorch and JAX hidden from the workers so
that their rows say "not installed" whatever this machine has, and checks the table, the JSON
file (statistics, ratios, aims, the machine) and the chart. The catalogue and the report's
arithmetic (medians, ratios, aim verdicts, agreement of results) are checked on made-up rows.
"""

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHES = ROOT / "benches"
sys.path.insert(0, str(BENCHES))

from workloads import catalog, report  # noqa: E402

SMOKE_WORKLOADS = ["W5-1024", "W4", "W6-jacobian", "memory"]
HIDE_PEERS = "import sys\nsys.modules['torch'] = None\nsys.modules['jax'] = None\n"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """One quick run of the harness: its completed process, JSON and file paths."""
    tmp = tmp_path_factory.mktemp("compare")
    # A sitecustomize on PYTHONPATH makes `import torch` / `import jax` fail in every worker.
    hide = tmp / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_PEERS)
    python_path = os.pathsep.join(p for p in (str(hide), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=python_path, OPENBLAS_CORETYPE="Haswell")
    env["OPENBLAS_L2_SIZE"] = "262144"
    paths = {name: tmp / f"out.{name}" for name in ("json", "png", "md")}
    command = [sys.executable, str(BENCHES / "compare.py"), "--quick", "--repeats", "2"]
    command += ["--workloads", ",".join(SMOKE_WORKLOADS), "--rss-steps", "1"]
    command += ["--frameworks", "ft,numpy,torch,jax", "--python", f"ft={sys.executable}"]
    command += ["--json", str(paths["json"]), "--png", str(paths["png"])]
    command += ["--markdown", str(paths["md"])]
    # This checkout as its own baseline: the before/after machinery runs in the smoke test.
    command += ["--baseline", str(ROOT)]
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed, json.loads(paths["json"].read_text()), paths


def test_smoke_run_reports_every_workload_and_framework(smoke):
    _, results, _ = smoke
    assert [w["id"] for w in results["workloads"]] == SMOKE_WORKLOADS
    frameworks = results["frameworks"]
    assert frameworks["ferrotape"]["status"] == "ok"
    assert frameworks["ferrotape-baseline"]["status"] == "ok"
    assert frameworks["numpy"]["status"] == "ok"
    for peer in ("pytorch", "jax"):
        assert frameworks[peer]["status"] == "not installed"
        assert frameworks[peer]["hint"] == catalog.INSTALL_HINTS[peer]
    assert results["settings"]["quick"] is True
    assert results["settings"]["repeats"] == 2


def test_numpy_runs_without_the_openblas_overrides(smoke):
    completed, results, _ = smoke
    details = results["frameworks"]["numpy"]["details"]
    assert details["OPENBLAS_CORETYPE"] == "(unset)"
    assert details["OPENBLAS_L2_SIZE"] == "(unset)"
    assert details["OPENBLAS_NUM_THREADS"] == str(results["settings"]["threads"])
    assert results["machine"]["openblas_env"] == {
        "OPENBLAS_CORETYPE": "Haswell",
        "OPENBLAS_L2_SIZE": "262144",
    }
    assert "numpy ran with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset" in completed.stdout


def test_machine_description(smoke):
    _, results, _ = smoke
    info = results["machine"]
    assert info["cpu"] and info["usable_cores"] >= 1 and info["date"][:2] == "20"
    assert results["settings"]["threads"] == info["usable_cores"]


def test_rows_hold_consistent_statistics_and_ratios(smoke):
    _, results, _ = smoke
    for workload in results["workloads"]:
        rows = {(r["framework"], r["variant"]): r for r in workload["rows"]}
        reference = rows[("ferrotape", "eager")]
        for row in rows.values():
            assert "error" not in row, row
            expected_count = 1 if workload["id"] == "memory" else 2
            assert len(row["samples"]) == expected_count
            assert row["median_raw"] == statistics.median(row["samples"])
            stats = row["stats"]
            assert stats["min"] <= stats["q1"] <= stats["median"] <= stats["q3"] <= stats["max"]
            assert row["ratio_to_ferrotape"] == pytest.approx(
                row["median_raw"] / reference["median_raw"]
            )
        assert reference["ratio_to_ferrotape"] == 1.0
        assert set(workload["skipped"]) == {"pytorch", "jax"}


def test_sgemm_rate_ratio_and_aim(smoke):
    _, results, _ = smoke
    w5 = next(w for w in results["workloads"] if w["id"] == "W5-1024")
    rows = {r["framework"]: r for r in w5["rows"]}
    assert set(rows) == {"ferrotape", "ferrotape-baseline", "numpy"}
    for row in rows.values():
        assert row["stats"]["median"] == pytest.approx(2 * 1024**3 / row["median_raw"] / 1e9)
    # Both computed the same product (the harness warns otherwise).
    assert rows["numpy"]["check"] == pytest.approx(rows["ferrotape"]["check"], rel=1e-4)
    assert w5["notes"] == []
    (check,) = w5["judgement"]["checks"]
    ratio = rows["numpy"]["median_raw"] / rows["ferrotape"]["median_raw"]
    assert check["ratio"] == pytest.approx(ratio)
    assert w5["judgement"]["met"] == ("yes" if ratio >= 0.95 else "no")


def test_workloads_numpy_has_no_version_of_are_left_out(smoke):
    _, results, _ = smoke
    for workload in results["workloads"]:
        if workload["id"] != "W5-1024":
            assert {r["framework"] for r in workload["rows"]} == {"ferrotape", "ferrotape-baseline"}
    w6 = next(w for w in results["workloads"] if w["id"] == "W6-jacobian")
    assert w6["judgement"]["met"] == "unchecked"  # torch.func was not measured
    assert "not measured" in w6["judgement"]["checks"][0]["note"]


def test_memory_rows_are_peak_rss_of_fresh_processes(smoke):
    _, results, _ = smoke
    memory = next(w for w in results["workloads"] if w["id"] == "memory")
    rows = {(r["framework"], r["variant"]): r for r in memory["rows"]}
    row = rows[("ferrotape", "eager")]
    assert ("ferrotape-baseline", "eager") in rows
    assert ("ferrotape", "ft.function") in rows  # the traced step is measured too
    (details,) = row["details"]
    assert details["steps"] == 1
    assert details["peak_rss_bytes"] >= details["after_build_rss_bytes"] > 0
    assert 20 < row["stats"]["median"] < 64 * 1024  # MiB


def test_printed_table_chart_and_markdown(smoke):
    completed, _, paths = smoke
    out = completed.stdout
    assert "Summary: medians" in out
    summary = out[out.index("Summary: medians") :].splitlines()
    assert summary[1].split()[:3] == ["workload", "ferrotape", "(eager)"]
    for workload_id in SMOKE_WORKLOADS:
        assert any(line.startswith(workload_id + " [") for line in summary)
    assert "pytorch: not installed, skipped" in out
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["md"].read_text()
    (header,) = [line for line in markdown.splitlines() if line.startswith("| workload |")]
    assert header.startswith("| workload | ferrotape (eager) | ")
    assert header.endswith(" aim | met |")
    for column in ("ferrotape (ft.function)", "ferrotape-baseline (eager)", "numpy (a @ b)"):
        assert f"| {column} |" in header
    assert markdown.count("\n| W") == 3 and "\n| memory [MiB] |" in markdown


def test_bad_arguments_exit_with_a_message():
    for args, message in (
        (["--workloads", "W9"], "unknown workload"),
        (["--frameworks", "mxnet"], "unknown framework"),
        (["--python", "tensorflow"], "FRAMEWORK=PATH"),
        (["--repeats", "0"], "--repeats must be at least 1"),
        (["--baseline", str(BENCHES)], "is not a ferrotape checkout"),
    ):
        completed = subprocess.run(
            [sys.executable, str(BENCHES / "compare.py"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 2 and message in completed.stderr, completed.stderr


def test_catalog_selection():
    assert [w.id for w in catalog.select("W6")] == [
        "W6-jacobian",
        "W6-batch_jacobian",
        "W6-hessian",
    ]
    assert [w.id for w in catalog.select("infer, w5-2048,W3")] == ["W5-2048", "W3", "inference"]
    assert len(catalog.select("all")) == len(catalog.WORKLOADS)
    assert catalog.select_frameworks("np,torch,ft") == ["ferrotape", "pytorch", "numpy"]
    assert "ferrotape-baseline" not in catalog.select_frameworks("all")
    with pytest.raises(ValueError, match="W7"):
        catalog.select("W3,W7")


def _row(framework, variant, samples, check=None):
    row = report.new_row(framework, variant, {"number": 1, "check": check})
    row["samples"] = samples
    return row


def test_report_judges_aims_from_medians():
    w3 = catalog.BY_ID["W3"]  # <= 12 ms and pytorch (eager) / ferrotape >= 1.3
    ft = [0.010, 0.011, 0.030]  # median 11 ms
    fast_torch = _row("pytorch", "eager", [0.021, 0.0143, 0.020])
    result = report.workload_result(w3, [_row("ferrotape", "eager", ft), fast_torch], {})
    rows = {r["framework"]: r for r in result["rows"]}
    assert rows["pytorch"]["ratio_to_ferrotape"] == pytest.approx(0.020 / 0.011)
    assert result["judgement"]["met"] == "yes"
    slow = report.workload_result(w3, [_row("ferrotape", "eager", [0.013]), fast_torch], {})
    assert [c["met"] for c in slow["judgement"]["checks"]] == [False, True]
    assert slow["judgement"]["met"] == "no"
    alone = report.workload_result(w3, [_row("ferrotape", "eager", ft)], {})
    assert alone["judgement"]["met"] == "partly"
    header, body = report.summary_rows({"workloads": [result]})
    assert header == ["workload", "ferrotape (eager)", "pytorch (eager)", "aim", "met"]
    assert body[0][1:3] == ["11.0", "20.0 (1.82x)"] and body[0][-1] == "yes"


def test_report_flags_results_that_disagree():
    hessian = catalog.BY_ID["W6-hessian"]
    rows = [
        _row("ferrotape", "eager", [1e-3], check=10.0),
        _row("pytorch", "torch.func", [1e-3], check=10.0 * (1 + 1e-5)),
        _row("jax", "jit", [1e-3], check=11.0),
    ]
    notes = report.workload_result(hessian, rows, {})["notes"]
    assert len(notes) == 1 and notes[0].startswith("jax (jit) computes a different result")
