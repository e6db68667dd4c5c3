"""The documentation site (mkdocs.yml, docs/): its examples run, its API reference reads the
compiled module's docstrings, and the strict build fails on a reference that points nowhere.

``scripts/test.sh`` builds the whole site with ``mkdocs build --strict``; these tests check the
pieces that build relies on, each in seconds.
"""

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import griffe
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GUIDES = ["index.md", "getting-started.md", "coming-from-tensorflow.md", "coming-from-pytorch.md"]
# A code block right after this comment is shown but not run (it needs a package CI lacks).
NOT_RUN = "<!-- not run by tests/test_docs.py"
BLOCK = re.compile(r"(<!--[^\n]*-->\n)?```python\n(.*?)```", re.DOTALL)

# The namespaces the API reference must cover, each on a page of its own.
REFERENCE = [
    "ferrotape",
    "ferrotape.GradientTape",
    "ferrotape.Variable",
    "ferrotape.Tensor",
    "ferrotape.math",
    "ferrotape.nn",
    "ferrotape.linalg",
    "ferrotape.random",
    "ferrotape.image",
    "ferrotape.data",
    "ferrotape.config",
    "ferrotape.train",
    "ferrotape.summary",
] + [
    f"ferrotape.keras.{name}"
    for name in [
        "layers",
        "models",
        "optimizers",
        "losses",
        "metrics",
        "callbacks",
        "activations",
        "initializers",
        "backend",
        "utils",
    ]
]


def _config():
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def _nav_pages(nav):
    for entry in nav:
        for value in entry.values():
            yield from _nav_pages(value) if isinstance(value, list) else [value]


def test_guide_examples_run():
    """Every Python block of the guides runs, the blocks of a page in order in one namespace."""
    for page in GUIDES:
        namespace = {}
        blocks = [code for marker, code in BLOCK.findall((DOCS / page).read_text()) if not marker]
        assert blocks, f"{page} has no Python example"
        for code in blocks:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, str(DOCS / page), "exec"), namespace)


def test_getting_started_is_the_readme_example():
    """The getting-started page opens with the README's first example, unchanged."""
    first = BLOCK.search((ROOT / "README.md").read_text()).group(2)
    assert first in (DOCS / "getting-started.md").read_text()


def test_reference_covers_the_public_namespaces():
    """Each namespace users touch has a page in the nav that documents it."""
    pages = list(_nav_pages(_config()["nav"]))
    documented = set()
    for page in pages:
        assert (DOCS / page).is_file(), f"mkdocs.yml's nav names a missing page {page}"
        documented.update(re.findall(r"^::: (\S+)", (DOCS / page).read_text(), re.MULTILINE))
    assert sorted(set(REFERENCE) - documented) == []
    assert "unsupported.md" in pages


def _load_with_extension():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from docs_griffe import FerrotapeDocstrings
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return griffe.load(
        "ferrotape",
        search_paths=[str(ROOT / "python")],
        docstring_parser="google",
        extensions=griffe.load_extensions(FerrotapeDocstrings()),
        resolve_aliases=True,
    )


def test_griffe_extension_completes_the_reference():
    """The stubs' one-line docstrings are replaced by the compiled module's whole docstrings,
    compiled classes show their constructor's parameters, names bound by assignment are
    documented as what they hold, doctests are fenced as code and reStructuredText's ``::``
    reads ``:``."""
    pkg = _load_with_extension()
    # Compiled function, through the top-level re-export: Args and Returns parse.
    sections = {s.kind.value for s in pkg["abs"].docstring.parsed}
    assert {"parameters", "returns"} <= sections, sections
    assert [p.name for p in pkg["Variable"]["__init__"].parameters][:3] == [
        "self",
        "initial_value",
        "trainable",
    ]
    # `stop_gradient = _core.stop_gradient` in gradients.py: a documented function, not a
    # bare attribute.
    assert pkg["stop_gradient"].is_function
    assert "gradient" in pkg["stop_gradient"].docstring.value
    # Made by a factory: the class keeps its run-time signature.
    mse = pkg["keras.losses.MeanSquaredError"]
    assert mse.is_class and "reduction" in [p.name for p in mse["__init__"].parameters]
    assert "```pycon\n>>> import ferrotape as ft" in pkg["where"].docstring.value
    sgd = pkg["keras.optimizers.SGD"].docstring.value
    assert "With momentum:\n" in sgd and "::" not in sgd, sgd


def _build(tmp_path, docstring):
    """Builds a one-page site, with the repository's mkdocstrings settings, that documents a
    module whose function has ``docstring``; returns mkdocs's exit status and output."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "refmod.py").write_text(
        f'def target():\n    """A function to point at."""\n\n\n'
        f'def pointer():\n    """{docstring}"""\n'
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Reference\n\n::: refmod\n")
    config = _config()
    handler = config["plugins"][1]["mkdocstrings"]["handlers"]["python"]
    handler["paths"] = [str(tmp_path / "src")]
    handler["options"]["extensions"] = [
        str(ROOT / extension) for extension in handler["options"]["extensions"]
    ]
    config.update(docs_dir=str(tmp_path / "docs"), site_dir=str(tmp_path / "site"))
    config["nav"] = [{"Reference": "index.md"}]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode, result.stdout + result.stderr


def test_strict_build_fails_on_a_reference_that_points_nowhere(tmp_path):
    """A docstring cross-reference to a name that does not exist fails the build, naming it."""
    status, output = _build(tmp_path, "Calls [the target][refmod.no_such_function].")
    assert status != 0, output
    assert "Could not find cross-reference target 'refmod.no_such_function'" in output, output


def test_strict_build_passes_with_a_reference_that_resolves(tmp_path):
    """The same build succeeds when the reference names a real function (the control)."""
    status, output = _build(tmp_path, "Calls [the target][refmod.target].")
    assert status == 0, output
    assert 'href="#refmod.target"' in (tmp_path / "site" / "index.html").read_text()


def test_ci_runs_the_strict_build():
    """scripts/test.sh builds the site with --strict and without --quiet, which would hide the
    warnings --strict counts (a broken reference would then pass)."""
    lines = (ROOT / "scripts" / "test.sh").read_text().splitlines()
    builds = [line for line in lines if line.startswith("mkdocs build")]
    assert builds == ["mkdocs build --strict"], builds


def test_pages_link_only_inside_the_repository():
    """The site's pages link to each other, never to the web (the strict build checks that
    the relative links resolve)."""
    for page in sorted(DOCS.rglob("*.md")):
        assert not re.search(r"https?://", page.read_text()), page
