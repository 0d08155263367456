"""Reading a recording (:mod:`.format`): the header, the starting state and the events, each
line checked, every error naming the file, the line and the field.

A JSON-lines trace of ``kubesched replay`` is told from a recording by its first line (a
recording's is the header with ``"format": "kubesched.recording"``): :func:`is_recording`.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.errors import DecodeError
from kubesched.sim.recording.format import FORMAT, VERSION, open_text

_POD_KEYS = ("namespace", "name", "uid")


@dataclass(frozen=True, slots=True)
class Event:
    line: int
    t: float
    op: str  # add | update | delete | bind | finish
    kind: str
    namespace: str
    name: str
    uid: str
    object: dict[str, Any] | None = None  # add, update
    node: str = ""  # bind
    scheduler: str = ""  # bind
    phase: str = ""  # finish

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass
class Recording:
    path: str
    header: dict[str, Any]
    initial: list[dict[str, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    synced: bool = False
    end: dict[str, Any] | None = None  # None: the recorder did not finish (killed): events up to there

    @property
    def duration(self) -> float:
        if self.end is not None and isinstance(self.end.get("t"), (int, float)):
            return float(self.end["t"])
        return self.events[-1].t if self.events else 0.0


def _lines(path: str) -> Iterator[tuple[int, str]]:
    try:
        with open_text(path, "r") as fh:
            for n, text in enumerate(fh, 1):
                if text.strip():
                    yield n, text
    except gzip.BadGzipFile as exc:
        raise DecodeError(f"not a gzip file: {exc}", file=path) from None
    except OSError as exc:
        raise DecodeError(exc.strerror or str(exc), file=path) from None
    except (EOFError, zlib.error) as exc:  # a gzip stream cut short (the recorder was killed)
        raise DecodeError(f"the gzip stream is cut short: {exc}", file=path) from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: {exc.reason}", file=path) from None


def is_recording(path: str) -> bool:
    """The file's first line is a recording's header."""
    for _, text in _lines(path):
        try:
            first = json.loads(text)
        except json.JSONDecodeError:
            return False
        return isinstance(first, dict) and first.get("format") == FORMAT
    return False


def _error(path: str, line: int, fld: str, message: str) -> DecodeError:
    return DecodeError(message, field=fld, obj=f"line {line}", file=path)


def _object(path: str, n: int, row: dict[str, Any]) -> dict[str, Any]:
    obj = row.get("object")
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not isinstance(obj.get("metadata"), dict):
        raise _error(path, n, "object", "must be an object with kind and metadata")
    return obj


def _event(path: str, n: int, row: dict[str, Any], op: str) -> Event:
    t = row.get("t")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise _error(path, n, "t", f"must be a non-negative number of seconds, got {t!r}")
    if op in ("add", "update"):
        obj = _object(path, n, row)
        meta = obj["metadata"]
        return Event(n, float(t), op, obj["kind"], str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                     str(meta.get("uid") or ""), object=obj)
    for k in _POD_KEYS if op != "delete" else ("kind", "name"):
        if not isinstance(row.get(k), str) or (k != "namespace" and not row.get(k)):
            raise _error(path, n, k, "is required (a string)")
    kind = str(row.get("kind") or "Pod")
    ev = Event(n, float(t), op, kind, str(row.get("namespace") or ""), str(row["name"]), str(row.get("uid") or ""),
               node=str(row.get("node") or ""), scheduler=str(row.get("scheduler") or ""),
               phase=str(row.get("phase") or ""))
    if op == "bind" and not ev.node:
        raise _error(path, n, "node", "is required (a string)")
    return ev


def read_recording(path: str) -> Recording:
    rec: Recording | None = None
    for n, text in _lines(path):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _error(path, n, "", f"invalid JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(row, dict):
            raise _error(path, n, "", "must be a JSON object")
        if rec is None:
            if row.get("format") != FORMAT:
                raise _error(path, n, "format", f'the first line must be a recording header ("format": "{FORMAT}")')
            if row.get("version") != VERSION:
                raise _error(path, n, "version", f"recording version {row.get('version')!r}: this kubesched "
                                                 f"reads version {VERSION}")
            rec = Recording(path, row)
            continue
        op = row.get("op")
        if op == "initial":
            rec.initial.append(_object(path, n, row))
        elif op == "synced":
            rec.synced = True
        elif op == "end":
            rec.end = row
        elif op in ("add", "update", "delete", "bind", "finish"):
            rec.events.append(_event(path, n, row, str(op)))
        elif not isinstance(op, str):
            raise _error(path, n, "op", "is required (a string)")
    if rec is None:
        raise DecodeError("empty: not a recording", file=path)
    rec.events.sort(key=lambda e: (e.t, e.line))
    return rec
