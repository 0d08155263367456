"""``TokenReview`` (``authentication.k8s.io/v1``) and ``SubjectAccessReview``
(``authorization.k8s.io/v1``): the API server answering, for another server, who a bearer
token is and whether a user may do something. This is what components that delegate
authentication and authorization to the API server call (kube-scheduler's secure port,
``kubesched run``'s endpoints, aggregated API servers); upstream grants both through the
``system:auth-delegator`` ClusterRole.

* **TokenReview** (``pkg/registry/authentication/tokenreview/storage.go``): ``spec.token``
  is authenticated as a request's bearer token would be, for ``spec.audiences`` (none: the
  API server's); ``status`` says ``authenticated``, the ``user`` and the ``audiences`` it
  is good for, or the ``error``. A missing token is a 400.
* **SubjectAccessReview** (``pkg/registry/authorization/subjectaccessreview/rest.go``,
  ``pkg/apis/authorization/validation``): exactly one of ``resourceAttributes`` and
  ``nonResourceAttributes``, and a ``user`` or ``groups`` (else a 422); ``status.allowed``
  and the ``reason`` are the server's authorizer's (RBAC, or AlwaysAllow).

Both sit behind the authorization layer: creating them is itself authorized.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import UserInfo
from kubesched.server.apiserver.authn.serviceaccount import TokenResult, static_token
from kubesched.server.apiserver.authz.middleware import _ALLOW_ALL, _content_type, _read_body, _respond
from kubesched.server.apiserver.authz.policy import PolicyCache
from kubesched.server.apiserver.authz.rbac import Attributes, Policy

TOKEN_REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEW = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
_INVALID_TOKEN = "invalid bearer token"


class TokenAuthenticator:
    """A bearer token's verdict for some audiences: the token file's users first (as the
    middleware tries them), then the ServiceAccount tokens (``sa``)."""

    def __init__(self, static: Mapping[str, UserInfo], api_audiences: tuple[str, ...],
                 sa: Callable[[str, tuple[str, ...]], TokenResult]) -> None:
        self.static = tuple((t.encode(), u) for t, u in static.items())
        self.api_audiences = api_audiences
        self.sa = sa

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenResult:
        raw = token.encode("utf-8", "replace")
        found = None
        for t, user in self.static:  # compare with every token: no timing hint
            if hmac.compare_digest(raw, t):
                found = user
        if found is not None:
            return static_token(found, self.api_audiences, audiences)
        if token.count(".") == 2:
            return self.sa(token, audiences)
        return TokenResult()


def token_review(auth: TokenAuthenticator, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("kind") not in (None, "", "TokenReview"):
        raise E.bad_request("not a TokenReview")
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise E.bad_request("token is required for TokenReview in authentication")
    auds = spec.get("audiences") or []
    if not isinstance(auds, list) or not all(isinstance(a, str) for a in auds):
        raise E.bad_request("spec.audiences must be a list of strings")
    result = auth.review(token, tuple(auds))
    status: dict[str, Any] = {"authenticated": result.user is not None, "user": {}}
    if result.user is not None:
        status["user"] = result.user.to_json()
        status["audiences"] = list(result.audiences)
    else:
        status["error"] = f"[{_INVALID_TOKEN}, {result.error}]" if result.error else _INVALID_TOKEN
    return {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _invalid(causes: list[tuple[str, str, str]]) -> E.ApiError:
    return E.invalid("SubjectAccessReview", "authorization.k8s.io", "", causes)


def subject_access_review(policy: Policy, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict) or body.get("kind") not in (None, "", "SubjectAccessReview"):
        raise E.bad_request("not a SubjectAccessReview")
    spec = body.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    user = _str(spec, "user")
    listed = spec.get("groups")
    groups = tuple(g for g in listed if isinstance(g, str)) if isinstance(listed, list) else ()
    causes: list[tuple[str, str, str]] = []
    if isinstance(ra, dict) == isinstance(nra, dict):
        shown = "null" if ra is None else '"object"'
        causes.append(("FieldValueInvalid", "spec", f"Invalid value: {shown}: exactly one of "
                                                    "nonResourceAttributes or resourceAttributes must be specified"))
    if not user and not groups:
        causes.append(("FieldValueInvalid", "spec.user",
                       'Invalid value: "": at least one of user or group must be specified'))
    if causes:
        raise _invalid(causes)
    if isinstance(ra, dict):
        attrs = Attributes(user, groups, _str(ra, "verb"), True, namespace=_str(ra, "namespace"),
                           api_group=_str(ra, "group"), resource=_str(ra, "resource"),
                           subresource=_str(ra, "subresource"), name=_str(ra, "name"))
    else:
        assert isinstance(nra, dict)
        attrs = Attributes(user, groups, _str(nra, "verb"), False, path=_str(nra, "path"))
    allowed, reason = policy.authorize(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}


class Reviews:
    """Answers ``POST`` of the two reviews (already authorized); passes the rest on."""

    def __init__(self, app: ASGIApp, tokens: TokenAuthenticator, cache: PolicyCache | None) -> None:
        self.app = app
        self.tokens = tokens
        self.cache = cache  # None: AlwaysAllow

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope.get("method") != "POST" or path not in (
                TOKEN_REVIEW, SUBJECT_ACCESS_REVIEW):
            await self.app(scope, receive, send)
            return
        try:
            body = await _read_body(receive, _content_type(scope))
            if path == TOKEN_REVIEW:
                review = await run_in_threadpool(token_review, self.tokens, body)
            else:
                policy = _ALLOW_ALL if self.cache is None else await run_in_threadpool(self.cache.policy)
                review = subject_access_review(policy, body)
        except E.ApiError as exc:
            await _respond(send, exc.code, exc.status())
            return
        await _respond(send, 201, review)
