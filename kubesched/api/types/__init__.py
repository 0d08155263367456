"""The Kubernetes types kubesched reads and serves, declared once per group/version.

Each module (``core_v1_a``, ``apps_v1`` ...) declares its messages in the notation of
:mod:`.grammar`; :data:`TYPES` holds them all, keyed by ``(group, name)``. The API server's
protobuf tables, OpenAPI definitions, field validation and server-side apply list keys are
derived from these declarations.
"""

from __future__ import annotations

from types import ModuleType

from kubesched.api.types import (
    apps_v1, authentication_v1, authorization_v1, autoscaling_v1, batch_v1, coordination_v1, core_v1_a, core_v1_b,
    events_v1, meta_v1, policy_v1, rbac_v1, resource_v1, scheduling_v1, storage_v1,
)
from kubesched.api.types.grammar import Field, Message, element, parse_message

# group -> (apiVersion, the modules declaring its types)
GROUPS: dict[str, tuple[str, tuple[ModuleType, ...]]] = {
    "meta": ("meta.k8s.io/v1", (meta_v1,)),
    "core": ("v1", (core_v1_a, core_v1_b)),
    "apps": ("apps/v1", (apps_v1,)),
    "batch": ("batch/v1", (batch_v1,)),
    "policy": ("policy/v1", (policy_v1,)),
    "rbac": ("rbac.authorization.k8s.io/v1", (rbac_v1,)),
    "storage": ("storage.k8s.io/v1", (storage_v1,)),
    "resource": ("resource.k8s.io/v1", (resource_v1,)),
    "events": ("events.k8s.io/v1", (events_v1,)),
    "scheduling": ("scheduling.k8s.io/v1", (scheduling_v1,)),
    "coordination": ("coordination.k8s.io/v1", (coordination_v1,)),
    "autoscaling": ("autoscaling/v1", (autoscaling_v1,)),
    "authentication": ("authentication.k8s.io/v1", (authentication_v1,)),
    "authorization": ("authorization.k8s.io/v1", (authorization_v1,)),
}


def _load() -> dict[tuple[str, str], Message]:
    out: dict[tuple[str, str], Message] = {}
    for group, (_, modules) in GROUPS.items():
        for module in modules:
            protobuf_only: frozenset[str] = module.PROTOBUF_ONLY
            for name, spec in module.MESSAGES.items():
                out[(group, name)] = parse_message(group, name, spec, name in protobuf_only)
    return out


TYPES: dict[tuple[str, str], Message] = _load()


def ref(spec: str) -> tuple[str, str] | None:
    """The ``(group, name)`` a type refers to (``[atomic]@core:Toleration`` -> ("core", "Toleration"))."""
    elem = element(spec)
    if not elem.startswith("@"):
        return None
    group, name = elem[1:].split(":", 1)
    return group, name


__all__ = ["GROUPS", "TYPES", "Field", "Message", "ref"]
