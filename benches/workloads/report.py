"""The comparison's results: statistics, ratios to ferrotape, aims, and the table, Markdown, JSON
and bar chart made from them.

A row is one implementation (framework and variant) of one workload; its `samples` are raw
measurements: seconds per call, or bytes for peak RSS. Ratios divide the peer's median by
ferrotape's, so above 1 ferrotape is faster (or smaller); for GFLOP/s that is ferrotape's rate
over the peer's.
"""

import json
import statistics
from pathlib import Path

from . import catalog, machine

# Checks of comparable results (W5, W6) agree when their sums of |x| match to this tolerance.
AGREEMENT_RTOL = 1e-3
MET_MARKS = {"yes": "yes", "no": "NO", "partly": "yes*", "unchecked": "?"}


def settings(args):
    return {
        "threads": args.threads,
        "device": args.device,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "sample_seconds": args.sample_seconds,
        "settle_seconds": args.settle,
        "rss_steps": args.rss_steps,
        "rss_repeats": args.rss_repeats,
        "quick": args.quick,
        "workloads": [w.id for w in args.selected],
        "frameworks": args.framework_list,
        "pythons": args.pythons,
    }


def label(framework, variant):
    return f"{framework} ({variant})"


def new_row(framework, variant, info):
    """A row waiting for its samples; `info` is the worker's answer to "prepare"."""
    return {
        "framework": framework,
        "variant": variant,
        "label": label(framework, variant),
        "iterations_per_sample": info["number"],
        "check": info.get("check"),
        "samples": [],
    }


def error_row(framework, variant, message):
    return {
        "framework": framework,
        "variant": variant,
        "label": label(framework, variant),
        "error": message,
        "samples": [],
    }


def framework_line(framework, hello):
    """One line on what a framework's worker found: its version or why it is skipped."""
    status = hello.get("status")
    if status == "ok":
        details = hello.get("details") or {}
        extra = ", ".join(f"{k}={v}" for k, v in details.items() if v is not None)
        return (
            f"{framework} {hello.get('version')} (Python {hello.get('python_version')}, "
            f"{hello.get('python')}){': ' + extra if extra else ''}"
        )
    if status == "not installed":
        return f"{framework}: not installed, skipped ({hello.get('hint')})"
    if status == "no GPU":
        return f"{framework}: no GPU, skipped ({hello.get('reason')})"
    return f"{framework}: skipped, its worker failed: {hello.get('reason')}"


def _to_display(workload, raw):
    if workload.unit == "GFLOP/s":
        return workload.flops / raw / 1e9
    if workload.unit == "MiB":
        return raw / 2**20
    return raw * 1e3


def _statistics(workload, samples):
    """Median, extremes and quartiles of the raw samples, in the display unit (for a rate the
    shortest time gives the maximum), so that the median shown is the median the ratios use."""
    raw = sorted(samples)
    quartiles = statistics.quantiles(raw, n=4, method="inclusive") if len(raw) >= 2 else raw * 3
    q1, q3 = quartiles[0], quartiles[2]
    low, q1, median, q3, high = (
        _to_display(workload, value) for value in (raw[0], q1, statistics.median(raw), q3, raw[-1])
    )
    if low > high:  # a rate: the order of the times is reversed
        low, q1, q3, high = high, q3, q1, low
    return {"median": median, "min": low, "max": high, "q1": q1, "q3": q3, "count": len(raw)}


def _judge(workload, rows):
    """The aim's checks against the measured medians; "met" is yes, no, partly (all checked
    conditions hold but a peer was not measured) or unchecked."""
    by_key = {(r["framework"], r["variant"]): r for r in rows if "median_raw" in r}
    reference = by_key.get(catalog.REFERENCE)
    checks = []
    for check in workload.checks:
        entry = {"condition": check.describe(), "met": None}
        if reference is None:
            entry["note"] = "ferrotape not measured"
        elif check.kind == "max_seconds":
            entry["met"] = reference["median_raw"] <= check.value
        elif check.peer in by_key:
            ratio = by_key[check.peer]["median_raw"] / reference["median_raw"]
            entry.update(met=ratio >= check.value, ratio=ratio)
        else:
            entry["note"] = f"{label(*check.peer)} not measured"
        checks.append(entry)
    outcomes = [c["met"] for c in checks]
    if any(outcome is False for outcome in outcomes):
        met = "no"
    elif outcomes and all(outcome is True for outcome in outcomes):
        met = "yes"
    elif any(outcome is True for outcome in outcomes):
        met = "partly"
    else:
        met = "unchecked"
    return {"met": met, "checks": checks}


