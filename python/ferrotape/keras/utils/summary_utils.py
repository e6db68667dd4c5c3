"""The table ``Model.summary`` prints (Keras 3's ``keras.src.utils.summary_utils``)."""

import math
import re
import shutil
import textwrap

from ..layers.layer_utils import _format_shape


def _memory(variables):
    return sum(math.prod(v.shape) * v.dtype.size for v in variables)


def _readable_size(size):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _layer_rows(layer, prefix, expand_nested, show_trainable):
    if not layer.built:
        params = "0 (unbuilt)"
    else:
        params = f"{layer.count_params():,}"
    row = [f"{prefix}{layer.name} ({type(layer).__name__})", _format_shape(layer._output_shape)]
    row.append(params)
    if show_trainable:
        row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
    rows = [row]
    from ..models.model import Model  # as in Keras 3: the models use this module

    if expand_nested and isinstance(layer, Model):
        indent = "   " * (prefix.count("└") + 1) + "└ "
        for sub in layer.layers:
            rows.extend(_layer_rows(sub, indent, expand_nested, show_trainable))
    return rows


def _layer_index_range(layers, layer_range):
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(s, str) for s in layer_range):
        raise ValueError(
            f"summary: layer_range must be a list or tuple of 2 strings, received {layer_range}"
        )
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(
            f"summary: the layer_range names do not match the model's layers: {layer_range}"
        )
    return min(lower), max(upper) + 1


def _table(header, rows, widths, alignment):
    """A table drawn with box characters, as Keras 3's (rich) summary."""

    def cell_lines(text, width):
        return textwrap.wrap(text, width, break_long_words=True, replace_whitespace=False) or [""]

    def line(cells, sep):
        wrapped = [cell_lines(c, w) for c, w in zip(cells, widths, strict=True)]
        height = max(len(lines) for lines in wrapped)
        out = []
        for i in range(height):
            parts = []
            for lines, width, align in zip(wrapped, widths, alignment, strict=True):
                text = lines[i] if i < len(lines) else ""
                parts.append(" " + (text.rjust(width) if align == "right" else text.ljust(width)))
            out.append(sep + (" " + sep).join(parts) + " " + sep)
        return out

    def rule(left, mid, right, fill):
        return left + mid.join(fill * (w + 2) for w in widths) + right

    lines = [rule("┏", "┳", "┓", "━"), *line(header, "┃"), rule("┡", "╇", "┩", "━")]
    for i, row in enumerate(rows):
        if i:
            lines.append(rule("├", "┼", "┤", "─"))
        lines.extend(line(row, "│"))
    lines.append(rule("└", "┴", "┘", "─"))
    return lines


def _summary_text(model, line_length, positions, expand_nested, show_trainable, layer_range):
    header = ["Layer (type)", "Output Shape", "Param #"]
    alignment = ["left", "left", "right"]
    default_length = 88
    positions = list(positions or [0.45, 0.80, 1.0])
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        alignment.append("left")
    line_length = line_length or min(default_length, shutil.get_terminal_size().columns - 4)
    if positions[-1] <= 1:
        positions = [int(p * line_length) for p in positions]
    edges = [0, *positions]
    widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    if any(w < 4 for w in widths):
        raise ValueError("Insufficient console width to print summary.")
    # Borders and padding take 3 characters per column plus one: the contents get the rest.
    contents = [w - 3 for w in widths]
    contents[0] -= 1
    # A header never wraps: narrow columns borrow from the widest one.
    for i, title in enumerate(header):
        deficit = len(title) - contents[i]
        widest = max(range(len(contents)), key=contents.__getitem__)
        if deficit > 0 and contents[widest] - deficit >= len(header[widest]):
            contents[i] += deficit
            contents[widest] -= deficit
    if any(w < 1 for w in contents):
        raise ValueError("Insufficient console width to print summary.")

    # A functional model lists its operations (x * 2.0, keras.ops calls) too, as Keras 3.
    layers = list(getattr(model, "_functional_layers", None) or model.layers)
    start, stop = _layer_index_range(layers, layer_range)
    rows = []
    for layer in layers[start:stop]:
        rows.extend(_layer_rows(layer, "", expand_nested, show_trainable))

    trainable = model.trainable_weights
    non_trainable = model.non_trainable_weights
    trainable_count = sum(math.prod(v.shape) for v in trainable)
    non_trainable_count = sum(math.prod(v.shape) for v in non_trainable)
    optimizer_variables = []
    optimizer = getattr(model, "optimizer", None)
    if getattr(model, "compiled", False) and optimizer is not None:
        if getattr(optimizer, "built", False):
            optimizer_variables = list(getattr(optimizer, "variables", []))
    optimizer_count = sum(math.prod(v.shape) for v in optimizer_variables)
    total = trainable_count + non_trainable_count + optimizer_count
    total_memory = _memory(trainable) + _memory(non_trainable) + _memory(optimizer_variables)

    lines = [f'Model: "{model.name}"', *_table(header, rows, contents, alignment)]
    lines.append(f" Total params: {total:,} ({_readable_size(total_memory)})")
    lines.append(f" Trainable params: {trainable_count:,} ({_readable_size(_memory(trainable))})")
    lines.append(
        f" Non-trainable params: {non_trainable_count:,} ({_readable_size(_memory(non_trainable))})"
    )
    if optimizer_variables:
        lines.append(
            f" Optimizer params: {optimizer_count:,} "
            f"({_readable_size(_memory(optimizer_variables))})"
        )
    return "\n".join(lines)
