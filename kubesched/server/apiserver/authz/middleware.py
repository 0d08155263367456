"""The authorization layer of the API server (``--authorization-mode RBAC``), as ASGI
middleware behind authentication, and the two self reviews ``kubectl auth can-i`` sends.

Every request (the health checks too, as upstream: ``system:public-info-viewer`` grants
them) is turned into :class:`~.rbac.Attributes` and judged by the RBAC policy; a refusal
is upstream's 403 ``Status`` (``responsewriters.Forbidden``):
``pods is forbidden: User "x" cannot list resource "pods" in API group "" in the
namespace "default"``, or ``forbidden: User "x" cannot get path "/metrics"``. The request is
read from its one parse (:mod:`.requestinfo`), the one its handler serves. A pod's explain
document (``/debug/explain/<ns>/<pod>``) needs what reading the pod needs; the web UI's
routes, which answer from many objects, authorize themselves through the
:class:`~.access.Access` put in every request's scope.

``SelfSubjectAccessReview`` (``kubectl auth can-i VERB RESOURCE``) and
``SelfSubjectRulesReview`` (``auth can-i --list``) of ``authorization.k8s.io/v1`` are
answered here (creating them needs ``system:basic-user``'s rule, as upstream). With
``AlwaysAllow`` the reviews still answer (always allowed; the rules review lists
``*``), and nothing else is checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import ANONYMOUS_USER, USER_KEY, UserInfo
from kubesched.server.apiserver.authz.policy import PolicyCache
from kubesched.server.apiserver.authz.rbac import Attributes, Policy, Rule
from kubesched.server.apiserver.authz.access import ACCESS_KEY, Access, forbidden
from kubesched.server.apiserver.authz.requestinfo import RequestInfo, request_info
from kubesched.server.apiserver.decoding import decode_body
from kubesched.server.store import dumps

ALWAYS_ALLOW = "AlwaysAllow"
RBAC = "RBAC"
MODES = (ALWAYS_ALLOW, RBAC)
REVIEWS = "/apis/authorization.k8s.io/v1/"
ACCESS_REVIEW = REVIEWS + "selfsubjectaccessreviews"
RULES_REVIEW = REVIEWS + "selfsubjectrulesreviews"
_MAX_REVIEW = 64 * 1024
_ALLOW_ALL = Policy(cluster_roles={"all": (Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",)))},
                    cluster_role_bindings=[{"roleRef": {"kind": "ClusterRole", "name": "all"},
                                            "subjects": [{"kind": "Group", "name": "system:authenticated"},
                                                         {"kind": "Group", "name": "system:unauthenticated"}]}])


class Authorizer:
    """ASGI middleware: 403 unless the policy allows the request's :class:`RequestInfo`;
    an :class:`~.access.Access` for the routes that authorize themselves (``self_authorized``
    paths, the web UI's); the self reviews."""

    def __init__(self, app: ASGIApp, mode: str, cache: PolicyCache | None,
                 self_authorized: Callable[[str], bool] | None = None) -> None:
        self.app = app
        self.mode = mode
        self.cache = cache
        self.self_authorized = self_authorized

    async def _policy(self) -> Policy:
        if self.cache is None:
            return _ALLOW_ALL
        if self.cache.stale():
            return await run_in_threadpool(self.cache.policy)
        return self.cache.policy()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user: UserInfo = scope.get(USER_KEY) or ANONYMOUS_USER
        path, method = scope["path"], scope["method"]
        rbac = self.mode == RBAC and self.cache is not None
        scope[ACCESS_KEY] = Access(user, self.cache.policy if rbac and self.cache is not None else None)
        if rbac and not (self.self_authorized is not None and self.self_authorized(path)):
            attrs = route_attributes(request_info(scope), user)
            try:
                policy = await self._policy()
            except Exception:  # the store is closing (shutdown): refuse rather than fail with a 500
                await _respond(send, 503, E.ApiError(503, "ServiceUnavailable", "the server is shutting down").status())
                return
            allowed, reason = policy.authorize(attrs)
            if not allowed:
                err = forbidden(attrs, reason)
                await _respond(send, err.code, err.status())
                return
        if method == "POST" and path in (ACCESS_REVIEW, RULES_REVIEW):
            try:
                body = await _read_body(receive, _content_type(scope))
                policy = await self._policy() if self.mode == RBAC else _ALLOW_ALL
                review = (access_review if path == ACCESS_REVIEW else rules_review)(policy, user, body)
            except E.ApiError as exc:
                await _respond(send, exc.code, exc.status())
                return
            await _respond(send, 201, review)
            return
        await self.app(scope, receive, send)


def route_attributes(info: RequestInfo, user: UserInfo) -> Attributes:
    """What a request needs: its RequestInfo's attributes, except for a pod's explain
    document (``/debug/explain/<ns>/<name>``), which needs what reading the pod needs."""
    parts = info.path.split("/")
    if len(parts) == 5 and parts[1] == "debug" and parts[2] == "explain" and parts[3] and parts[4]:
        return Attributes(user.name, user.groups, "get", True, namespace=parts[3], resource="pods",
                          name=parts[4], path=info.path)
    return info.attributes(user.name, user.groups)


def _spec(body: Any, kind: str) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("kind") not in (None, kind):
        raise E.bad_request(f"the request body must be a {kind}")
    spec = body.get("spec")
    if not isinstance(spec, dict):
        raise E.invalid(kind, "authorization.k8s.io", "", [("FieldValueRequired", "spec", "Required value")])
    return spec


def _str(d: dict[str, Any], key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def access_review(policy: Policy, user: UserInfo, body: Any) -> dict[str, Any]:
    """A SelfSubjectAccessReview's answer: may this user do what ``spec`` describes?"""
    kind = "SelfSubjectAccessReview"
    spec = _spec(body, kind)
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(ra, dict) == isinstance(nra, dict):
        raise E.invalid(kind, "authorization.k8s.io", "", [(
            "FieldValueInvalid", "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified")])
    if isinstance(ra, dict):
        attrs = Attributes(user.name, user.groups, _str(ra, "verb"), True, namespace=_str(ra, "namespace"),
                           api_group=_str(ra, "group"), resource=_str(ra, "resource"),
                           subresource=_str(ra, "subresource"), name=_str(ra, "name"))
    else:
        assert isinstance(nra, dict)
        attrs = Attributes(user.name, user.groups, _str(nra, "verb"), False, path=_str(nra, "path"))
    allowed, reason = policy.authorize(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {"kind": kind, "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": None},
            "spec": spec, "status": status}


def rules_review(policy: Policy, user: UserInfo, body: Any) -> dict[str, Any]:
    """A SelfSubjectRulesReview's answer: every rule that applies in ``spec.namespace``."""
    kind = "SelfSubjectRulesReview"
    spec = _spec(body, kind)
    errors: list[str] = []
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for rule in policy.visit(user.name, user.groups, _str(spec, "namespace"), errors):
        if rule.resources:
            out: dict[str, Any] = {"verbs": list(rule.verbs), "apiGroups": list(rule.api_groups),
                                   "resources": list(rule.resources)}
            if rule.resource_names:
                out["resourceNames"] = list(rule.resource_names)
            resource_rules.append(out)
        if rule.non_resource_urls:
            non_resource_rules.append({"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)})
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                              "incomplete": bool(errors)}
    if errors:
        status["evaluationError"] = ", ".join(errors)
    return {"kind": kind, "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": None},
            "spec": spec, "status": status}


def _content_type(scope: Scope) -> str:
    for name, value in scope.get("headers") or ():
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return "application/json"


async def _read_body(receive: Receive, content_type: str) -> Any:
    """The review in the request: JSON, or protobuf (kubectl's typed client sends that)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_REVIEW:
            raise E.too_large(_MAX_REVIEW)
        chunks.append(chunk)
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    return decode_body(b"".join(chunks), content_type)  # the reader of every body: bounded, 400 if unreadable


async def _respond(send: Send, code: int, obj: Any) -> None:
    body = dumps(obj).encode()
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