def _agreement(rows):
    """Notes on comparable results that differ between implementations."""
    checked = [r for r in rows if r.get("check") is not None]
    if len(checked) < 2:
        return []
    base = checked[0]
    return [
        f"{r['label']} computes a different result from {base['label']}: "
        f"sum |x| {r['check']:.6g} vs {base['check']:.6g}"
        for r in checked[1:]
        if abs(r["check"] - base["check"]) > AGREEMENT_RTOL * max(abs(base["check"]), 1e-12)
    ]


def workload_result(workload, rows, hellos):
    """A workload's JSON-ready result: rows with statistics and ratios, the aim, the skips."""
    order = {name: index for index, name in enumerate(catalog.FRAMEWORKS)}
    rows = sorted((dict(row) for row in rows), key=lambda r: order[r["framework"]])
    for row in rows:
        if row["samples"]:
            row["median_raw"] = statistics.median(row["samples"])
            row["stats"] = _statistics(workload, row["samples"])
    reference = next(
        (
            r
            for r in rows
            if (r["framework"], r["variant"]) == catalog.REFERENCE and "median_raw" in r
        ),
        None,
    )
    for row in rows:
        if reference is not None and "median_raw" in row:
            row["ratio_to_ferrotape"] = row["median_raw"] / reference["median_raw"]
    skipped = {
        framework: hello.get("hint") or hello.get("reason")
        for framework, hello in hellos.items()
        if hello.get("status") != "ok"
    }
    return {
        "id": workload.id,
        "group": workload.group,
        "title": workload.title,
        "unit": workload.unit,
        "raw_unit": "bytes" if workload.is_memory else "seconds",
        "aim": workload.aim,
        "judgement": _judge(workload, rows),
        "notes": _agreement(rows),
        "rows": rows,
        "skipped": skipped,
    }


def _number(value):
    """Three significant figures or more: 1234, 123, 12.3, 1.23, 0.123."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _columns(results):
    """Every implementation measured in any workload, in the rounds' framework order."""
    seen = []
    for workload in results["workloads"]:
        for row in workload["rows"]:
            if row["label"] not in seen:
                seen.append(row["label"])
    order = {name: index for index, name in enumerate(catalog.FRAMEWORKS)}
    return sorted(seen, key=lambda text: order[text.split(" ")[0]])


def _cell(row):
    if row is None:
        return "-"
    if "stats" not in row:
        return "error"
    text = _number(row["stats"]["median"])
    if row["framework"] != catalog.REFERENCE[0] and "ratio_to_ferrotape" in row:
        text += f" ({row['ratio_to_ferrotape']:.2f}x)"
    return text


def summary_rows(results):
    """The summary as a header and rows of strings (workload, each implementation, aim, met)."""
    columns = _columns(results)
    header = ["workload", *columns, "aim", "met"]
    body = []
    for workload in results["workloads"]:
        by_label = {row["label"]: row for row in workload["rows"]}
        body.append(
            [
                f"{workload['id']} [{workload['unit']}]",
                *(_cell(by_label.get(column)) for column in columns),
                workload["aim"],
                MET_MARKS[workload["judgement"]["met"]],
            ]
        )
    return header, body


def _aligned(header, body):
    """Rows of cells as left-aligned text columns, a rule under the header."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def join(cells):
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([join(header), rule, *map(join, body)])


def _header_lines(results):
    info = results["machine"]
    lines = [
        f"machine: {machine.one_line(info)}",
        f"ferrotape commit {info.get('ferrotape_commit')}; "
        f"{results['settings']['threads']} threads per framework; "
        + ("on each framework's GPU; " if results["settings"].get("device") == "gpu" else "")
        + f"medians of {results['settings']['repeats']} samples"
        + (
            " (--quick: smoke-test counts, not a measurement)"
            if results["settings"]["quick"]
            else ""
        ),
    ]
    for framework, hello in results["frameworks"].items():
        lines.append("  " + framework_line(framework, hello))
    build = (results["frameworks"].get("ferrotape", {}).get("details") or {}).get("build")
    if build == "debug":
        lines.append("  WARNING: ferrotape's extension is a debug build: its timings mean nothing")
    if "numpy" in results["frameworks"]:
        was = info.get("openblas_env") or {}
        values = ", ".join(f"{k}={v}" for k, v in was.items()) or "not set here"
        lines.append(
            "  numpy ran with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset "
            f"(in this shell: {values}); they halve OpenBLAS's speed on the benchmark machine"
        )
    return lines


def _details(workload):
    lines = [f"{workload['title']}  [{workload['unit']}; aim: {workload['aim']}]"]
    header = ["implementation", "median", "min", "max", "q1..q3", "samples x calls", "peer/ft"]
    body = []
    for row in workload["rows"]:
        if "stats" not in row:
            body.append([row["label"], "error", "", "", "", "", ""])
            continue
        s = row["stats"]
        body.append(
            [
                row["label"],
                _number(s["median"]),
                _number(s["min"]),
                _number(s["max"]),
                f"{_number(s['q1'])}..{_number(s['q3'])}",
                f"{s['count']} x {row['iterations_per_sample']}",
                f"{row['ratio_to_ferrotape']:.2f}" if "ratio_to_ferrotape" in row else "",
            ]
        )
    if body:
        lines += ["  " + line for line in _aligned(header, body).splitlines()]
    for row in workload["rows"]:
        if "error" in row:
            lines.append(f"  {row['label']} failed: {row['error'].splitlines()[-1][:300]}")
    for framework in workload["skipped"]:
        lines.append(f"  {framework}: skipped (not available)")
    for check in workload["judgement"]["checks"]:
        outcome = {True: "met", False: "NOT met", None: "not checked"}[check["met"]]
        extra = f" (ratio {check['ratio']:.2f})" if "ratio" in check else ""
        extra += f" ({check['note']})" if "note" in check else ""
        lines.append(f"  aim {check['condition']}: {outcome}{extra}")
    lines += [f"  warning: {note}" for note in workload["notes"]]
    return lines


def text(results):
    """The whole report: header, each workload's details, then the summary table."""
    lines = _header_lines(results) + [""]
    for workload in results["workloads"]:
        lines += _details(workload) + [""]
    header, body = summary_rows(results)
    lines.append("Summary: medians (peer's median / ferrotape's: above 1, ferrotape is ahead)")
    lines.append(_aligned(header, body))
    lines.append("met: yes, NO, yes* (a peer of the aim was not measured), ? (nothing to check)")
    return "\n".join(lines)


