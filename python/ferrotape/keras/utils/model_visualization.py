"""``model_to_dot`` and ``plot_model``: a model's graph for Graphviz (Keras 3's
``keras.src.utils.model_visualization``). As in Keras they need the optional ``pydot`` package
(and Graphviz's ``dot`` program to draw a file) and raise ``ImportError`` without them."""

import importlib
import os

from ..layers.layer_utils import _format_shape


def _pydot():
    try:
        return importlib.import_module("pydot")
    except ImportError:
        return None


def _label(step, show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable):
    """A record label: name (class), then the optional lines Keras shows."""
    kind = type(step).__name__
    parts = [f"{step.name} ({kind})" if show_layer_names else kind]
    activation = getattr(step, "activation", None)
    if show_layer_activations and activation is not None:
        parts.append(f"Activation: {getattr(activation, '__name__', str(activation))}")
    if show_dtype:
        parts.append(f"Output dtype: {getattr(step, 'dtype', None) or '?'}")
    if show_shapes:
        parts.append(f"Output shape: {_format_shape(getattr(step, '_output_shape', None))}")
    if show_trainable and getattr(step, "weights", None):
        parts.append(f"Trainable: {'Y' if step.trainable else 'N'}")
    return "{" + "|".join(p.replace("{", "\\{").replace("}", "\\}") for p in parts) + "}"


def _edges(model):
    """The (from, to) pairs of the model's steps: a Sequential's chain, or each functional
    node's input producers to its layer or operation."""
    steps = list(getattr(model, "_functional_layers", None) or model.layers)
    nodes = getattr(model, "_nodes", None)
    if nodes is None:
        return steps, list(zip(steps, steps[1:], strict=False))
    edges = []
    for node in nodes:
        for tensor in node.input_tensors():
            pair = (tensor._node.layer, node.layer)
            if pair not in edges:
                edges.append(pair)
    return steps, edges


def model_to_dot(
    model,
    show_shapes=False,
    show_dtype=False,
    show_layer_names=True,
    rankdir="TB",
    expand_nested=False,
    dpi=200,
    subgraph=False,
    show_layer_activations=False,
    show_trainable=False,
    splines="ortho",
    **kwargs,
):
    """The model's graph as a ``pydot.Dot``: one record node per layer or operation, an edge
    per tensor passed between them.

    Args:
        model: a built Keras model.
        show_shapes: add each step's output shape.
        show_dtype: add each step's dtype.
        show_layer_names: name each node ``name (Class)`` rather than by class alone.
        rankdir: Graphviz's direction, ``"TB"`` (top to bottom) or ``"LR"``.
        expand_nested: accepted for Keras's signature; nested models are drawn as one node.
        dpi: the image resolution.
        subgraph: return a ``pydot.Cluster`` (to nest in another graph) instead of a ``Dot``.
        show_layer_activations: add the activation of layers that have one.
        show_trainable: add whether layers with weights are trainable.
        splines: Graphviz's edge style.
        **kwargs: none are accepted (Keras's ``layer_range`` is gone).

    Returns:
        A ``pydot.Dot`` (or ``pydot.Cluster``).

    Raises:
        ImportError: without the ``pydot`` package.
        ValueError: for a model that is not built, or unknown keyword arguments.
    """
    del expand_nested
    if not model.built:
        raise ValueError(
            "This model has not yet been built. Build the model first by calling `build()` or "
            "by calling the model on a batch of data."
        )
    pydot = _pydot()
    if pydot is None:
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to work.")
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    if subgraph:
        dot = pydot.Cluster(style="dashed", graph_name=model.name)
        dot.set("label", model.name)
        dot.set("labeljust", "l")
    else:
        dot = pydot.Dot()
        for key, value in (
            ("rankdir", rankdir),
            ("concentrate", True),
            ("dpi", dpi),
            ("splines", splines),
        ):
            dot.set(key, value)
        dot.set_node_defaults(shape="record")
    steps, edges = _edges(model)
    options = (show_shapes, show_dtype, show_layer_names, show_layer_activations, show_trainable)
    for step in steps:
        dot.add_node(pydot.Node(str(id(step)), label=_label(step, *options)))
    for source, target in edges:
        dot.add_edge(pydot.Edge(str(id(source)), str(id(target))))
    return dot


def plot_model(
    model,
    to_file="model.png",
    show_shapes=False,
    show_dtype=False,
    show_layer_names=False,
    rankdir="TB",
    expand_nested=False,
    dpi=200,
    show_layer_activations=False,
    show_trainable=False,
    splines="ortho",
    **kwargs,
):
    """Draws the model's graph (``model_to_dot``) into an image file with Graphviz.

    Args:
        model: a built Keras model.
        to_file: the image's path; its extension picks the format (``.png``, ``.svg``, ...).
        show_shapes: as in ``model_to_dot``.
        show_dtype: as in ``model_to_dot``.
        show_layer_names: as in ``model_to_dot`` (off by default here, as in Keras).
        rankdir: as in ``model_to_dot``.
        expand_nested: as in ``model_to_dot``.
        dpi: as in ``model_to_dot``.
        show_layer_activations: as in ``model_to_dot``.
        show_trainable: as in ``model_to_dot``.
        splines: as in ``model_to_dot``.
        **kwargs: none are accepted.

    Returns:
        None (the image is in ``to_file``).

    Raises:
        ImportError: without ``pydot``, or without Graphviz's ``dot`` program.
    """
    if not model.built:
        raise ValueError(
            "This model has not yet been built. Build the model first by calling `build()` or "
            "by calling the model on a batch of data."
        )
    pydot = _pydot()
    if pydot is None:
        raise ImportError("You must install pydot (`pip install pydot`) for `plot_model` to work.")
    try:
        pydot.Dot.create(pydot.Dot())  # draws an empty graph: is Graphviz's `dot` there?
    except (OSError, getattr(pydot, "PydotException", OSError)) as error:
        raise ImportError(
            "You must install graphviz (see instructions at "
            "https://graphviz.gitlab.io/download/) for `plot_model` to work."
        ) from error
    dot = model_to_dot(
        model,
        show_shapes=show_shapes,
        show_dtype=show_dtype,
        show_layer_names=show_layer_names,
        rankdir=rankdir,
        expand_nested=expand_nested,
        dpi=dpi,
        show_layer_activations=show_layer_activations,
        show_trainable=show_trainable,
        splines=splines,
        **kwargs,
    )
    to_file = os.fspath(to_file)
    extension = os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
