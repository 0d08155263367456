"""Reading manifests for the offline commands as ``kubectl apply`` and ``serve`` read them.

``simulate``, ``explain``, ``compare``, ``capacity`` and ``replay`` all load through
:func:`load`, which adds to :func:`kubesched.api.decode.load_manifests`:

* strict field validation, with ``serve``'s own check (the API server's
  ``fieldValidation=Strict``, :mod:`kubesched.server.apiserver.typedefs.validate`): an
  unknown field (``resources: {request: ...}``) or a field named twice is an error naming
  the file, the object and the field path; ``--validate=warn`` logs it instead,
  ``ignore`` says nothing;
* workload objects admitted by ``serve``'s strategies (defaults, then validation, with
  the API server's ``is invalid`` message): a Deployment without a template, or whose
  selector does not match its template's labels, is refused as ``kubectl apply`` would be;
* the pods the workload controllers would create (:mod:`kubesched.sim.expand`);
* progress on stderr while large inputs are read (``--progress``, or a terminal);
* manifests without a single object (an empty directory, empty files) are an error.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.decode import Doc, Hooks, Manifest, load_manifests
from kubesched.api.defaults import describe
from kubesched.api.errors import DecodeError
from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.registry.registry import STRATEGIES
from kubesched.server.apiserver.strategies.base import Context
from kubesched.server.apiserver.strategies.validation import decode_cause
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.apiserver.typedefs.validate import unknown_fields
from kubesched.sim.expand import WORKLOAD_RESOURCES, Expander

log = logging.getLogger(__name__)

STRICT, WARN, IGNORE = "strict", "warn", "ignore"
VALIDATE_MODES = (STRICT, WARN, IGNORE)
Progress = Callable[[str, int, int], None]  # (what, done, total)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadOptions:
    validate: str = STRICT  # unknown and duplicate fields: strict | warn | ignore
    cronjobs_fire: bool = False  # each CronJob creates one Job (its next scheduled run)
    expand: bool = True  # workloads -> their pods
    progress: Progress | None = None  # bytes of the files read, then objects decoded


def field_problems(d: Doc) -> list[str]:
    """Unknown and duplicate fields of one object, as the API server's strict decoding names them."""
    raw = d.raw
    group, _, version = str(raw.get("apiVersion") or "").rpartition("/")
    problems = [f'unknown field "{p}"' for p in unknown_fields(raw, definition_for(group, version, str(raw["kind"])))]
    return problems + [f'duplicate field "{p}"' for p in d.duplicates]


def _checker(mode: str) -> Callable[[Doc], None] | None:
    if mode == IGNORE:
        return None

    def check(d: Doc) -> None:
        problems = field_problems(d)
        if not problems:
            return
        message = "strict decoding error: " + ", ".join(problems)
        if mode == STRICT:
            raise DecodeError(message, obj=_who(d), file=d.file)
        log.warning("%s: %s: %s", d.file, _who(d), message)
    return check


def _who(d: Doc) -> str:
    meta = d.raw.get("metadata")
    if isinstance(meta, dict) and (meta.get("name") or meta.get("generateName")):
        return describe(d.raw)
    return d.where


def admit(d: Doc) -> dict[str, Any]:
    """A workload object defaulted and validated by ``serve``'s strategy for its kind (a
    copy); a refusal is a :class:`DecodeError` with the API server's message."""
    raw = copy.deepcopy(d.raw)
    kind = str(raw["kind"])
    group = str(raw.get("apiVersion") or "").rpartition("/")[0]
    strategy = STRATEGIES[(group, WORKLOAD_RESOURCES[kind])]
    ctx = Context(now=0.0, priority_classes=dict)
    name = str((raw.get("metadata") or {}).get("name") or "")
    status = raw.get("status")  # a snapshot's status is kept (creating would drop it)
    try:
        strategy.prepare_create(raw, ctx)
        causes = strategy.validate(raw, ctx)
    except DecodeError as exc:
        causes = [decode_cause(exc, raw)]
    if causes:
        err = E.invalid(kind, group, name, causes)
        raise DecodeError(err.message, obj=describe(d.raw), file=d.file)
    if status is not None:
        raw["status"] = status
    return raw


def load(paths: list[str], opts: LoadOptions = LoadOptions(), objects: Sequence[Any] = ()) -> Manifest:
    """The manifests of ``paths`` (and the in-memory ``objects``), read strictly, their
    workloads turned into pods."""
    expander = Expander(admit=admit, cronjobs_fire=opts.cronjobs_fire) if opts.expand else None
    hooks = Hooks(check=_checker(opts.validate), duplicates=opts.validate != IGNORE,
                  expand=expander, progress=opts.progress)
    manifest = load_manifests(paths, hooks, objects)
    if not any((manifest.nodes, manifest.pods, manifest.workloads, manifest.storage, manifest.dra, manifest.others,
                manifest.pdbs, manifest.namespaces, manifest.priority_classes, manifest.pod_groups)):
        raise DecodeError("no objects in these manifests (empty files?)", file=", ".join(paths) or "<objects>")
    if expander is not None:
        manifest.after = expander.after
        manifest.owners = expander.owners
    return manifest
