"""``BackupAndRestore`` (Keras 3's ``keras.src.callbacks.backup_and_restore``)."""

import json
import os
import shutil

from .callback import Callback


class BackupAndRestore(Callback):
    """Backs up the training state so that an interrupted ``fit`` resumes where it stopped.

    At the end of each epoch (or every ``save_freq`` batches) the model's weights and its
    optimizer's state go to ``backup_dir/latest.weights.h5`` and the number of finished epochs
    to ``backup_dir/training_metadata.json``. When ``fit`` begins and a backup exists, the
    weights are loaded and training starts at the first unfinished epoch (as with
    ``initial_epoch``; a backup taken within an epoch restarts that epoch). When ``fit``
    ends normally the backup is deleted (unless ``delete_checkpoint=False``).

    Unlike Keras 3.15, where the resumed epoch stays on the model and silently applies to
    later ``fit`` calls, ferrotape applies it to the ``fit`` that restored it only.

    Args:
        backup_dir: The directory of the backup (created when first needed).
        save_freq: ``"epoch"``, or a number of batches between backups.
        double_checkpoint: Also keep the previous backup (``*.bkp``), used when the latest one
            cannot be read.
        delete_checkpoint: Delete the backup when training ends normally.

    >>> import tempfile, numpy as np, ferrotape as ft
    >>> model = ft.keras.Sequential([ft.keras.Input((2,)), ft.keras.layers.Dense(1)])
    >>> model.compile(optimizer="sgd", loss="mse")
    >>> backup = ft.keras.callbacks.BackupAndRestore(tempfile.mkdtemp())
    >>> x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    >>> len(model.fit(x, y, epochs=2, verbose=0, callbacks=[backup]).history["loss"])
    2
    """

    def __init__(
        self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True
    ):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and (
            isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1
        ):
            raise ValueError(
                "Invalid value for argument `save_freq`. Received: save_freq="
                f"{save_freq}. Expected either 'epoch' or an integer value."
            )
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = bool(double_checkpoint)
        self.delete_checkpoint = bool(delete_checkpoint)
        self._weights_path = os.path.join(self.backup_dir, "latest.weights.h5")
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._batches_since_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def on_train_begin(self, logs=None):
        try:
            self._load_model()
        except OSError:
            # The latest backup may be corrupt (cut off mid-write): fall back on the previous.
            previous = self._weights_path + ".bkp"
            if not os.path.exists(previous):
                raise
            shutil.copyfile(previous, self._weights_path)
            if os.path.exists(self._metadata_path + ".bkp"):
                shutil.copyfile(self._metadata_path + ".bkp", self._metadata_path)
            elif os.path.exists(self._metadata_path):
                os.remove(self._metadata_path)
            self._load_model()

    def _load_model(self):
        model = self.model
        if not model.built:
            raise ValueError(
                "To use the BackupAndRestore callback, you model must be built before you "
                f"call `fit()`. Model {model} is unbuilt. You can build it beforehand by "
                "calling it on a batch of data."
            )
        if os.path.exists(self._weights_path):
            optimizer = getattr(model, "optimizer", None)
            if optimizer is not None and not optimizer.built:
                optimizer.build(model.trainable_variables)  # so its state can be loaded
            model.load_weights(self._weights_path)
        if os.path.exists(self._metadata_path):
            with open(self._metadata_path, encoding="utf-8") as file:
                epoch = json.load(file)["epoch"]
            self._current_epoch = epoch
            # Read (and cleared) by fit after on_train_begin, as Keras's `_initial_epoch`.
            object.__setattr__(model, "_initial_epoch", epoch)

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save_model()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model()

    def _should_save_on_batch(self, batch):
        if self.save_freq == "epoch":
            return False
        # A batch number that does not grow means a new epoch began (batches count from 0).
        added = batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._batches_since_saving += added
        self._last_batch_seen = batch
        if self._batches_since_saving >= self.save_freq:
            self._batches_since_saving = 0
            return True
        return False

    def _save_model(self):
        os.makedirs(self.backup_dir, exist_ok=True)
        if self.double_checkpoint:
            for path in (self._weights_path, self._metadata_path):
                if os.path.exists(path):
                    shutil.copyfile(path, path + ".bkp")
        self.model.save_weights(self._weights_path, overwrite=True)
        with open(self._metadata_path, "w", encoding="utf-8") as file:
            json.dump({"epoch": self._current_epoch, "batch": self._last_batch_seen}, file)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)
