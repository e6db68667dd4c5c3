"""Every public name defined in Python has a TF-style docstring (issue 10, item 8).

The walk covers the public modules of ``ferrotape``; a name counts as Python-defined when
``inspect.getmodule`` places it under ``ferrotape`` but outside ``ferrotape._core`` (native
names, documented by their binding rows) and ``ferrotape.keras`` (its own suite).
"""

import importlib
import inspect

import pytest

MODULES = [
    "ferrotape",
    "ferrotape.math",
    "ferrotape.nn",
    "ferrotape.linalg",
    "ferrotape.image",
    "ferrotape.random",
    "ferrotape.data",
    "ferrotape.debugging",
    "ferrotape.config",
    "ferrotape.nest",
    "ferrotape.dtypes",
    "ferrotape.errors",
    "ferrotape.train",
    "ferrotape.experimental.dlpack",
    "ferrotape.summary",
    "ferrotape.summary.experimental",
]


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
            yield f"{module.__name__}.{name}", obj


def _origin(obj):
    module = inspect.getmodule(obj)
    return module.__name__ if module is not None else ""


def _is_native(obj):
    # PyO3 classes report a Python module (``DType.__module__ == "ferrotape"``) but have no
    # Python source; native functions are builtins.
    if inspect.isbuiltin(obj) or _origin(obj).startswith("ferrotape._core"):
        return True
    try:
        inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return True
    return False


def _is_python_defined(obj):
    origin = _origin(obj)
    return (
        origin.startswith("ferrotape")
        and not _is_native(obj)
        and not origin.startswith("ferrotape._core")
        and not origin.startswith("ferrotape.keras")
    )


def _inventory():
    seen = {}
    for module_name in MODULES:
        for qualname, obj in _public(importlib.import_module(module_name)):
            seen.setdefault(id(obj), (qualname, obj))
    return list(seen.values())


PYTHON_DEFINED = [(q, o) for q, o in _inventory() if _is_python_defined(o)]


def _takes_arguments(func):
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name not in ("self", "cls") for p in params)


def test_the_walk_finds_the_python_names():
    # Guards the walk itself: a broken filter would make every check below pass vacuously.
    names = {q for q, _ in PYTHON_DEFINED}
    assert "ferrotape.Module" in names
    assert "ferrotape.math.reduce_std" in names
    assert len(names) > 60


@pytest.mark.parametrize("qualname,obj", PYTHON_DEFINED, ids=[q for q, _ in PYTHON_DEFINED])
def test_has_a_summary_line(qualname, obj):
    doc = inspect.getdoc(obj) if inspect.isfunction(obj) else obj.__doc__
    assert doc and doc.strip(), f"{qualname} has no docstring"
    assert doc.strip().splitlines()[0].strip(), f"{qualname}: the docstring has no summary line"


@pytest.mark.parametrize(
    "qualname,obj",
    [(q, o) for q, o in PYTHON_DEFINED if inspect.isfunction(o)],
    ids=[q for q, o in PYTHON_DEFINED if inspect.isfunction(o)],
)
def test_functions_document_their_arguments(qualname, obj):
    if _takes_arguments(obj):
        assert "Args:" in (obj.__doc__ or ""), f"{qualname} takes arguments but has no Args:"


def test_native_docstring_count(capsys):
    # Informational: the native names are checked (Args, Returns, runnable examples) by
    # tests/test_native_docstrings.py.
    native = [(q, o) for q, o in _inventory() if _is_native(o)]
    documented = sum(1 for _, o in native if (o.__doc__ or "").strip())
    with capsys.disabled():
        print(f"\nnative names documented: {documented}/{len(native)}")
    assert native


def _methods():
    for qualname, cls in PYTHON_DEFINED:
        if not inspect.isclass(cls) or issubclass(cls, BaseException):
            continue
        for name, member in vars(cls).items():
            if name.startswith("_") and name != "__init__":
                continue
            func = member.fget if isinstance(member, property) else member
            func = getattr(func, "__func__", func)
            if inspect.isfunction(func):
                yield f"{qualname}.{name}", func, isinstance(member, property)


METHODS = list(_methods())


@pytest.mark.parametrize("qualname,func,is_property", METHODS, ids=[m[0] for m in METHODS])
def test_methods_have_a_summary_and_their_arguments(qualname, func, is_property):
    doc = inspect.getdoc(func)
    assert doc and doc.splitlines()[0].strip(), f"{qualname} has no summary line"
    if not is_property and _takes_arguments(func):
        assert "Args:" in doc, f"{qualname} takes arguments but has no Args:"
