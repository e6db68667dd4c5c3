"""``TensorBoard`` (Keras 3's ``keras.src.callbacks.tensorboard``), writing through
``ft.summary``."""

import importlib.util
import os
import time

import numpy as np

from ... import summary
from ...summary.writer import TENSORBOARD_MISSING
from .callback import Callback, _scalar


class TensorBoard(Callback):
    """Logs the training to TensorBoard event files, as Keras 3's callback does.

    Writes under ``log_dir/train`` and ``log_dir/validation`` (view them with
    ``tensorboard --logdir log_dir``):

    * every epoch, ``epoch_<name>`` for each log (``epoch_loss``, ``epoch_<metric>``) at step
      ``epoch``, the ``val_`` ones (without the prefix) under ``validation/``, and
      ``epoch_learning_rate`` under ``train/``;
    * with ``update_freq="batch"`` or an int ``n``, ``batch_<name>`` every ``n``-th training
      batch at the global batch count (from 1); custom ``ft.summary`` calls made during the
      batch (in a layer's ``call``, say) go to the same writer and step;
    * after each evaluation, ``evaluation_<name>_vs_iterations`` under ``validation/`` at step
      ``optimizer.iterations``;
    * with ``histogram_freq > 0``, every ``histogram_freq`` epochs, a histogram of each weight
      tagged ``<weight path>/histogram`` (``:`` replaced by ``_``), and with ``write_images``
      the weight drawn as an image (``<weight path>/image``).

    Needs the ``tensorboard`` package (``pip install 'ferrotape[tensorboard]'``).

    What ferrotape leaves out, accepting the arguments so that Keras code runs unchanged:
    ``write_graph`` writes the model's Keras config (the conceptual graph) only for models with
    ``to_json``, never an op graph (ferrotape runs eagerly and has none); ``profile_batch`` is
    checked as Keras checks it but nothing is profiled; ``embeddings_freq`` and
    ``embeddings_metadata`` write no projector data.

    Args:
        log_dir: The directory of the event files (``train/`` and ``validation/`` are made
            inside it). Use one per run, not shared with other callbacks.
        histogram_freq: Every how many epochs to write weight histograms; 0 for never.
        write_graph: Whether to write the model's config for TensorBoard's graph dashboard
            (see above).
        write_images: Whether to write the weights as images along with their histograms.
        write_steps_per_second: Whether to log training steps per second (``epoch_steps_per
            _second`` each epoch, ``batch_steps_per_second`` with batch-level logging).
        update_freq: ``"epoch"``, ``"batch"`` (every batch) or an int ``n`` (every ``n``-th
            batch): how often batch-level scalars and custom summaries are written.
        profile_batch: Keras's profiling range (a non-negative int, a pair, or ``"a,b"``);
            validated, then ignored.
        embeddings_freq: Keras's embedding-projector frequency; ignored.
        embeddings_metadata: Keras's embedding-projector metadata; ignored.

    Raises:
        ValueError: if ``profile_batch`` is not a non-negative int or an increasing pair.
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        if importlib.util.find_spec("tensorboard") is None:
            # Said now, in one line, rather than from the first write in the middle of `fit`.
            raise ImportError(f"TensorBoard callback: {TENSORBOARD_MISSING}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._start_batch, self._stop_batch = _profile_range(profile_batch)
        self._global_train_batch = 0
        self._global_test_batch = 0
        self._previous_epoch_iterations = 0.0
        self._epoch_start_time = 0.0
        self._batch_start_time = 0.0
        self._writers = {}
        self._prev_summary_state = []
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")

    def set_model(self, model):
        """Keeps ``model`` and starts new writers; writes the model's config if asked.

        Args:
            model: The model being trained or evaluated.
        """
        super().set_model(model)
        self._writers = {}
        if self.write_graph:
            self._write_keras_model_summary()

    @property
    def _train_writer(self):
        if "train" not in self._writers:
            self._writers["train"] = summary.create_file_writer(self._train_dir)
        return self._writers["train"]

    @property
    def _val_writer(self):
        if "val" not in self._writers:
            self._writers["val"] = summary.create_file_writer(self._val_dir)
        return self._writers["val"]

    def _write_keras_model_summary(self):
        """Writes the Keras config as JSON under tag ``keras`` (TensorBoard's conceptual graph)."""
        to_json = getattr(self.model, "to_json", None)
        if to_json is None or type(self.model).__name__ not in ("Functional", "Sequential"):
            return
        try:
            json_string = to_json()
        except Exception:  # noqa: BLE001 - as Keras: a model that cannot serialize is skipped
            return
        from tensorboard.compat.proto import summary_pb2

        metadata = summary_pb2.SummaryMetadata()
        metadata.plugin_data.plugin_name = "graph_keras_model"
        metadata.plugin_data.content = b"1"
        with self._train_writer.as_default():
            summary.write("keras", json_string.encode(), step=0, metadata=metadata)

    def _push_writer(self, writer, step):
        """Makes ``writer`` the default at ``step`` for batch-level and custom summaries."""
        if self.update_freq == "epoch":
            return

        def should_record():
            return step % self.update_freq == 0

        contexts = (writer.as_default(step), summary.record_if(should_record))
        self._prev_summary_state.append(contexts)
        contexts[0].__enter__()
        contexts[1].__enter__()

    def _pop_writer(self):
        if self.update_freq == "epoch" or not self._prev_summary_state:
            return
        contexts = self._prev_summary_state.pop()
        contexts[1].__exit__(None, None, None)
        contexts[0].__exit__(None, None, None)

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._previous_epoch_iterations = 0.0
        self._push_writer(self._train_writer, self._global_train_batch)

    def on_train_end(self, logs=None):
        self._pop_writer()
        self._close_writers()

    def on_test_begin(self, logs=None):
        self._push_writer(self._val_writer, self._global_test_batch)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "iterations"):
            step = int(_scalar(optimizer.iterations))
            with self._val_writer.as_default():
                for name, value in (logs or {}).items():
                    summary.scalar(f"evaluation_{name}_vs_iterations", _scalar(value), step=step)
        self._pop_writer()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._train_writer, self._global_train_batch)
        if self.write_steps_per_second:
            self._batch_start_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        # Without a pushed writer (update_freq="epoch") these write nothing, as in Keras.
        if self.write_steps_per_second:
            elapsed = max(time.time() - self._batch_start_time, 1e-9)
            summary.scalar("batch_steps_per_second", 1.0 / elapsed, step=self._global_train_batch)
        for name, value in (logs or {}).items():
            summary.scalar(f"batch_{name}", _scalar(value), step=self._global_train_batch)

    def on_test_batch_begin(self, batch, logs=None):
        self._global_test_batch += 1
        if self.update_freq != "epoch":
            self._pop_writer()
            self._push_writer(self._val_writer, self._global_test_batch)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._previous_epoch_iterations = float(_scalar(self.model.optimizer.iterations))
            self._epoch_start_time = time.time()

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _collect_learning_rate(self, logs):
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if hasattr(optimizer, "optimizers"):
            for inner in optimizer.optimizers:
                logs[f"learning_rate_{inner.name}"] = float(_scalar(inner.learning_rate))
        elif optimizer is not None and hasattr(optimizer, "learning_rate"):
            logs["learning_rate"] = float(_scalar(optimizer.learning_rate))
        return logs

    def _compute_steps_per_second(self):
        iterations = float(_scalar(self.model.optimizer.iterations))
        elapsed = max(time.time() - self._epoch_start_time, 1e-9)
        return (iterations - self._previous_epoch_iterations) / elapsed

    def _log_epoch_metrics(self, epoch, logs):
        """Writes the epoch's logs as ``epoch_<name>`` scalars at step ``epoch``."""
        if not logs:
            return
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k: v for k, v in logs.items() if k.startswith("val_")}
        train_logs = self._collect_learning_rate(train_logs)
        if self.write_steps_per_second:
            train_logs["steps_per_second"] = self._compute_steps_per_second()
        if train_logs:
            with self._train_writer.as_default():
                for name, value in train_logs.items():
                    summary.scalar(f"epoch_{name}", _scalar(value), step=epoch)
        if val_logs:
            with self._val_writer.as_default():
                for name, value in val_logs.items():
                    summary.scalar(f"epoch_{name[4:]}", _scalar(value), step=epoch)

    def _log_weights(self, epoch):
        """Writes a histogram (and with ``write_images`` an image) of every weight."""
        with self._train_writer.as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    weight_name = _weight_path(weight, self.model).replace(":", "_")
                    summary.histogram(f"{weight_name}/histogram", weight, step=epoch)
                    if self.write_images:
                        image = _weight_as_image(np.asarray(weight.numpy()))
                        if image is not None:
                            summary.image(f"{weight_name}/image", image, step=epoch)
            self._train_writer.flush()


