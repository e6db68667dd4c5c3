"""``TerminateOnNaN`` (Keras 3's ``keras.src.callbacks.terminate_on_nan``)."""

import math

from .callback import Callback, _scalar


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite.

    By default sets ``model.stop_training`` (the epoch ends and ``on_train_end`` runs);
    ``raise_error=True`` raises ``RuntimeError`` at once instead.
    """

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(_scalar(loss))
        if math.isnan(loss) or math.isinf(loss):
            if self.raise_error:
                raise RuntimeError(
                    f"NaN or Inf loss encountered at batch {batch}. "
                    f"Loss value: {loss}. Terminating training immediately."
                )
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True
