"""``keras.callbacks.RemoteMonitor`` posts each epoch's logs to a local HTTP server, as a form
field or a JSON body, and warns (training goes on) when the server cannot be reached."""

import http.server
import json
import socket
import threading
import urllib.parse

import numpy as np
import pytest

import ferrotape as ft


class _Recorder(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):  # noqa: N802 - the handler's name is http.server's
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, dict(self.headers), body.decode("utf-8")))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Recorder.received = []
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Recorder.received
    httpd.shutdown()
    httpd.server_close()


def _fit(callback, epochs=2):
    model = ft.keras.Sequential([ft.keras.Input((3,)), ft.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.ones((8, 3), "float32")
    return model.fit(x, np.zeros((8, 1), "float32"), epochs=epochs, verbose=0, callbacks=[callback])


def test_posts_each_epoch_as_a_form_field(server):
    root, received = server
    history = _fit(ft.keras.callbacks.RemoteMonitor(root=root, path="/events/", field="payload"))
    assert [path for path, _, _ in received] == ["/events/", "/events/"]
    _, headers, body = received[1]
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    sent = json.loads(urllib.parse.parse_qs(body)["payload"][0])
    assert sent == {"epoch": 1, "loss": pytest.approx(history.history["loss"][1])}


def test_posts_json_with_custom_headers(server):
    root, received = server
    monitor = ft.keras.callbacks.RemoteMonitor(
        root=root, send_as_json=True, headers={"X-Run": "seven"}
    )
    monitor.on_epoch_end(4, {"loss": np.float32(0.25), "accuracy": ft.constant(0.5)})
    path, headers, body = received[0]
    assert path == "/publish/epoch/end/"
    assert headers["Content-Type"] == "application/json"
    assert headers["X-Run"] == "seven"
    assert json.loads(body) == {"epoch": 4, "loss": 0.25, "accuracy": 0.5}


def test_warns_when_the_server_is_unreachable():
    with socket.socket() as probe:  # a port that nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monitor = ft.keras.callbacks.RemoteMonitor(root=f"http://127.0.0.1:{port}")
    with pytest.warns(UserWarning, match="Could not reach RemoteMonitor root server"):
        monitor.on_epoch_end(0, {"loss": 1.0})
