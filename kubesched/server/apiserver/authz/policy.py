"""The cluster's RBAC policy as the authorizer sees it, and the bootstrap roles.

:class:`PolicyCache` keeps a :class:`~.rbac.Policy` built from the stored Roles,
ClusterRoles and bindings, and a store watcher on those four kinds: a request rebuilds
the snapshot only when one of them changed since (a binding created by ``kubectl apply``
applies to the next request), so the common request costs no store read.

:func:`ensure_bootstrap_policy` creates, when absent, the subset of upstream's bootstrap
policy (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``) a cluster needs to
be usable: ``cluster-admin`` bound to ``system:masters``, ``system:discovery``,
``system:basic-user`` (the self reviews), ``system:public-info-viewer`` and, unbound,
``system:auth-delegator`` (TokenReview and SubjectAccessReview, for servers that delegate
to this one). The
components ``serve`` runs inside (controllers, simulated nodes, the scheduler) use the
registry directly or the kubeconfig's client certificate, whose group is
``system:masters``: RBAC never refuses them.
"""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authz.rbac import GROUP, Policy

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.server.store.watch import Watcher

KINDS = ("clusterroles", "roles", "clusterrolebindings", "rolebindings")
_BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
_AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}


class PolicyCache:
    def __init__(self, registry: "Registry") -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self._policy: Policy | None = None
        self._watcher: "Watcher | None" = None
        self._storage = [registry.resource(f"{k}.{GROUP}").storage for k in KINDS]

    def stale(self) -> bool:
        w = self._watcher
        if self._policy is None or w is None or w.closed:
            return True
        events, _ = w.drain()
        if events:
            self._policy = None  # rebuilt by the next policy()
            return True
        return False

    def policy(self) -> Policy:
        """The current snapshot (blocking: reads the store when stale)."""
        with self._lock:
            if not self.stale() and self._policy is not None:
                return self._policy
            if self._watcher is None or self._watcher.closed:
                self._watcher = self.registry.store.watch(self._storage, self.registry.store.rv)
            lists = [self.registry.list(f"{k}.{GROUP}")["items"] for k in KINDS]
            self._policy = Policy.build(*lists)
            return self._policy

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()


def _object(kind: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind,
            "metadata": {"name": name, "labels": dict(_BOOTSTRAP_LABELS), "annotations": dict(_AUTOUPDATE)},
            **body}


def _role(name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return _object("ClusterRole", name, {"rules": rules})


def _binding(name: str, role: str, groups: list[str]) -> dict[str, Any]:
    return _object("ClusterRoleBinding", name, {
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]})


_PUBLIC_INFO = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
BOOTSTRAP_ROLES = (
    _role("cluster-admin", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                            {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
    _role("system:discovery", [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                                    "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                                "verbs": ["get"]}]),
    _role("system:basic-user", [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
         "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}]),
    _role("system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_INFO, "verbs": ["get"]}]),
    # unbound: what a server that delegates authentication and authorization to this one needs
    _role("system:auth-delegator", [
        {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}]),
)
BOOTSTRAP_BINDINGS = (
    _binding("cluster-admin", "cluster-admin", ["system:masters"]),
    _binding("system:discovery", "system:discovery", ["system:authenticated"]),
    _binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
    _binding("system:public-info-viewer", "system:public-info-viewer",
             ["system:authenticated", "system:unauthenticated"]),
)


def ensure_bootstrap_policy(registry: "Registry") -> int:
    """Create the bootstrap ClusterRoles and ClusterRoleBindings that are absent (a user's
    edits to existing ones are kept); returns how many were created."""
    created = 0
    for plural, objs in (("clusterroles", BOOTSTRAP_ROLES), ("clusterrolebindings", BOOTSTRAP_BINDINGS)):
        for obj in objs:
            try:
                registry.create(f"{plural}.{GROUP}", None, copy.deepcopy(obj))
                created += 1
            except E.ApiError as exc:
                if exc.code != 409:
                    raise
    return created
