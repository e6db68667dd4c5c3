"""What each workload of issue 3 is, how its result is shown, and the issue's aim for it.

This module imports no framework: `compare.py` reads it to plan the runs and judge the aims, the
workers read it to know which step to build. A workload belongs to a *family* (the step every
framework module knows how to build, such as ``"cnn_train"``) and carries the family's
parameters (the matrix size, the batch size).
"""

from dataclasses import dataclass, field

# The order in which rounds visit the frameworks (issue 3: ft, tf, torch, jax, numpy, ft, ...).
# "ferrotape-baseline" is another ferrotape checkout (compare.py --baseline), run only when asked
# for: before/after figures of a change come from one run, its rounds alternating the two builds.
FRAMEWORKS = ("ferrotape", "ferrotape-baseline", "tensorflow", "pytorch", "jax", "numpy")
OPTIONAL = ("ferrotape-baseline",)
ALIASES = {"ft": "ferrotape", "tf": "tensorflow", "torch": "pytorch", "np": "numpy"}
INSTALL_HINTS = {
    "ferrotape": "maturin develop --release (see the top-level README)",
    "ferrotape-baseline": "a release build in the --baseline checkout (see the top-level README)",
    "numpy": "pip install numpy",
    "tensorflow": "pip install tensorflow-cpu",
    "pytorch": "pip install torch --index-url https://download.pytorch.org/whl/cpu",
    "jax": 'pip install "jax[cpu]"',
}
REFERENCE = ("ferrotape", "eager")


@dataclass(frozen=True)
class AimCheck:
    """One condition of an aim, on ferrotape's median.

    ``kind="max_seconds"``: ferrotape's time is at most ``value`` seconds.
    ``kind="ratio"``: the peer's median divided by ferrotape's (time or memory: larger is better
    for ferrotape) is at least ``value``; for GFLOP/s that is ferrotape's rate over the peer's.
    """

    kind: str
    value: float
    peer: tuple[str, str] | None = None

    def describe(self):
        if self.kind == "max_seconds":
            return f"ferrotape <= {self.value * 1e3:g} ms"
        framework, variant = self.peer
        return f"{framework} ({variant}) / ferrotape >= {self.value:g}"


@dataclass(frozen=True)
class Workload:
    """One row group of the comparison table."""

    id: str
    group: str
    family: str
    title: str
    unit: str  # "ms", "GFLOP/s" (from `flops`) or "MiB" (peak RSS)
    aim: str
    checks: tuple[AimCheck, ...] = ()
    params: dict = field(default_factory=dict)

    @property
    def flops(self):
        """Floating-point operations of one step, where the unit is a rate."""
        size = self.params.get("n")
        return 2.0 * size**3 if self.family == "sgemm" else None

    @property
    def is_memory(self):
        return self.family == "rss"


def _sgemm(size):
    return Workload(
        id=f"W5-{size}",
        group="W5",
        family="sgemm",
        title=f"W5 sgemm {size}x{size} float32",
        unit="GFLOP/s",
        aim=">= 0.95x OpenBLAS (numpy)",
        checks=(AimCheck("ratio", 0.95, ("numpy", "a @ b")),),
        params={"n": size},
    )


def _w6(suffix, family, title):
    return Workload(
        id=f"W6-{suffix}",
        group="W6",
        family=family,
        title=title,
        unit="ms",
        aim="at or below PyTorch (torch.func)",
        checks=(AimCheck("ratio", 1.0, ("pytorch", "torch.func")),),
    )


WORKLOADS = (
    _sgemm(1024),
    _sgemm(2048),
    Workload(
        id="W3",
        group="W3",
        family="cnn_train",
        title="W3 seed CNN train step, batch 64, 28x28x1 (BN, Dropout training=True; Adam)",
        unit="ms",
        aim="<= 12 ms (>= 1.3x PyTorch)",
        checks=(AimCheck("max_seconds", 12e-3), AimCheck("ratio", 1.3, ("pytorch", "eager"))),
        params={"batch": 64},
    ),
    Workload(
        id="W4",
        group="W4",
        family="mlp_train",
        title="W4 MLP 784-128-10 train step, batch 128 (xent + L2, clip_by_norm, Adam)",
        unit="ms",
        aim="<= 0.45 ms",
        checks=(AimCheck("max_seconds", 0.45e-3),),
        params={"batch": 128},
    ),
    _w6("jacobian", "jacobian", "W6 jacobian of Dense(10, relu) on [7,5] wrt its kernel"),
    _w6("batch_jacobian", "batch_jacobian", "W6 batch_jacobian of Dense(8, elu)-Dense(6, elu)"),
    _w6("hessian", "hessian", "W6 Hessian wrt Dense(8, relu)'s kernel via nested tapes"),
    Workload(
        id="inference",
        group="inference",
        family="cnn_infer",
        title="inference: seed CNN forward, batch 256 (training=False)",
        unit="ms",
        aim="<= 12 ms",
        checks=(AimCheck("max_seconds", 12e-3),),
        params={"batch": 256},
    ),
    Workload(
        id="memory",
        group="memory",
        family="rss",
        title="peak RSS of a fresh process training the seed CNN (batch 64)",
        unit="MiB",
        aim="<= PyTorch's",
        checks=(AimCheck("ratio", 1.0, ("pytorch", "eager")),),
        params={"batch": 64},
    ),
)
BY_ID = {workload.id: workload for workload in WORKLOADS}
GROUPS = {"W5", "W3", "W4", "W6", "inference", "memory"}
GROUP_ALIASES = {"infer": "inference", "rss": "memory", "mem": "memory"}


def select(spec):
    """The workloads named by a comma-separated `spec` of ids ("W6-hessian"), groups ("W6") or
    "all", in catalogue order; raises ValueError naming the unknown ones."""
    wanted, unknown = set(), []
    for name in (part.strip() for part in spec.split(",") if part.strip()):
        key = next((w.id for w in WORKLOADS if w.id.lower() == name.lower()), None)
        group = GROUP_ALIASES.get(name.lower(), name)
        group = next((g for g in GROUPS if g.lower() == group.lower()), None)
        if name.lower() == "all":
            wanted.update(BY_ID)
        elif key is not None:
            wanted.add(key)
        elif group is not None:
            wanted.update(w.id for w in WORKLOADS if w.group == group)
        else:
            unknown.append(name)
    if unknown or not wanted:
        known = ", ".join(sorted(GROUPS) + [w.id for w in WORKLOADS if w.id not in GROUPS])
        raise ValueError(
            f"--workloads: unknown workload(s) {unknown or spec!r}; "
            f"expected 'all' or some of {known}"
        )
    return [w for w in WORKLOADS if w.id in wanted]


def select_frameworks(spec):
    """The frameworks named by a comma-separated `spec` (aliases ft, tf, torch, np; or "all"),
    in round order; raises ValueError naming the unknown ones."""
    names = [ALIASES.get(p.strip().lower(), p.strip().lower()) for p in spec.split(",")]
    names = [n for n in names if n]
    if "all" in names:
        return [f for f in FRAMEWORKS if f not in OPTIONAL]
    unknown = [n for n in names if n not in FRAMEWORKS]
    if unknown or not names:
        raise ValueError(
            f"--frameworks: unknown framework(s) {unknown or spec!r}; "
            f"expected some of {', '.join(FRAMEWORKS)} (or ft, tf, torch, np)"
        )
    return [f for f in FRAMEWORKS if f in names]
