"""ferrotape against PyTorch, TensorFlow, JAX and numpy on issue 3's workloads.

Each framework runs in its own worker process (a fresh interpreter, possibly another one: see
--python), with every thread pool pinned to the same number of threads. Each workload is warmed
up in every framework, then timed in rounds that visit the frameworks in turn (ferrotape,
TensorFlow, PyTorch, JAX, numpy, ferrotape, ...), so that drift of the machine's speed hits all of
them alike. The report gives each implementation's median (with min/max and quartiles), the
ratio of each peer to ferrotape, and the issue's aim with whether it is met; it is printed as a
table and written as JSON and as a bar chart PNG. A framework that is not installed is skipped,
saying so.

    python benches/compare.py                                   # everything, all frameworks
    python benches/compare.py --workloads W3,W5 --frameworks ft,torch --repeats 21
    python benches/compare.py --python tensorflow=/path/to/venv/bin/python
    python benches/compare.py --quick --frameworks ft,numpy     # a smoke run (seconds)
    python benches/compare.py --workloads W3,W4 --frameworks ft --baseline ../before
                                    # this checkout against another one's release build

The workloads, the install command for the peers and how to read the output are described in
benches/README.md.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
REPO = BENCHES.parent
sys.path.insert(0, str(BENCHES))

from workloads import catalog, machine, report  # noqa: E402

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "RAYON_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
# Set on the benchmark machine, these make OpenBLAS choose a slower kernel and blocking: numpy's
# worker runs without them (issue 3), and the report says so.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


class WorkerError(RuntimeError):
    """A worker died, timed out or answered something that is not the protocol."""


class Worker:
    """A framework's worker process (see workloads/worker.py) and its request/answer channel."""

    def __init__(
        self,
        framework,
        python,
        threads,
        log_dir,
        extra_args=(),
        verbose=False,
        package=REPO,
        device="cpu",
    ):
        self.framework = framework
        self.log_path = Path(log_dir) / f"{framework}{'-'.join(('', *extra_args))}.log"
        self.log = None if verbose else open(self.log_path, "w")  # noqa: SIM115 (closed in close)
        command = [python, "-m", "workloads.worker", "--framework", framework]
        command += ["--threads", str(threads), *extra_args]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=worker_environment(framework, threads, package, device),
            cwd=BENCHES,
            text=True,
        )

    def read(self, timeout):
        """The next JSON line from the worker; raises WorkerError if none comes in `timeout` s."""
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            raise WorkerError(f"{self.framework} worker: no answer within {timeout:g} s")
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            raise WorkerError(
                f"{self.framework} worker exited (status {self.process.returncode}): "
                + self.log_tail()
            )
        return json.loads(line)

    def request(self, payload, timeout):
        try:
            self.process.stdin.write(json.dumps(payload) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as error:
            raise WorkerError(f"{self.framework} worker is gone: {self.log_tail()}") from error
        return self.read(timeout)

    def log_tail(self, lines=12):
        if self.log is None:
            return "(its stderr went to the terminal)"
        self.log.flush()
        text = self.log_path.read_text(errors="replace").strip().splitlines()
        return "\n".join(text[-lines:]) or "(nothing on its stderr)"

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        if self.log is not None:
            self.log.close()


def worker_environment(framework, threads, package=REPO, device="cpu"):
    """The parent's environment with every thread pool pinned, the benches on the path, the
    device the workloads run on, and the framework's own adjustments; ferrotape is imported
    from the checkout `package`."""
    env = dict(os.environ, BENCH_DEVICE=device)
    for name in THREAD_VARIABLES:
        env[name] = str(threads)
    paths = [str(BENCHES)]
    if framework.startswith("ferrotape"):
        # Lets another interpreter (a peer's virtual environment) import the checkout's package.
        paths.append(str(Path(package) / "python"))
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    if framework == "numpy":
        for name in OPENBLAS_OVERRIDES:
            env.pop(name, None)
    if framework == "tensorflow":
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if framework == "jax":
        env.setdefault("JAX_PLATFORMS", "cuda" if device == "gpu" else "cpu")
    return env


def parse_pythons(pairs, parser):
    """--python FRAMEWORK=PATH pairs as a dict (framework names and aliases as --frameworks)."""
    pythons = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        try:
            (framework,) = catalog.select_frameworks(name)
        except ValueError as error:
            parser.error(f"--python {pair!r}: {error}")
        if not sep or not path:
            parser.error(f"--python expects FRAMEWORK=PATH, got {pair!r}")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            parser.error(f"--python {pair!r}: {path} is not an executable file")
        pythons[framework] = path
    return pythons


def start_workers(frameworks, pythons, args, log_dir):
    """Starts every framework's worker (their imports overlap) and collects the hellos."""
    workers, hellos = {}, {}
    for framework in frameworks:
        python = pythons.get(framework, sys.executable)
        workers[framework] = Worker(
            framework,
            python,
            args.threads,
            log_dir,
            (),
            args.verbose,
            package_of(framework, args),
            args.device,
        )
    for framework, worker in list(workers.items()):
        try:
            hello = worker.read(args.timeout)
        except (WorkerError, json.JSONDecodeError) as error:
            hello = {"framework": framework, "status": "error", "reason": str(error)}
        hello.setdefault("python", pythons.get(framework, sys.executable))
        if hello.get("status") != "ok":
            worker.close()
            del workers[framework]
            if hello.get("status") == "not installed":
                hello["hint"] = catalog.INSTALL_HINTS[framework]
        hellos[framework] = hello
        progress(report.framework_line(framework, hello))
    return workers, hellos


def package_of(framework, args):
    """The checkout a ferrotape worker imports: --baseline's for the baseline, else this one."""
    return args.baseline if framework == "ferrotape-baseline" else REPO


def progress(message, end="\n"):
    print(message, file=sys.stderr, end=end, flush=True)


def time_workload(workload, workers, args):
    """Warms up and times one workload in every live worker, rounds alternating frameworks."""
    rows = []
    live = {}
    for framework, worker in workers.items():
        payload = {
            "cmd": "prepare",
            "workload": workload.id,
            "warmup": args.warmup,
            "sample_seconds": args.sample_seconds,
            "quick": args.quick,
        }
        try:
            answer = worker.request(payload, args.timeout)
        except WorkerError as error:
            rows.append(report.error_row(framework, "-", str(error)))
            continue
        for variant, info in answer["variants"].items():
            if "error" in info:
                rows.append(report.error_row(framework, variant, info["error"]))
                continue
            row = report.new_row(framework, variant, info)
            rows.append(row)
            live[(framework, variant)] = row
    for round_index in range(args.repeats):
        progress(f"  {workload.id}: round {round_index + 1}/{args.repeats}", end="\r")
        for (framework, variant), row in live.items():
            if "error" in row:
                continue
            payload = {"cmd": "sample", "workload": workload.id, "variant": variant}
            payload["number"] = row["iterations_per_sample"]
            try:
                row["samples"].append(workers[framework].request(payload, args.timeout)["seconds"])
            except WorkerError as error:
                row["error"] = str(error)
            time.sleep(args.settle)  # lets the last framework's spinning threads go to sleep
    progress("")
    for worker in workers.values():
        try:
            worker.request({"cmd": "release", "workload": workload.id}, args.timeout)
        except WorkerError:
            pass
    return rows


def measure_memory(workload, hellos, pythons, args, log_dir):
    """Peak RSS of fresh processes training the seed CNN, one per framework variant per round."""
    rows = {}
    ready = [f for f in catalog.FRAMEWORKS if hellos.get(f, {}).get("status") == "ok"]
    for round_index in range(args.rss_repeats):
        progress(f"  {workload.id}: round {round_index + 1}/{args.rss_repeats}", end="\r")
        for framework in ready:
            for variant in hellos[framework].get("variants", {}).get("cnn_train", []):
                row = rows.setdefault(
                    (framework, variant), report.new_row(framework, variant, {"number": 1})
                )
                extra = ("--rss", variant, "--steps", str(args.rss_steps))
                python = pythons.get(framework, sys.executable)
                worker = Worker(
                    framework,
                    python,
                    args.threads,
                    log_dir,
                    extra,
                    args.verbose,
                    package_of(framework, args),
                    args.device,
                )
                try:
                    rss = worker.read(args.timeout).get("rss", {"error": "no measurement"})
                except WorkerError as error:
                    rss = {"error": str(error)}
                worker.close()
                if "error" in rss:
                    row["error"] = rss["error"]
                else:
                    row["samples"].append(rss["peak_rss_bytes"])
                    row.setdefault("details", []).append(rss)
    progress("")
    return list(rows.values())


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Workloads: " + ", ".join(w.id for w in catalog.WORKLOADS) + " (groups: W5, W6).",
    )
    parser.add_argument("--workloads", default="all", help="comma-separated ids or groups")
    parser.add_argument(
        "--frameworks",
        default="all",
        help="comma-separated: " + ", ".join(catalog.FRAMEWORKS) + " (or ft, tf, torch, np)",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="FRAMEWORK=PATH",
        help="run FRAMEWORK's worker under this interpreter (repeatable)",
    )
    parser.add_argument("--repeats", type=int, help="timed samples per implementation (15)")
    parser.add_argument("--warmup", type=int, help="untimed calls before timing (5)")
    parser.add_argument(
        "--sample-seconds", type=float, default=0.25, help="length of one timed sample"
    )
    default_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    parser.add_argument(
        "--threads",
        type=int,
        default=default_threads or os.cpu_count(),
        help="threads for every framework (default: the usable cores)",
    )
    parser.add_argument("--rss-steps", type=int, help="training steps of the memory run (50)")
    parser.add_argument("--rss-repeats", type=int, help="fresh processes per variant (3)")
    parser.add_argument("--settle", type=float, help="pause between samples, seconds (0.1)")
    parser.add_argument("--timeout", type=float, default=900.0, help="per worker answer, seconds")
    parser.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default="cpu",
        help="run the workloads on the CPU (default) or on each framework's first GPU "
        "(ferrotape: a build with the gpu feature; PyTorch: CUDA); a framework without a GPU "
        "is skipped",
    )
    parser.add_argument("--quick", action="store_true", help="tiny counts: a smoke run")
    parser.add_argument("--json", default=str(BENCHES / "results" / "compare.json"))
    parser.add_argument(
        "--png", default=str(BENCHES / "results" / "compare.png"), help="'' for no chart"
    )
    parser.add_argument("--markdown", help="also write the summary as a Markdown table here")
    parser.add_argument("--verbose", action="store_true", help="workers' stderr to the terminal")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another ferrotape checkout with its own release build: also timed, as "
        "'ferrotape-baseline', in the same alternating rounds (before/after figures)",
    )
    args = parser.parse_args(argv)

    quick = args.quick
    for name, normal, small in (
        ("repeats", 15, 2),
        ("warmup", 5, 1),
        ("rss_steps", 50, 2),
        ("rss_repeats", 3, 1),
        ("settle", 0.1, 0.0),
    ):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else normal)
    for name in ("repeats", "warmup", "rss_steps", "rss_repeats", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.sample_seconds <= 0 or args.timeout <= 0 or args.settle < 0:
        parser.error("--sample-seconds and --timeout must be positive, --settle not negative")
    try:
        args.selected = catalog.select(args.workloads)
        args.framework_list = catalog.select_frameworks(args.frameworks)
    except ValueError as error:
        parser.error(str(error))
    args.pythons = parse_pythons(args.python, parser)
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
        if not (args.baseline / "python" / "ferrotape").is_dir():
            parser.error(f"--baseline: {args.baseline} is not a ferrotape checkout")
        if "ferrotape" in args.framework_list:
            at = args.framework_list.index("ferrotape") + 1
            args.framework_list.insert(at, "ferrotape-baseline")
    return args


def main(argv=None):
    args = parse_args(argv)
    description = machine.describe(REPO)
    progress(
        f"machine: {machine.one_line(description)}; {args.threads} threads per framework"
        + ("; on the GPU" if args.device == "gpu" else "")
    )
    results = {
        "command": [Path(sys.executable).name, "benches/compare.py", *(argv or sys.argv[1:])],
        "machine": description,
        "settings": report.settings(args),
        "frameworks": {},
        "workloads": [],
    }
    with tempfile.TemporaryDirectory(prefix="ferrotape-compare-") as log_dir:
        workers, hellos = start_workers(args.framework_list, args.pythons, args, log_dir)
        results["frameworks"] = hellos
        try:
            for workload in args.selected:
                if workload.is_memory:
                    continue
                progress(f"{workload.id}: {workload.title}")
                rows = time_workload(workload, workers, args)
                results["workloads"].append(report.workload_result(workload, rows, hellos))
        finally:
            for worker in workers.values():
                worker.close()
        for workload in args.selected:
            if workload.is_memory:
                progress(f"{workload.id}: {workload.title}")
                rows = measure_memory(workload, hellos, args.pythons, args, log_dir)
                results["workloads"].append(report.workload_result(workload, rows, hellos))

    print(report.text(results))
    report.write_json(results, args.json)
    progress(f"wrote {args.json}")
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(report.markdown(results))
        progress(f"wrote {args.markdown}")
    if args.png:
        message = report.write_png(results, args.png)
        progress(message)
    return results


if __name__ == "__main__":
    main()
