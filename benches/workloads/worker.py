"""One framework's benchmark process, driven by compare.py.

    python -m workloads.worker --framework NAME --threads N
        A server: says hello (one JSON line: the framework's version, or why it cannot run), then
        answers one JSON line per request read from stdin:
          {"cmd": "prepare", "workload": ID, "warmup": W, "sample_seconds": S, "quick": B}
              builds every variant's step, warms it up and sizes its samples;
          {"cmd": "sample", "workload": ID, "variant": V, "number": N}
              times N calls and answers the seconds per call;
          {"cmd": "release", "workload": ID}, {"cmd": "quit"}.
    python -m workloads.worker --framework NAME --threads N --rss VARIANT --steps S
        Trains the seed CNN for S steps in this fresh process and answers its peak RSS.

The framework is imported in a fresh interpreter, so no other framework's imports, allocator or
thread pools share the process. Anything a library prints goes to stderr; stdout carries only the
protocol.
"""

import argparse
import gc
import importlib
import json
import os
import platform
import sys
import traceback

from . import catalog, common

# Families whose result depends only on the shared inputs, so every framework must agree on it.
COMPARABLE = {"sgemm", "jacobian", "batch_jacobian", "hessian"}
TOP_LEVEL_MODULES = {"ferrotape", "numpy", "tensorflow", "torch", "jax", "jaxlib"}


def _protocol_channel():
    """A private copy of stdout for the protocol; fd 1 then points at stderr, so that prints
    from the frameworks (or their native code) cannot corrupt the JSON lines."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return channel


def _pin_affinity(threads):
    # XLA (and any pool sized from the visible cores) follows the affinity mask.
    if hasattr(os, "sched_getaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        if threads < len(cpus):
            os.sched_setaffinity(0, cpus[:threads])


def load(framework, threads):
    """Imports the framework's module and runs its setup; returns (module, hello message)."""
    hello = {
        "framework": framework,
        "python": sys.executable,
        "python_version": platform.python_version(),
    }
    try:
        # The baseline is ferrotape too, imported from another checkout (see compare.py).
        module_name = "ferrotape" if framework == "ferrotape-baseline" else framework
        module = importlib.import_module(f"workloads.on_{module_name}")
    except ImportError as error:
        # Only the framework's own top-level package missing means "not installed"; a missing
        # submodule (a half-built extension, say) is an error worth reading.
        missing = isinstance(error, ModuleNotFoundError) and error.name in TOP_LEVEL_MODULES
        hello.update(status="not installed" if missing else "error", reason=str(error))
        return None, hello
    except Exception as error:  # a broken install: report it, the other frameworks still run
        hello.update(status="error", reason=f"{type(error).__name__}: {error}")
        return None, hello
    try:
        info = module.setup(threads)
    except common.NoGpu as error:
        hello.update(status="no GPU", reason=str(error))
        return None, hello
    variants = {family: sorted(builders) for family, builders in module.VARIANTS.items()}
    hello.update(status="ok", variants=variants, **info)
    return module, hello


def _check_value(module, family, result):
    """A number every framework must agree on for comparable families (the sum of |result|)."""
    if family not in COMPARABLE:
        return None
    import numpy as np

    return float(np.sum(np.abs(np.asarray(module.to_numpy(result), dtype=np.float64))))


def prepare(module, workload, request, steps):
    """Builds, warms up and sizes every variant of `workload`; returns their sizes or errors."""
    family = workload.family
    data = common.inputs(family, workload.params)
    answers = {}
    for variant, build in module.VARIANTS.get(family, {}).items():
        try:
            step = build(data)
            check = _check_value(module, family, step())
            if request.get("quick"):
                number, single = 1, common.seconds_per_call(step, module.sync, 1)
            else:
                number, single = common.calibrate(
                    step, module.sync, request["warmup"], request["sample_seconds"]
                )
            steps[(workload.id, variant)] = step
            answers[variant] = {"number": number, "single_s": single, "check": check}
        except Exception as error:
            answers[variant] = {"error": f"{type(error).__name__}: {error}"}
            traceback.print_exc()
    return {"variants": answers}


def serve(module, channel):
    """Answers requests until "quit" or the end of stdin."""
    steps = {}
    for line in sys.stdin:
        request = json.loads(line)
        command = request["cmd"]
        if command == "quit":
            break
        workload = catalog.BY_ID[request["workload"]]
        if command == "prepare":
            answer = prepare(module, workload, request, steps)
        elif command == "sample":
            step = steps[(workload.id, request["variant"])]
            answer = {"seconds": common.seconds_per_call(step, module.sync, request["number"])}
        elif command == "release":
            for key in [key for key in steps if key[0] == workload.id]:
                del steps[key]
            gc.collect()
            answer = {"released": workload.id}
        else:
            answer = {"error": f"unknown command {command!r}"}
        channel.write(json.dumps(answer) + "\n")


def measure_rss(module, variant, steps, batch):
    """Peak RSS of this process over building the seed CNN and training it for `steps` steps."""
    after_import = common.current_rss_bytes()
    build = module.VARIANTS["cnn_train"][variant]
    step = build(common.inputs("cnn_train", {"batch": batch}))
    after_build = common.current_rss_bytes()
    for _ in range(steps):
        module.sync(step())
    return {
        "peak_rss_bytes": common.peak_rss_bytes(),
        "after_import_rss_bytes": after_import,
        "after_build_rss_bytes": after_build,
        "steps": steps,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="one framework's benchmark worker")
    parser.add_argument("--framework", required=True, choices=catalog.FRAMEWORKS)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--rss", metavar="VARIANT", help="measure peak RSS of this variant")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args(argv)

    channel = _protocol_channel()
    _pin_affinity(args.threads)
    try:
        module, hello = load(args.framework, args.threads)
    except Exception as error:
        traceback.print_exc()
        module, hello = None, {"framework": args.framework, "status": "error", "reason": str(error)}
    if args.rss and module is not None:
        try:
            hello["rss"] = measure_rss(module, args.rss, args.steps, args.batch)
        except Exception as error:
            traceback.print_exc()
            hello["rss"] = {"error": f"{type(error).__name__}: {error}"}
    channel.write(json.dumps(hello) + "\n")
    if module is not None and not args.rss:
        serve(module, channel)
    channel.close()


if __name__ == "__main__":
    main()
