"""The recording format, version 1: JSON lines, one object a line (gzip when the file name
ends in ``.gz``). Documented for users in docs/record-replay.md; this module is its one
definition in code.

Lines, in file order::

    {"format": "kubesched.recording", "version": 1, "source": URL, "started": RFC3339,
     "serverVersion": {...}}               header (serverVersion: the cluster's /version, if readable)
    {"op": "initial", "object": {...}}     the starting state, one object a line
    {"op": "synced", "t": T, "counts": {kind: n}}   every kind listed: the starting state is complete
    {"t": T, "op": "add", "object": {...}}              an object appeared (a pod: created, with its spec)
    {"t": T, "op": "update", "object": {...}}           an object changed in what the scheduler reads
    {"t": T, "op": "delete", "kind": K, "namespace": NS, "name": N, "uid": U}
    {"t": T, "op": "bind", "namespace": NS, "name": N, "uid": U, "node": NODE, "scheduler": NAME}
    {"t": T, "op": "finish", "namespace": NS, "name": N, "uid": U, "phase": "Succeeded"|"Failed"}
    {"t": T, "op": "end", "reason": "duration"|"interrupted"|"failed", "counts": {op: n}}

``T`` is seconds since ``started`` (milliseconds), when the recorder saw the change. Objects
are cleaned as ``kubesched snapshot`` cleans them (:func:`kubesched.sim.snapshot.clean`).
Readers accept any line order the recorder can produce: ``initial`` lines may follow early
events of kinds that finished listing first; every ``initial`` object is the state at time 0.
A reader refuses a ``version`` it does not know, and ignores unknown keys and unknown ``op``
values of its own version (added later without a version change only if old readers may
ignore them).
"""

from __future__ import annotations

import gzip
import io
from typing import IO

FORMAT = "kubesched.recording"
VERSION = 1
OPS = ("initial", "synced", "add", "update", "delete", "bind", "finish", "end")
SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


def is_recording_name(path: str) -> bool:
    return path.endswith(SUFFIXES)


def open_text(path: str, mode: str) -> IO[str]:
    """``path`` for text reading (``"r"``) or writing (``"w"``), through gzip if it ends in .gz."""
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(path, mode + "b", compresslevel=6), encoding="utf-8", newline="\n")
    return open(path, mode, encoding="utf-8", newline="\n")
