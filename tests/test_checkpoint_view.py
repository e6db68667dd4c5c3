"""ft.train.TrackableView and ft.train.CheckpointView: children in the order a checkpoint
walks them, breadth-first node ids, match and diff against live objects. Runs without
TensorFlow (tests/test_checkpoint_view_tf.py compares node numbering with it)."""

import os

import pytest

import ferrotape as ft


def model():
    m = ft.Module()
    m.v = ft.Variable(1.0)
    m.sub = ft.Module()
    m.sub.w = ft.Variable([1.0, 2.0])
    m.lst = [ft.Variable(3.0)]
    m.note = "not trackable"
    return m


def test_trackable_view_children_and_descendants():
    m = model()
    root = ft.train.Checkpoint(model=m, step=ft.Variable(2))
    assert list(ft.train.TrackableView.children(root)) == ["model", "step"]
    assert ft.train.TrackableView.children(m) == {"v": m.v, "sub": m.sub, "lst": m.lst}
    assert ft.train.TrackableView.children(m.v) == {}
    view = ft.train.TrackableView(root)
    assert view.root is root
    order = view.descendants()
    assert order[:3] == [root, m, root.step]
    assert [id(o) for o in order[3:]] == [id(m.v), id(m.sub), id(m.lst), id(m.sub.w), id(m.lst[0])]


def test_checkpoint_view_numbers_nodes_breadth_first(tmp_path):
    m = model()
    path = ft.train.Checkpoint(model=m, step=ft.Variable(2)).save(os.path.join(tmp_path, "ck"))
    view = ft.train.CheckpointView(path)
    assert view.children(0) == {"model": 1, "step": 2, "save_counter": 3}
    assert view.children(1) == {"v": 4, "sub": 5, "lst": 6}
    assert view.children(5) == {"w": 7} and view.children(6) == {"0": 8}
    assert view.children(8) == {} and view.descendants() == list(range(9))
    # A missing directory is created, as TensorFlow does; a directory reads its newest file.
    nested = ft.train.Checkpoint(v=ft.Variable(1.0)).save(os.path.join(tmp_path, "a", "b", "c"))
    assert ft.train.CheckpointView(nested).children(0) == {"v": 1, "save_counter": 2}
    assert ft.train.CheckpointView(tmp_path).children(0) == view.children(0)


def test_checkpoint_view_match_and_diff(tmp_path):
    path = ft.train.Checkpoint(model=model(), step=ft.Variable(2)).save(os.path.join(tmp_path, "c"))
    view = ft.train.CheckpointView(path)
    other = ft.Module()
    other.v = ft.Variable(5.0)
    other.extra = ft.Variable(0.0)
    root = ft.train.Checkpoint(model=other)
    matched = view.match(root)
    assert {k: id(v) for k, v in matched.items()} == {0: id(root), 1: id(other), 4: id(other.v)}
    paired, only_saved, only_live = view.diff(root)
    assert paired is not matched and paired.keys() == matched.keys()
    assert only_saved == [2, 3, 5, 6, 7, 8]
    assert [id(t) for t in only_live] == [id(other.extra)]
    with pytest.raises(ValueError, match="Couldn't find"):
        ft.train.CheckpointView(_empty(tmp_path))


def _empty(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    return str(empty)
