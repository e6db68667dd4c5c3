"""A description of the machine a comparison ran on, for the report and its JSON file."""

import datetime
import os
import platform
import subprocess
from pathlib import Path

# The vector extensions that decide which kernels the frameworks can pick.
CPU_FLAGS = ("avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "amx_tile", "avx2", "fma")


def _cpuinfo():
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def _first(cpuinfo, key):
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == key:
            return value.strip()
    return None


def _memory_gib():
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        return None
    return None


def _git_commit(repo):
    try:
        commit = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def describe(repo):
    """CPU model, cores, vector extensions, memory, OS, date and the repository's commit."""
    cpuinfo = _cpuinfo()
    flags = set((_first(cpuinfo, "flags") or "").split())
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": _first(cpuinfo, "model name") or platform.processor() or platform.machine(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "cpu_flags": [flag for flag in CPU_FLAGS if flag in flags],
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "ferrotape_commit": _git_commit(repo),
        "openblas_env": {
            name: os.environ[name]
            for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
            if name in os.environ
        },
    }


def one_line(machine):
    """ "AMD EPYC, 2 cores (avx2, fma), 23.4 GiB, Linux-..., 2025-01-01T12:00:00+00:00"."""
    flags = ", ".join(machine["cpu_flags"]) or "no AVX2"
    return (
        f"{machine['cpu']}, {machine['usable_cores']} cores ({flags}), "
        f"{machine['memory_gib']} GiB, {machine['os']}, {machine['date']}"
    )
