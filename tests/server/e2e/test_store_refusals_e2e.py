"""A real ``kubesched serve`` refuses a broken store in one line and a non-zero exit, at
once, instead of serving from it or starting an empty cluster over lost data; ``serve
--check-store`` runs SQLite's integrity check.

What a damaged file looks like to SQLite (its documentation, "file format" and "how to
corrupt"): a first page that does not start with "SQLite format 3\\0" is "file is not a
database"; a b-tree page overwritten with 0xff bytes, or a file cut short, is found by
``PRAGMA quick_check``/``integrity_check``, whose failures are reported in SQLite's words
(in every case here the generic "database disk image is malformed" or a line about the page).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serve_harness import API_ONLY, REPO, Server

pytestmark = pytest.mark.slow

PAGE = 4096  # SQLite's default page size, which the store keeps


def serve(data: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``kubesched serve`` expected to exit by itself (a refusal, or --check-store)."""
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(data),
                           "--port", "0", "--no-ui", *API_ONLY, *args],
                          cwd=REPO, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def used(tmp_path: Path) -> Path:
    """A data directory that held a cluster: objects were written, serve stopped cleanly."""
    server = Server(tmp_path / "data", "--no-ui", *API_ONLY).start()
    for i in range(200):
        code, _ = server.request("POST", "/api/v1/namespaces/default/configmaps",
                                 {"metadata": {"name": f"c{i}"}, "data": {"k": "v" * 2000}})
        assert code == 201
    assert server.stop() == 0
    return server.data_dir


def one_line_refusal(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode != 0, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert "listening on" not in out.stdout
    return lines[0]


def _remove_journals(data: Path) -> None:
    for suffix in ("-wal", "-shm"):
        (data / f"store.db{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("damage,what", [("delete", "missing"), ("empty", "empty (0 bytes)")])
def test_a_lost_store_does_not_start_an_empty_cluster(used: Path, damage: str, what: str) -> None:
    store = used / "store.db"
    if damage == "delete":
        store.unlink()
    else:
        os.truncate(store, 0)
    _remove_journals(used)
    line = one_line_refusal(serve(used))
    assert line == (f"kubesched: error: {store} is {what}, but {used} held a cluster: refusing to start an empty "
                    f"cluster over lost data; to start anew on purpose, remove {used} (or pass another --data-dir)")
    assert not store.exists() or store.stat().st_size == 0  # nothing was created over it


def _overwrite_page(store: Path, page: int) -> None:
    with open(store, "r+b") as fh:
        fh.seek(page * PAGE)
        fh.write(b"\xff" * PAGE)


@pytest.mark.parametrize("damage,words", [
    ("header", "file is not a database"),
    ("truncated", "database disk image is malformed"),
    ("page", ""),  # SQLite names the page, or says the image is malformed
], ids=["bad-header", "truncated", "corrupt-page"])
def test_a_damaged_store_is_refused_in_one_line(used: Path, damage: str, words: str) -> None:
    store = used / "store.db"
    size = store.stat().st_size
    assert size > 40 * PAGE
    if damage == "header":
        with open(store, "r+b") as fh:
            fh.write(b"not a SQLite file")
    elif damage == "truncated":
        os.truncate(store, size // 2)
    else:
        _overwrite_page(store, size // PAGE // 2)
    line = one_line_refusal(serve(used, timeout=30))
    assert line.startswith(f"kubesched: error: {store}: {words}"), line
    if damage == "page":
        assert "malformed" in line or "page" in line.lower(), line


def test_check_store(used: Path) -> None:
    store = used / "store.db"
    ok = serve(used, "--check-store")
    assert (ok.returncode, ok.stdout.strip(), ok.stderr) == (0, f"{store}: ok", "")
    _overwrite_page(store, store.stat().st_size // PAGE // 2)
    bad = serve(used, "--check-store")
    assert bad.returncode == 1 and bad.stdout == "", bad
    lines = bad.stderr.strip().splitlines()
    assert lines and all(line.startswith(f"{store}: ") for line in lines) and "Traceback" not in bad.stderr


def test_a_new_data_directory_still_starts_empty(tmp_path: Path) -> None:
    server = Server(tmp_path / "fresh", "--no-ui", *API_ONLY).start()
    try:
        assert server.request("GET", "/api/v1/namespaces/default/configmaps")[0] == 200
    finally:
        server.stop()
