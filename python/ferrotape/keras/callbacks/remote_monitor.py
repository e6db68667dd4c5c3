"""``RemoteMonitor`` (Keras 3's ``keras.src.callbacks.remote_monitor``)."""

import json
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy as np

from .callback import Callback, _scalar


class RemoteMonitor(Callback):
    """Posts each epoch's logs to a server, as Keras 3's ``RemoteMonitor``.

    At every epoch's end an HTTP POST goes to ``root + path`` with the epoch number and the
    logs: as a form whose ``field`` holds them JSON-encoded, or, with ``send_as_json=True``,
    as a JSON body (``Content-Type: application/json``). Keras sends it with ``requests``;
    this one uses the standard library's ``urllib``, so it needs no extra package. A server
    that cannot be reached gives a warning, not an error: training goes on.

    Args:
        root: the server's root URL.
        path: the path, relative to ``root``, that the events are posted to.
        field: the form field that holds the JSON (only when ``send_as_json=False``).
        headers: optional dict of extra HTTP headers.
        send_as_json: whether to post the logs as a JSON body rather than a form.

    >>> import ferrotape as ft
    >>> ft.keras.callbacks.RemoteMonitor(root="http://localhost:9000").path
    '/publish/epoch/end/'
    """

    def __init__(
        self,
        root="http://localhost:9000",
        path="/publish/epoch/end/",
        field="data",
        headers=None,
        send_as_json=False,
    ):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        """Posts ``{"epoch": epoch, **logs}`` to ``root + path``."""
        send = {"epoch": epoch}
        for key, value in (logs or {}).items():
            value = _scalar(value)
            send[key] = value.item() if isinstance(value, (np.ndarray, np.generic)) else value
        if self.send_as_json:
            body = json.dumps(send).encode("utf-8")
            content_type = "application/json"
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode("utf-8")
            content_type = "application/x-www-form-urlencoded"
        headers = {"Content-Type": content_type, **(self.headers or {})}
        request = urllib.request.Request(
            self.root + self.path, data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError:
            pass  # the server answered: requests, which Keras uses, does not raise on a status
        except (urllib.error.URLError, OSError, ValueError):
            # Keras warns and trains on when the server is down (requests' RequestException).
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)