def markdown(results):
    """The summary as a Markdown table with the machine it came from."""
    header, body = summary_rows(results)
    lines = [
        f"Measured on {machine.one_line(results['machine'])}, "
        f"{results['settings']['threads']} threads per framework "
        f"(ferrotape {results['machine'].get('ferrotape_commit')}). Medians; in brackets the "
        "peer's median over ferrotape's (above 1: ferrotape ahead).",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def write_json(results, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")


def _aim_lines(workload):
    """Where ferrotape's bar must end for each aim condition, in the chart's unit."""
    rows = {(r["framework"], r["variant"]): r for r in workload["rows"] if "stats" in r}
    catalog_workload = catalog.BY_ID[workload["id"]]
    targets = []
    for check in catalog_workload.checks:
        if check.kind == "max_seconds":
            targets.append(check.value * 1e3)
        elif check.peer in rows:
            peer = rows[check.peer]["stats"]["median"]
            # A rate must reach value x the peer's; a time or a size stay below peer / value.
            targets.append(
                peer * check.value if workload["unit"] == "GFLOP/s" else peer / check.value
            )
    return targets


def write_png(results, path):
    """A bar chart: one panel per workload, each implementation's median with its min..max,
    ferrotape highlighted, the aim as a dashed line. Returns a line saying what was done."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no chart: matplotlib is not installed (pip install matplotlib)"
    workloads = [w for w in results["workloads"] if any("stats" in r for r in w["rows"])]
    if not workloads:
        return "no chart: nothing was measured"
    columns = 3 if len(workloads) > 4 else min(2, len(workloads))
    rows_count = -(-len(workloads) // columns)
    figure, axes = plt.subplots(
        rows_count, columns, figsize=(6 * columns, 2.8 * rows_count), squeeze=False
    )
    for axis, workload in zip(axes.flat, workloads, strict=False):
        measured = [r for r in workload["rows"] if "stats" in r]
        medians = [r["stats"]["median"] for r in measured]
        low = [m - r["stats"]["min"] for m, r in zip(medians, measured, strict=True)]
        high = [r["stats"]["max"] - m for m, r in zip(medians, measured, strict=True)]
        colours = [
            "#d95f02" if r["framework"] == catalog.REFERENCE[0] else "#7570b3" for r in measured
        ]
        positions = range(len(measured))
        bars = axis.barh(positions, medians, xerr=[low, high], color=colours, capsize=3)
        axis.bar_label(bars, [_number(m) for m in medians], label_type="center", fontsize=8)
        axis.set_yticks(list(positions), [r["label"] for r in measured], fontsize=8)
        axis.invert_yaxis()
        for target in _aim_lines(workload):
            axis.axvline(target, color="#1b9e77", linestyle="--", linewidth=1)
        better = "higher is better" if workload["unit"] == "GFLOP/s" else "lower is better"
        axis.set_xlabel(f"{workload['unit']} ({better}; dashed: aim)", fontsize=8)
        axis.set_title(workload["title"], fontsize=8, loc="left")
        axis.tick_params(axis="x", labelsize=8)
    for axis in list(axes.flat)[len(workloads) :]:
        axis.set_visible(False)
    figure.suptitle(
        f"ferrotape vs peers: {machine.one_line(results['machine'])}, "
        f"{results['settings']['threads']} threads",
        fontsize=9,
    )
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return f"wrote {path}"