def _weight_path(weight, model):
    """Keras 3's ``weight.path`` when the variable has one, else as Keras 3 would name it."""
    path = getattr(weight, "path", None)
    if path:
        return path
    name = weight.name.removesuffix(":0")
    # Keras 3 names a weight by the scopes it was built in: a Sequential or subclassed model
    # builds its layers inside its own scope, a Functional model's layers are built before it.
    if type(model).__name__ != "Functional":
        name = f"{model.name}/{name}"
    return name


def _weight_as_image(weight):
    """A weight laid out as Keras draws it: a bias as one row, a kernel wide side across,
    a convolution kernel as one image per output channel; ``None`` for other shapes."""
    image = np.squeeze(weight)
    if image.ndim == 1:
        image = image.reshape(1, image.shape[0], 1, 1)
    elif image.ndim == 2:
        if image.shape[0] > image.shape[1]:
            image = image.T
        image = image.reshape(1, image.shape[0], image.shape[1], 1)
    elif image.ndim == 3:
        # channels_last: [height, width, filters] -> one [height, width] image per filter.
        image = np.transpose(image, [2, 0, 1])[..., np.newaxis]
    if image.ndim == 4 and image.shape[-1] in (1, 3, 4):
        return image
    return None


def _profile_range(profile_batch):
    """Keras's validation of ``profile_batch``: ``(start, stop)`` batches, ``(0, 0)`` for off."""
    message = (
        "profile_batch must be a non-negative integer or 2-tuple of positive integers. A pair "
        f"of positive integers signifies a range of batches to profile. Found: {profile_batch}"
    )
    if isinstance(profile_batch, str):
        try:
            profile_batch = [int(part) for part in profile_batch.split(",")]
        except ValueError:
            raise ValueError(message) from None
        profile_batch = profile_batch[0] if len(profile_batch) == 1 else profile_batch
    if isinstance(profile_batch, (int, np.integer)) and not isinstance(profile_batch, bool):
        start = stop = int(profile_batch)
    elif isinstance(profile_batch, (tuple, list)) and len(profile_batch) == 2:
        start, stop = profile_batch
    else:
        raise ValueError(message)
    if start < 0 or stop < start:
        raise ValueError(message)
    return start, stop
