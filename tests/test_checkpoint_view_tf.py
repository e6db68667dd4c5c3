"""ft.train.CheckpointView and TrackableView compared with TensorFlow 2.21 on the same object
structure saved by each library: node numbering, children, match. Skipped without TensorFlow
(``pip install tensorflow-cpu``)."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip


def build(lib):
    m = lib.Module()
    m.v = lib.Variable(1.0)
    m.sub = lib.Module()
    m.sub.w = lib.Variable([1.0, 2.0])
    m.lst = [lib.Variable(3.0), lib.Variable(4.0)]
    return lib.train.Checkpoint(model=m, step=lib.Variable(2))


def test_views_match(tmp_path):
    views, roots = [], []
    for lib in (tf, ft):
        root = build(lib)
        path = root.save(os.path.join(tmp_path, lib.__name__, "ck"))
        views.append(lib.train.CheckpointView(path))
        roots.append(root)
    want, got = views
    assert got.descendants() == want.descendants()
    for node in want.descendants():
        assert got.children(node) == want.children(node)
    fresh = [build(tf), build(ft)]
    assert sorted(got.match(fresh[1])) == sorted(want.match(fresh[0]))
    want_tv, got_tv = (lib.train.TrackableView(r) for lib, r in zip((tf, ft), roots, strict=True))
    assert list(got_tv.children(roots[1].model)) == list(want_tv.children(roots[0].model))
    assert len(got_tv.descendants()) == len(want_tv.descendants())
