"""The background warm-up of the numba kernels (dperm._warmup)."""

import os
import subprocess
import sys

import pytest

from dperm import _warmup


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DPERM_WARMUP", raising=False)
    return tmp_path


def test_cold_cache_starts_one_warmup_and_holds_the_lock(cache):
    started = []
    assert _warmup.maybe_start(spawn=started.append)
    assert started == [str(cache / "dperm-warmup.lock")] and os.path.exists(started[0])
    # a second import while the first warm-up runs starts nothing
    assert not _warmup.maybe_start(spawn=started.append)
    assert len(started) == 1


def test_marker_means_warm(cache):
    marker = _warmup.marker_path()
    assert os.path.dirname(marker) == str(cache)
    open(marker, "w").close()
    assert _warmup.is_warm()
    assert not _warmup.maybe_start(spawn=lambda lock: pytest.fail("spawned although warm"))


def test_environment_turns_it_off(cache, monkeypatch):
    monkeypatch.setenv("DPERM_WARMUP", "0")
    assert not _warmup.maybe_start(spawn=lambda lock: pytest.fail("spawned although disabled"))


def test_stale_lock_is_taken_over(cache):
    lock = cache / "dperm-warmup.lock"
    lock.touch()
    old = lock.stat().st_mtime - 2 * _warmup._STALE_LOCK_SECONDS
    os.utime(lock, (old, old))
    started = []
    assert _warmup.maybe_start(spawn=started.append)
    assert started == [str(lock)]


def test_a_failing_spawn_never_breaks_the_import_and_frees_the_lock(cache):
    def broken(lock):
        raise OSError("no processes left")

    assert not _warmup.maybe_start(spawn=broken)
    assert not (cache / "dperm-warmup.lock").exists()


def test_marker_changes_with_the_kernel_sources(cache, monkeypatch, tmp_path):
    before = _warmup.marker_path()
    source = tmp_path / "_kernels.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(_warmup, "_KERNEL_SOURCES", (str(source),))
    first = _warmup.marker_path()
    source.write_text("x = 22\n")
    assert _warmup.marker_path() != first != before


def test_warm_all_writes_the_marker(cache):
    # the kernels load from the repository's own cache or compile (slow only the first time)
    seconds = _warmup.warm_all()
    assert seconds > 0 and _warmup.is_warm()


def test_the_spawned_child_warms_and_removes_its_lock(cache, monkeypatch):
    """The real child process, with warm_all replaced by a stub so the test stays fast."""
    lock = cache / "dperm-warmup.lock"
    lock.touch()
    captured, run = {}, subprocess.run
    monkeypatch.setattr(subprocess, "Popen", lambda args, **kw: captured.update(args=args, env=kw["env"]))
    _warmup._spawn(str(lock))
    assert captured["env"]["DPERM_WARMUP"] == "0"
    code = captured["args"][2].replace("from dperm._warmup import warm_all", "warm_all = lambda: None")
    monkeypatch.undo()
    run([sys.executable, "-c", code], check=True, env=captured["env"])
    assert not lock.exists()
