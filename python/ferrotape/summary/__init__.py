"""``ft.summary``: TensorFlow's ``tf.summary``, writing TensorBoard event files.

>>> import ferrotape as tf
>>> writer = tf.summary.create_file_writer("logs")                    # doctest: +SKIP
>>> with writer.as_default(step=0):                                     # doctest: +SKIP
...     tf.summary.scalar("loss", 0.5)

A summary call writes to the default writer (``as_default`` / ``set_as_default``) at the given
step or the default one (``as_default(step=...)``, ``experimental.set_step``); without a
default writer, or inside ``record_if(False)``, it writes nothing and returns ``False``. Inside a
function ``ft.function`` traces, each call writes with the default writer, step and condition
that were set when the function was traced (as TensorFlow's traced summary ops do).
File writers need the ``tensorboard`` package (``pip install 'ferrotape[tensorboard]'``),
imported when the first one is created, so ``import ferrotape`` does not load it.
"""

from . import experimental
from .summaries import audio, histogram, image, scalar, text
from .writer import (
    SummaryWriter,
    create_file_writer,
    create_noop_writer,
    flush,
    record_if,
    should_record_summaries,
    write,
)

__all__ = [
    "SummaryWriter",
    "audio",
    "create_file_writer",
    "create_noop_writer",
    "experimental",
    "flush",
    "histogram",
    "image",
    "record_if",
    "scalar",
    "should_record_summaries",
    "text",
    "write",
]
