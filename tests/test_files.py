"""Files written whole or not at all (interface.files)."""

import os
import stat
from pathlib import Path

import pytest

from replicaplan.interface import files


def test_a_staged_file_replaces_the_old_one(tmp_path):
    target = tmp_path / "hpa.yaml"
    target.write_text("old")
    with files.Staging() as out:
        out.file(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["hpa.yaml"]  # no temporary left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "hpa.yaml"
    target.write_text("old")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        with files.Staging() as out:
            out.file(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["hpa.yaml"]


def test_staged_outputs_appear_together_or_not_at_all(tmp_path):
    """Files and a folder staged together: an error before the end leaves no trace; a clean
    end puts every one in place (an empty target folder is replaced)."""
    (tmp_path / "hpa.yaml").write_text("old")
    with pytest.raises(RuntimeError):
        with files.Staging() as out:
            out.file(tmp_path / "hpa.yaml", "new")
            folder = out.directory(tmp_path / "report")
            (folder / "a.txt").write_text("a")
            raise RuntimeError("the figure failed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpa.yaml"]
    assert (tmp_path / "hpa.yaml").read_text() == "old"
    (tmp_path / "report").mkdir()
    with files.Staging() as out:
        out.file(tmp_path / "hpa.yaml", "new")
        folder = out.directory(tmp_path / "report")
        (folder / "a.txt").write_text("a")
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
            "hpa.yaml",
            "report",
        ]
        assert (tmp_path / "hpa.yaml").read_text() == "old"  # nothing moved before the end
    assert (tmp_path / "hpa.yaml").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpa.yaml", "report"]
    assert [p.name for p in (tmp_path / "report").iterdir()] == ["a.txt"]


@pytest.mark.parametrize(
    "mask, file_mode, dir_mode", [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)]
)
def test_modes_follow_the_umask(tmp_path, mask, file_mode, dir_mode):
    """What `touch` and `mkdir` would give under the umask, not tempfile's 600 and 700."""
    old = os.umask(mask)
    try:
        with files.Staging() as out:
            out.file(tmp_path / "hpa.yaml", "x")
            (out.directory(tmp_path / "report") / "report.md").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "hpa.yaml").stat().st_mode) == file_mode
    assert stat.S_IMODE((tmp_path / "report").stat().st_mode) == dir_mode
    assert stat.S_IMODE((tmp_path / "report/report.md").stat().st_mode) == file_mode


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only /sys (Linux)")
def test_a_folder_that_takes_no_file_is_refused_by_name():
    """/sys refuses new files even to root, so this runs where a chmod-ed folder would not."""
    with pytest.raises(ValueError, match="--keda: cannot write in /sys \\(Permission denied\\)"):
        files.check_writable("/sys/keda.yaml", "--keda")
    with pytest.raises(ValueError, match="--manifest: no such directory: /nowhere"):
        files.check_writable("/nowhere/hpa.yaml", "--manifest")


def test_a_folder_given_for_a_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--adapter: .* is a directory; give a file name"):
        files.check_writable(tmp_path, "--adapter")


def test_a_second_run_into_a_locked_folder_is_refused_and_changes_nothing(tmp_path, capsys):
    """Two runs writing into one folder: while the first holds it, the second is refused at
    once by its option's name, and the first's files are left as they were."""
    import fcntl
    import hashlib
    import os

    from replicaplan.interface.cli import main

    log = (
        Path(__file__).resolve().parents[1]
        / "data"
        / "azure-llm-inference-2023"
        / "conv_sample.csv"
    )
    kept = tmp_path / "hpa.yaml"
    kept.write_text("the first run's manifest\n")
    before = hashlib.sha256(kept.read_bytes()).hexdigest()
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the first run, still writing
    try:
        code = main(["plan", "--log", str(log), "--manifest", str(kept)])
    finally:
        os.close(fd)
    assert code == 2
    err = capsys.readouterr().err
    assert f"--manifest: another replicaplan run is writing in {tmp_path}" in err
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hpa.yaml"]


def test_the_locks_are_released_when_the_run_ends(tmp_path):
    from replicaplan.interface.files import FolderLocks

    outputs = {"--manifest": tmp_path / "a.yaml", "--keda": tmp_path / "b.yaml"}
    with FolderLocks(outputs):
        with pytest.raises(ValueError, match="--manifest: another replicaplan run"):
            with FolderLocks(outputs):
                pass
    with FolderLocks(outputs):  # free again
        pass


@pytest.fixture
def stop_on_sigusr1():
    """SIGUSR1 handled as the command handles a stop (``stops.stop``), in a fresh command."""
    import signal

    from replicaplan.core import stops

    stops.begin()
    previous = signal.signal(signal.SIGUSR1, lambda *_: stops.stop(KeyboardInterrupt))
    yield signal.SIGUSR1
    signal.signal(signal.SIGUSR1, previous)
    stops.end()


def test_a_stop_during_the_renames_waits_and_is_dropped_once_all_are_in_place(
    tmp_path, monkeypatch, stop_on_sigusr1
):
    """A stop that comes between the first rename and the second neither cuts the renames
    (every target new) nor is raised afterwards, where "nothing written" would be a lie; a
    stop before the renames still stops the run with every target as it was."""
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text("old")
    real, renames = os.replace, []

    def signalled_after_the_first(src, dst):
        real(src, dst)
        renames.append(dst)
        if len(renames) == 1:
            os.kill(os.getpid(), stop_on_sigusr1)
            sum(range(1000))  # bytecodes, where the handler runs and holds the stop

    monkeypatch.setattr(os, "replace", signalled_after_the_first)
    with files.Staging() as out:
        out.file(tmp_path / "a.yaml", "new")
        out.file(tmp_path / "b.yaml", "new")
    assert len(renames) == 2
    assert [(tmp_path / n).read_text() for n in ("a.yaml", "b.yaml")] == ["new", "new"]
    monkeypatch.setattr(os, "replace", real)

    from replicaplan.core import stops

    stops.end()
    stops.begin()  # the next command: a stop before its renames stops it
    with pytest.raises(KeyboardInterrupt):
        with files.Staging() as out:
            out.file(tmp_path / "a.yaml", "newer")
            os.kill(os.getpid(), stop_on_sigusr1)
            sum(range(1000))
    assert (tmp_path / "a.yaml").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]
