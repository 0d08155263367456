"""Reading Alibaba's ``cluster-trace-gpu-v2023`` ("openb") CSV files, strictly.

Node lists have the columns ``sn,cpu_milli,memory_mib,gpu,model``; pod lists
``name,cpu_milli,memory_mib,num_gpu,gpu_milli`` and optionally ``gpu_spec,qos,pod_phase,
creation_time,deletion_time,scheduled_time`` (the ``multigpu`` variants have only the first
five). A row that does not parse is a :class:`TraceError` naming the file, the line and
the column, never a traceback. The traces themselves are not shipped with kubesched: get
them from github.com/alibaba/clusterdata (``cluster-trace-gpu-v2023/csv``).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kubesched.api.errors import KubeschedError
from kubesched.contrib.gpushare.model import MILLI, GpuRequest, parse_models

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_OPTIONAL = ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
MAX_GPUS = 8
_MISSING = ("", "nan", "NaN")

T = TypeVar("T")


class TraceError(KubeschedError):
    """A trace file that cannot be read: ``FILE:LINE: column COL: what is wrong``."""


@dataclass(frozen=True, slots=True)
class TraceNode:
    name: str
    cpu: int  # milli-CPU
    memory: int  # MiB
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class TracePod:
    name: str
    cpu: int  # milli-CPU
    memory: int  # MiB
    gpu: GpuRequest
    qos: str = ""
    phase: str = ""
    creation_time: int | None = None
    deletion_time: int | None = None
    scheduled_time: int | None = None


class _Row:
    """One CSV row with the position needed for error messages."""

    def __init__(self, path: Path, line: int, row: dict[str, str]) -> None:
        self.path, self.line, self.row = path, line, row

    def fail(self, column: str, what: str) -> TraceError:
        return TraceError(f"{self.path}:{self.line}: column {column}: {what}")

    def text(self, column: str) -> str:
        val = self.row.get(column)
        return "" if val is None else val.strip()

    def integer(self, column: str, *, hi: int | None = None, optional: bool = False) -> int | None:
        raw = self.text(column)
        if raw in _MISSING:
            if optional:
                return None
            raise self.fail(column, "missing value")
        return self._parse(column, raw, hi)

    def required(self, column: str, *, hi: int | None = None) -> int:
        raw = self.text(column)
        if raw in _MISSING:
            raise self.fail(column, "missing value")
        return self._parse(column, raw, hi)

    def _parse(self, column: str, raw: str, hi: int | None) -> int:
        try:
            val = int(raw)
        except ValueError:
            try:
                f = float(raw)
            except ValueError:
                raise self.fail(column, f"{raw!r} is not an integer") from None
            if not f.is_integer():
                raise self.fail(column, f"{raw!r} is not an integer") from None
            val = int(f)
        if val < 0 or (hi is not None and val > hi):
            bound = f"between 0 and {hi}" if hi is not None else "at least 0"
            raise self.fail(column, f"{val} must be {bound}")
        return val


def _read(path: Path, required: Sequence[str], parse: Callable[[_Row], T]) -> list[tuple[int, T]]:
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{path}: {exc.strerror or exc}") from exc
    with f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise TraceError(f"{path}:1: missing column {missing[0]} (the header has: {', '.join(header) or 'nothing'})")
        out: list[tuple[int, T]] = []
        try:
            for row in reader:
                r = _Row(path, reader.line_num, row)
                if None in row:
                    raise r.fail(str(len(header) + 1), f"more fields than the {len(header)} columns of the header")
                out.append((r.line, parse(r)))
        except csv.Error as exc:
            raise TraceError(f"{path}:{reader.line_num}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise TraceError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return out


def _node(r: _Row) -> TraceNode:
    name = r.text("sn")
    if not name:
        raise r.fail("sn", "missing node name")
    gpus = r.required("gpu", hi=MAX_GPUS)
    model = r.text("model")
    model = "" if model in _MISSING else model
    if gpus and not model:
        raise r.fail("model", f"a node with {gpus} GPUs needs a GPU model")
    return TraceNode(name, r.required("cpu_milli"), r.required("memory_mib"), gpus, model)


def _pod(r: _Row) -> TracePod:
    name = r.text("name")
    if not name:
        raise r.fail("name", "missing pod name")
    count = r.required("num_gpu", hi=MAX_GPUS)
    milli = r.required("gpu_milli", hi=MILLI)
    spec = r.text("gpu_spec")
    models = parse_models("" if spec in _MISSING else spec)
    if count == 0:
        gpu = GpuRequest(models=models)
    elif milli == 0:
        raise r.fail("gpu_milli", f"a pod asking for {count} GPU(s) needs gpu_milli between 1 and {MILLI}")
    elif count > 1 and milli != MILLI:
        raise r.fail("gpu_milli", f"a pod asking for {count} GPUs takes whole GPUs ({MILLI}), not {milli}")
    else:
        gpu = GpuRequest(milli, count, models)
    qos, phase = r.text("qos"), r.text("pod_phase")
    return TracePod(name, r.required("cpu_milli"), r.required("memory_mib"), gpu,
                    qos="" if qos in _MISSING else qos, phase="" if phase in _MISSING else phase,
                    creation_time=r.integer("creation_time", optional=True),
                    deletion_time=r.integer("deletion_time", optional=True),
                    scheduled_time=r.integer("scheduled_time", optional=True))


def read_nodes(path: str | Path) -> list[TraceNode]:
    """The nodes of a node list; TraceError on the first bad row or a repeated name."""
    p = Path(path)
    rows = _read(p, NODE_COLUMNS, _node)
    _unique(p, [(line, n.name) for line, n in rows], "sn", "node")
    return [n for _, n in rows]


def read_pods(path: str | Path) -> list[TracePod]:
    """The pods of a pod list, in file order; TraceError on the first bad row or a repeated name."""
    p = Path(path)
    rows = _read(p, POD_COLUMNS, _pod)
    _unique(p, [(line, q.name) for line, q in rows], "name", "pod")
    return [q for _, q in rows]


def _unique(path: Path, names: list[tuple[int, str]], column: str, what: str) -> None:
    seen: dict[str, int] = {}
    for line, name in names:
        if name in seen:
            raise TraceError(f"{path}:{line}: column {column}: {what} {name!r} already on line {seen[name]}")
        seen[name] = line
