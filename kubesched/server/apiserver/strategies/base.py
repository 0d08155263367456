"""Per-kind behaviour of the registry: defaulting, validation, update rules, conversion.

Upstream each resource has a ``rest.RESTCreateStrategy`` / ``RESTUpdateStrategy``
(``pkg/registry/<group>/<resource>/strategy.go``). :class:`Strategy` is the same idea, as
plain methods on raw JSON objects:

* ``prepare_create(obj, ctx)``: defaulting and admission on create (may raise
  ``DecodeError`` with a field path: 422, or :class:`Admission`: 403);
* ``validate(obj, ctx)``: causes (reason, field, message) for a 422, on create and update;
* ``prepare_update(new, old, subresource)``: what an update may not change (the main
  resource keeps the old ``status``; the ``status`` subresource keeps everything else);
* ``validate_update(new, old, ctx)``: causes for immutable fields;
* ``to_storage`` / ``from_storage``: conversion when a REST resource shares storage with
  another version (events.k8s.io/v1 events).

Kinds without a strategy of their own get :class:`Strategy`: metadata only.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.policy import PriorityClass
from kubesched.server.apiserver.strategies.validation import Cause


class Admission(Exception):
    """An admission plugin refused the object (HTTP 403 Forbidden)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class Context:
    """What strategies may read: the time, and stored objects admission depends on."""

    now: float
    priority_classes: Callable[[], dict[str, PriorityClass]]

    def timestamp(self, offset: float = 0.0) -> str:
        return rfc3339(self.now + offset)


_LAST_SECOND: tuple[int, str] = (0, "1970-01-01T00:00:00Z")


def rfc3339(t: float) -> str:
    """``t`` as an RFC 3339 time to the second; the text of the last second is kept (a
    create asks twice, every write at least once: formatting it cost ~4 µs a time)."""
    global _LAST_SECOND
    second = int(t)
    last = _LAST_SECOND  # one read of the pair: safe with the registry's threads
    if last[0] == second:
        return last[1]
    text = dt.datetime.fromtimestamp(second, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    _LAST_SECOND = (second, text)
    return text


def parse_rfc3339(s: str) -> float | None:
    try:
        return dt.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None


def spec_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}



def with_new_status(out: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``out`` (a copy of the stored object) with ``new``'s status and resourceVersion: what
    a write to the status subresource keeps of its body."""
    if "status" in new:
        out["status"] = new["status"]
    else:
        out.pop("status", None)
    out["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion")
    return out

class Strategy:
    """Metadata-only behaviour; subclasses add their kind's rules."""

    name_rule = "subdomain"
    status_subresource = False
    tracks_generation = False  # metadata.generation: 1 on create, +1 per spec change

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        if self.status_subresource:
            obj.pop("status", None)

    def validate(self, obj: dict[str, Any], ctx: Context) -> list[Cause]:
        return []

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        """Return the object to store for an update of ``old`` with ``new``."""
        if subresource == "status":
            return with_new_status(copy.deepcopy(old), new)
        if self.status_subresource:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        return new

    def validate_update(self, new: dict[str, Any], old: dict[str, Any], ctx: Context) -> list[Cause]:
        return []

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def bumps_generation(self, new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
        """Whether ``metadata.generation`` increments: the desired state changed."""
        skip = ("metadata", "status", "apiVersion", "kind")
        return {k: v for k, v in new.items() if k not in skip} != \
            {k: v for k, v in old.items() if k not in skip}


class StatusStrategy(Strategy):
    status_subresource = True


class NamespaceStrategy(Strategy):
    name_rule = "label"
    status_subresource = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        meta = obj["metadata"]
        if isinstance(meta.get("name"), str):  # else validation answers 422 metadata.name
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        spec = obj.setdefault("spec", {})
        spec.setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}

    def prepare_update(self, new: dict[str, Any], old: dict[str, Any], subresource: str) -> dict[str, Any]:
        out = super().prepare_update(new, old, subresource)
        out["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = out["metadata"]["name"]
        return out


class ReplicationControllerStrategy(StatusStrategy):
    """core/v1 ``SetDefaults_ReplicationController``: without a selector, the template's
    labels are the selector (and the RC's labels, when it has none); one replica."""

    tracks_generation = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        template = spec.get("template")
        tmeta = template.get("metadata") if isinstance(template, dict) else None
        labels = tmeta.get("labels") if isinstance(tmeta, dict) else None
        if labels and isinstance(labels, dict):
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj["metadata"]
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
        spec.setdefault("replicas", 1)


class ServiceStrategy(Strategy):
    name_rule = "dns1035"
    status_subresource = True

    def prepare_create(self, obj: dict[str, Any], ctx: Context) -> None:
        super().prepare_create(obj, ctx)
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
        obj["status"] = {"loadBalancer": {}}


class EventStrategy(Strategy):
    """core/v1 events: any name that is a valid path segment."""

    name_rule = "path"


# events.k8s.io/v1 field <-> core/v1 field (pkg/apis/events/v1 conversion)
_EVENT_FIELDS = (("regarding", "involvedObject"), ("note", "message"),
                 ("reportingController", "reportingComponent"), ("deprecatedSource", "source"),
                 ("deprecatedFirstTimestamp", "firstTimestamp"),
                 ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"))


class EventV1Strategy(EventStrategy):
    """events.k8s.io/v1: stored as core/v1 events, converted both ways."""

    def to_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in obj.items()}
        for v1, core in _EVENT_FIELDS:
            out.pop(v1, None)
            if obj.get(v1) is not None:
                out[core] = obj[v1]
        out["apiVersion"], out["kind"] = "v1", "Event"
        return out

    def from_storage(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in obj.items()}
        for v1, core in _EVENT_FIELDS:
            out.pop(core, None)
            if obj.get(core) is not None:
                out[v1] = obj[core]
        out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
        return out
