"""How much of TensorFlow's public API ferrotape has, namespace by namespace.

Needs TensorFlow (2.21, with Keras 3 as `tf.keras`) importable next to ferrotape:

    python scripts/tf_coverage.py            # have/total (percent) per namespace, and overall
    python scripts/tf_coverage.py --missing  # also lists the missing names

What counts as a name: every attribute of a measured TensorFlow namespace (see NAMESPACES) whose
name does not start with an underscore and whose value is not a module. Submodules are not names:
`tf.math` is measured as its own namespace, and the contents of submodules that are not in
NAMESPACES (`tf.config.threading`, `tf.keras.optimizers.schedules`, ...) are not measured at all.
Aliases count once per spelling (`MaxPool2D` and `MaxPooling2D`), as a program may use either.

A name is present when ferrotape has an attribute of that name at the same path (`tf.math.cumsum`
is looked up as `ferrotape.math.cumsum`); what it does is not checked here, the tests do that.

Names matched by a pattern in `docs/unsupported.md` (the format is described there) are left out
of both counts: they are deliberately out of scope. The script only reports; it exits 0 whatever
the figure, and also when TensorFlow is not installed (it says so on stderr).
"""

import argparse
import dataclasses
import fnmatch
import importlib
import os
import pathlib
import re
import sys
import types

NAMESPACES = [
    "tf",
    "tf.math",
    "tf.nn",
    "tf.linalg",
    "tf.random",
    "tf.config",
    "tf.data",
    "tf.train",
    "tf.image",
    "tf.debugging",
    "tf.summary",
    "tf.keras.layers",
    "tf.keras.losses",
    "tf.keras.metrics",
    "tf.keras.optimizers",
    "tf.keras.callbacks",
    "tf.keras.activations",
    "tf.keras.initializers",
    "tf.keras.backend",
    "tf.keras.utils",
    "tf.keras.models",
]

ROOT = pathlib.Path(__file__).resolve().parent.parent
UNSUPPORTED = ROOT / "docs" / "unsupported.md"

# A fenced block tagged `patterns`: the opening fence, its lines, the closing fence.
_PATTERN_BLOCK = re.compile(r"^```patterns[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclasses.dataclass
class Row:
    """One namespace: the names counted, those ferrotape has, and how many were out of scope."""

    namespace: str
    present: list
    missing: list
    excluded: int

    @property
    def total(self):
        return len(self.present) + len(self.missing)


def load_patterns(path=UNSUPPORTED):
    """The fnmatch patterns of every `patterns` block in the markdown file at `path`."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    patterns = []
    for block in _PATTERN_BLOCK.findall(text):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                patterns.append(line)
    return patterns


def resolve(root, namespace):
    """The module at dotted `namespace` below `root` (whose own name is the first part), or None."""
    obj = root
    for part in namespace.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def public_names(module):
    """Attributes of `module` that count as names: no leading underscore, not a module."""
    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        if isinstance(getattr(module, name, None), types.ModuleType):
            continue
        names.append(name)
    return sorted(names)


def is_excluded(path, patterns):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


def measure_namespace(tf, ft, namespace, patterns):
    names = public_names(resolve(tf, namespace))
    ours = resolve(ft, namespace)
    row = Row(namespace, [], [], 0)
    for name in names:
        if is_excluded(f"{namespace}.{name}", patterns):
            row.excluded += 1
        elif ours is not None and hasattr(ours, name):
            row.present.append(name)
        else:
            row.missing.append(name)
    return row


def measure(tf, ft, patterns, namespaces=NAMESPACES):
    """One Row per namespace, comparing module `tf` (TensorFlow) with module `ft` (ferrotape)."""
    return [measure_namespace(tf, ft, ns, patterns) for ns in namespaces]


def percent(have, total):
    return 100.0 * have / total if total else 100.0


def overall(rows):
    """(have, total, percent) over all rows."""
    have = sum(len(r.present) for r in rows)
    total = sum(r.total for r in rows)
    return have, total, percent(have, total)


def report(rows, missing=False):
    """The text the script prints."""
    width = max(len(r.namespace) for r in rows)
    lines = []
    for r in rows:
        have = len(r.present)
        figure = f"{have}/{r.total} ({percent(have, r.total):.1f}%)"
        lines.append(f"{r.namespace:<{width}}  {figure:<18} {r.excluded} out of scope")
    have, total, pct = overall(rows)
    excluded = sum(r.excluded for r in rows)
    lines.append(
        f"{'overall':<{width}}  {f'{have}/{total} ({pct:.1f}%)':<18} {excluded} out of scope"
    )
    if missing:
        for r in rows:
            if r.missing:
                lines.append("")
                lines.append(f"missing in {r.namespace} ({len(r.missing)}):")
                lines.extend(f"  {r.namespace}.{name}" for name in r.missing)
    return "\n".join(lines)


def import_tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        return importlib.import_module("tensorflow")
    except ImportError:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument(
        "--unsupported",
        default=str(UNSUPPORTED),
        help="markdown file with the out-of-scope patterns (default: docs/unsupported.md)",
    )
    args = parser.parse_args(argv)
    tf = import_tensorflow()
    if tf is None:
        print("TensorFlow is not installed: nothing to compare with.", file=sys.stderr)
        return 0
    import ferrotape

    print(f"TensorFlow {tf.__version__}, ferrotape {getattr(ferrotape, '__version__', '?')}")
    rows = measure(tf, ferrotape, load_patterns(args.unsupported))
    print(report(rows, missing=args.missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
