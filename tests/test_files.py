"""Files written whole or not at all (faces.files)."""

import os

import pytest

from replicaplan.faces import files


def test_write_whole_replaces_the_file(tmp_path):
    target = tmp_path / "hpa.yaml"
    target.write_text("old")
    files.write_whole(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["hpa.yaml"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "hpa.yaml"
    target.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.write_whole(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["hpa.yaml"]


def test_a_staged_directory_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "report"
    with pytest.raises(RuntimeError):
        with files.staged_directory(target) as stage:
            (stage / "a.txt").write_text("a")
            raise RuntimeError("the figure failed")
    assert list(tmp_path.iterdir()) == []
    with files.staged_directory(target) as stage:
        (stage / "a.txt").write_text("a")
        (stage / "b.txt").write_text("b")
    assert sorted(p.name for p in target.iterdir()) == ["a.txt", "b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]
