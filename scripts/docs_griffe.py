"""The griffe extension of the docs build (mkdocs.yml): how the API reference reads ferrotape.

What it does once the ``ferrotape`` package is loaded:

- The compiled names get their full docstrings. griffe reads the compiled module
  ``ferrotape._core`` from its typed stubs (``python/ferrotape/_core/*.pyi``, written by
  ``scripts/gen_bindings.py``): they give every signature but only the first line of each
  docstring. The whole docstring (Args, Returns, the example) is written beside the Rust code
  and reaches Python as ``__doc__``, so the extension imports the built module and copies each
  ``__doc__`` over the stub's line. The compiled classes are built by ``__new__``, which griffe
  does not read as the constructor: the extension adds an ``__init__`` of the same parameters,
  so that the class signature shows them and the class docstring's Args are checked against
  them.
- Names bound by assignment (``stop_gradient = _core.stop_gradient``, Keras's ``mse =
  mean_squared_error``) are documented as the function or class they hold: griffe sees an
  undocumented attribute, so the extension makes it an alias of that object's definition,
  found by identity at run time. One made by a factory (Keras's loss classes wrapping their
  functions, the ``assert_positive`` family) has no definition to point to: it becomes a
  function or class with the signature and docstring it has at run time.
- Doctest examples render as code. The docstrings hold ``>>>`` examples in their text, as
  TensorFlow's do (they run as doctests); in Markdown a ``>`` line is a quote and ``[[1, 2]]``
  a link, so each doctest block is wrapped in a ``pycon`` code fence. A paragraph ending in
  reStructuredText's ``::`` (the indented block after it is code, in Markdown too) ends in
  ``:``, as docutils shows it.
"""

import importlib
import inspect
import re
import types

import griffe

# A doctest block: a `>>>` line and the lines after it up to a blank line (docutils' rule).
_DOCTEST = re.compile(r"^([ \t]*)>>>.*(?:\n(?![ \t]*$).*)*", re.MULTILINE)
# reStructuredText's literal-block marker at the end of a line: `rule::` reads `rule:`.
_LITERAL_MARKER = re.compile(r"(?<=\S)::$", re.MULTILINE)


class FerrotapeDocstrings(griffe.Extension):
    """Completes the compiled names' docstrings and fences the doctest examples."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        """Rewrites the docstrings of the loaded ``ferrotape`` package."""
        del kwargs
        if pkg.name != "ferrotape":
            return
        _copy_docstrings(pkg["_core"], importlib.import_module("ferrotape._core"), loader)
        runtime = importlib.import_module("ferrotape")
        definitions: dict[int, str] = {}
        _index_definitions(pkg, runtime, definitions)
        _alias_assignments(pkg, runtime, definitions, loader)
        _fence_doctests(pkg)


def _copy_docstrings(obj: griffe.Object, runtime: object, loader: griffe.GriffeLoader) -> None:
    """Gives ``obj``'s members (recursively) the docstrings of ``runtime``'s same-named members."""
    for name, member in obj.members.items():
        if member.is_alias:
            continue  # documented where it is defined
        value = inspect.getattr_static(runtime, name, None)
        if value is None:
            continue
        if member.is_module or member.is_class:
            _copy_docstrings(member, value, loader)
        if member.is_class:
            _constructor_from_new(member)
        doc = getattr(value, "__doc__", None)
        # Slots the binding does not document show `object`'s docstrings: only a docstring
        # longer than the stub's line is news.
        if not isinstance(doc, str) or (
            member.docstring is not None and len(doc.strip()) <= len(member.docstring.value)
        ):
            continue
        member.docstring = griffe.Docstring(
            doc,
            parent=member,
            parser=loader.docstring_parser,
            parser_options=loader.docstring_options,
        )


def _constructor_from_new(cls: griffe.Class) -> None:
    """Gives a stub class built by ``__new__`` an ``__init__`` with ``__new__``'s parameters."""
    new = cls.members.get("__new__")
    if new is None or "__init__" in cls.members or not isinstance(new, griffe.Function):
        return
    init = griffe.Function(
        "__init__",
        lineno=new.lineno,
        endlineno=new.endlineno,
        parameters=griffe.Parameters(griffe.Parameter("self"), *list(new.parameters)[1:]),
        returns="None",
    )
    cls.set_member("__init__", init)


def _runtime_member(parent: object, member: griffe.Object) -> object:
    """The run-time object of ``member``, a member of the run-time object ``parent``."""
    if member.is_module:
        try:
            # By import, not attribute: `ferrotape.einsum` the module is shadowed by
            # `ferrotape.einsum` the function; the compiled submodules are attributes only.
            return importlib.import_module(member.path)
        except ImportError:
            pass
    return inspect.getattr_static(parent, member.name, None)


def _index_definitions(module: griffe.Object, runtime: object, definitions: dict) -> None:
    """Maps the id of every function and class defined under ``module`` to its griffe path."""
    for member in module.members.values():
        if member.is_alias:
            continue
        value = _runtime_member(runtime, member)
        if member.is_module:
            _index_definitions(member, value, definitions)
        elif (member.is_function or member.is_class) and value is not None:
            definitions.setdefault(id(value), member.path)


def _alias_assignments(
    module: griffe.Module, runtime: object, definitions: dict, loader: griffe.GriffeLoader
) -> None:
    """Turns ``module``'s attributes that hold a function or class into aliases of it."""
    for name, member in list(module.members.items()):
        if member.is_alias:
            continue
        value = _runtime_member(runtime, member)
        if member.is_module:
            if isinstance(value, types.ModuleType):
                _alias_assignments(member, value, definitions, loader)
        elif member.is_attribute and member.docstring is None:
            target = definitions.get(id(value))
            if target is not None and target != member.path:
                module.set_member(name, griffe.Alias(name, target, parent=module))
            elif target is None and (inspect.isfunction(value) or inspect.isclass(value)):
                module.set_member(name, _from_runtime(name, value, member, loader))


def _from_runtime(
    name: str, value: object, member: griffe.Object, loader: griffe.GriffeLoader
) -> griffe.Object:
    """A griffe function or class for a run-time one that no source line defines."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        signature = inspect.Signature()
    parameters = [
        griffe.Parameter(
            p.name,
            kind=griffe.ParameterKind(p.kind.description),
            default=None if p.default is p.empty else repr(p.default),
        )
        for p in signature.parameters.values()
    ]
    place = {"lineno": member.lineno, "endlineno": member.endlineno}
    if inspect.isclass(value):
        obj = griffe.Class(name, **place)
        init = griffe.Function(
            "__init__", parameters=griffe.Parameters(griffe.Parameter("self"), *parameters), **place
        )
        obj.set_member("__init__", init)
    else:
        obj = griffe.Function(name, parameters=griffe.Parameters(*parameters), **place)
    if value.__doc__:
        obj.docstring = griffe.Docstring(
            value.__doc__,
            parent=obj,
            parser=loader.docstring_parser,
            parser_options=loader.docstring_options,
        )
    return obj


def _fence_doctests(obj: griffe.Object) -> None:
    """Wraps the doctest blocks of ``obj``'s docstring and its members' (recursively) in fences."""
    if obj.docstring is not None:
        value = _LITERAL_MARKER.sub(":", obj.docstring.value)
        obj.docstring.value = _DOCTEST.sub(_fenced, value) if ">>>" in value else value
    for member in obj.members.values():
        if not member.is_alias:
            _fence_doctests(member)


def _fenced(block: re.Match) -> str:
    indent = block.group(1)
    return f"\n{indent}```pycon\n{block.group(0)}\n{indent}```\n"
