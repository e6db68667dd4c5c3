"""Every native name has a TF-style docstring whose examples run (issue 10, item 8).

The native names are the rows of ``ft._core.op_table()`` (every binding row, internal ones
included) and the native classes of the TensorFlow-facing namespaces (``GradientTape``). Their
docstrings are generated from the binding rows: the op's doc comment in
``rust/ferrotape-autodiff/src/ops`` (summary, derivative, example), then the ``Args:`` and
``Returns:`` of the row kind (``signature_doc!`` in ``rust/ferrotape-py/src/registry.rs``) or of
the hand-written function. Each must have a summary line, an ``Args:`` section naming exactly the
parameters of its signature, in order, a ``Returns:`` section (functions), and at least one
``>>>`` example; the examples are run, so a wrong output fails here. Each example imports
``ferrotape as ft`` itself, as the Python-defined docstrings do: pytest's ``--doctest-modules``
runs the native classes' examples too (their module is ``ferrotape``), with no ``ft`` bound.
"""

import doctest
import importlib
import inspect
import io

import pytest

import ferrotape as ft

NAMESPACES = [
    "ferrotape",
    "ferrotape.math",
    "ferrotape.nn",
    "ferrotape.linalg",
    "ferrotape.random",
    "ferrotape.dtypes",
]


def _core_object(qualified):
    obj = ft._core
    for part in qualified.split("."):
        obj = getattr(obj, part)
    return obj


def _inventory():
    names = {}
    for qualified, *_ in ft._core.op_table():
        names[qualified] = _core_object(qualified)
    native = {id(o) for o in vars(ft._core).values()}
    for module_name in NAMESPACES:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", None) or dir(module):
            obj = getattr(module, attr, None)
            if attr.startswith("_") or id(obj) not in native:
                continue
            if (inspect.isclass(obj) or inspect.isbuiltin(obj)) and obj not in names.values():
                names[obj.__name__] = obj
    return sorted(names.items())


NATIVE = _inventory()
IDS = [name for name, _ in NATIVE]


def _section(doc, title):
    """The entries of a Google-style section: ``{name: description}`` in order, or None."""
    lines = doc.splitlines()
    if f"{title}:" not in lines:
        return None
    entries = {}
    for line in lines[lines.index(f"{title}:") + 1 :]:
        if not line.strip():
            break
        if line.startswith("    ") and not line.startswith("     "):
            name, _, text = line.strip().partition(":")
            entries[name] = text.strip()
    return entries


def _parameters(obj):
    return [p for p in inspect.signature(obj).parameters if p != "self"]


def test_the_inventory_covers_every_row_and_the_native_classes():
    # Guards the walk: an empty or partial inventory would make every check below vacuous.
    assert len(ft._core.op_table()) > 120
    assert {"exp", "reduce_sum", "nn.relu", "linalg.matmul", "random.normal"} <= set(IDS)
    assert {"Tensor", "Variable", "DType", "GradientTape"} <= set(IDS)


@pytest.mark.parametrize("name,obj", NATIVE, ids=IDS)
def test_has_a_summary_line(name, obj):
    doc = obj.__doc__ or ""
    assert doc.strip() and doc.splitlines()[0].strip(), f"{name}: no summary line"


@pytest.mark.parametrize("name,obj", NATIVE, ids=IDS)
def test_args_name_exactly_the_signature(name, obj):
    args = _section(obj.__doc__ or "", "Args")
    assert args is not None, f"{name}: no Args: section"
    assert list(args) == _parameters(obj), f"{name}: Args: does not match the signature"
    empty = [arg for arg, text in args.items() if not text]
    assert not empty, f"{name}: Args: without a description: {empty}"


@pytest.mark.parametrize("name,obj", [(n, o) for n, o in NATIVE if not inspect.isclass(o)])
def test_functions_have_a_returns_section(name, obj):
    returns = (obj.__doc__ or "").split("\nReturns:\n", 1)
    assert len(returns) == 2 and returns[1].strip(), f"{name}: no Returns: section"


@pytest.mark.parametrize("name,obj", NATIVE, ids=IDS)
def test_examples_run(name, obj):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(obj.__doc__ or "", {}, name, None, 0)
    assert test.examples, f"{name}: no >>> example"
    out = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False)
    try:
        result = runner.run(test, out=out.write)
    finally:
        ft.random.set_seed(None)  # an example may fix the global seed; later tests expect none
    assert result.failed == 0, out.getvalue()


def test_a_wrong_example_fails():
    # The runner above must report a wrong output, not just parse the examples.
    test = doctest.DocTestParser().get_doctest(
        ">>> int(ft.reduce_sum([1, 2]))\n4\n", {"ft": ft}, "wrong", None, 0
    )
    result = doctest.DocTestRunner(verbose=False).run(test, out=lambda _: None)
    assert result.failed == 1


def _members():
    for name, cls in NATIVE:
        if not inspect.isclass(cls):
            continue
        for attr, member in sorted(vars(cls).items()):
            if not attr.startswith("_"):
                yield f"{name}.{attr}", member


MEMBERS = list(_members())


def test_the_members_are_found():
    names = {name for name, _ in MEMBERS}
    expected = {"Tensor.shape", "Variable.assign", "DType.is_floating", "GradientTape.gradient"}
    assert expected <= names


@pytest.mark.parametrize("name,member", MEMBERS, ids=[n for n, _ in MEMBERS])
def test_members_have_a_summary(name, member):
    doc = member.__doc__ or ""
    assert doc.strip() and doc.splitlines()[0].strip(), f"{name}: no summary line"


METHODS = [
    (name, member)
    for name, member in MEMBERS
    if inspect.ismethoddescriptor(member) and callable(member) and _parameters(member)
]


@pytest.mark.parametrize("name,method", METHODS, ids=[n for n, _ in METHODS])
def test_methods_document_their_arguments(name, method):
    doc = method.__doc__ or ""
    args = _section(doc, "Args")
    assert args is not None, f"{name}: takes arguments but has no Args: section"
    assert list(args) == _parameters(method), f"{name}: Args: does not match the signature"
    assert "\nReturns:\n" in doc, f"{name}: no Returns: section"
