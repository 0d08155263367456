"""Who may read ``kubesched run``'s endpoints: authentication and authorization delegated to
the API server, as kube-scheduler's secure port does (``k8s.io/apiserver``
``DelegatingAuthenticationOptions`` and ``DelegatingAuthorizationOptions``).

* **Authentication**: a bearer token is sent to the API server in a ``TokenReview``; the
  answer (the user, or a refusal) is kept 10 s (``--authentication-token-webhook-cache-ttl``'s
  default). A request without a token is ``system:anonymous`` (anonymous requests are on, as
  upstream's delegating authenticator has them); a token the API server does not accept,
  or cannot judge, is a 401 ``Unauthorized`` Status.
* **Authorization**: paths matching ``--authorization-always-allow-paths`` (default
  ``/healthz``, ``/readyz``, ``/livez``; an entry ending in ``*`` matches by prefix, as
  upstream's ``path.NewAuthorizer``) are open to anyone, so probes need no credentials;
  ``system:masters`` may do anything (``AlwaysAllowGroups``); anything else is a
  ``SubjectAccessReview`` of the non-resource request (the path, and the HTTP method in
  lower case as the verb), kept 10 s whether allowed or denied. A denial is upstream's 403
  ``forbidden: User "u" cannot get path "/metrics"``; a review that cannot be made is a
  500, as upstream's ``InternalError``.

:meth:`Delegation.probe` tells whether the API server answers both reviews for this
client (it needs ``system:auth-delegator``); ``kubesched run`` serves on the loopback
interface only, without authentication, when it does not.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.cluster.kube.client import KubeClient, call_with_retries
from kubesched.cluster.kube.errors import KubeClientError

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
ALWAYS_ALLOW_GROUPS = ("system:masters",)
CACHE_TTL = 10.0  # seconds: the token cache and both authorization caches, as upstream's defaults
CACHE_ENTRIES = 4096
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS_USER = User(ANONYMOUS, groups=(UNAUTHENTICATED,))


class DelegationError(Exception):
    """The API server could not be asked, or refused to answer (the message says which)."""


class PathMatcher:
    """``--authorization-always-allow-paths``: exact paths, or prefixes ending in ``*``; a
    leading ``/`` is optional (upstream ``authorization/path.NewAuthorizer``)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.paths: set[str] = set()
        self.prefixes: list[str] = []
        for p in patterns:
            p = p.removeprefix("/")
            if not p:
                self.paths.add(p)  # "/" itself
                continue
            if "*" in p[:-1]:
                raise ValueError(f'only trailing * allowed in "{p}"')
            if p.endswith("*"):
                self.prefixes.append(p[:-1])
            else:
                self.paths.add(p)

    def matches(self, path: str) -> bool:
        p = path.removeprefix("/")
        return p in self.paths or any(p.startswith(prefix) for prefix in self.prefixes)


class TtlCache(Generic[V]):
    """At most ``size`` entries, each for ``ttl`` seconds, least recently used dropped first."""

    def __init__(self, ttl: float, size: int = CACHE_ENTRIES, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.size, self.clock = ttl, size, clock
        self._items: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            if item[0] <= self.clock():
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: str, value: V) -> None:
        with self._lock:
            self._items[key] = (self.clock() + self.ttl, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _user(status: dict[str, Any]) -> User | None:
    if status.get("authenticated") is not True:
        return None
    info = status.get("user") if isinstance(status.get("user"), dict) else {}
    assert isinstance(info, dict)
    groups = tuple(g for g in info.get("groups") or () if isinstance(g, str))
    extra = info.get("extra") if isinstance(info.get("extra"), dict) else {}
    assert isinstance(extra, dict)
    return User(str(info.get("username") or ""), str(info.get("uid") or ""), groups,
                tuple(sorted((str(k), tuple(str(x) for x in v)) for k, v in extra.items() if isinstance(v, list))))


class Delegation:
    """The two reviews, asked of the API server through ``client`` and cached."""

    def __init__(self, client: KubeClient, *, ttl: float = CACHE_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.tokens: TtlCache[User | bool] = TtlCache(ttl, clock=clock)  # False: refused
        self.decisions: TtlCache[tuple[bool, str]] = TtlCache(ttl, clock=clock)

    def _create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            out = self.client.request("POST", path, body=body, timeout=10.0)
        except KubeClientError as exc:
            raise DelegationError(str(exc)) from exc
        status = out.get("status") if isinstance(out, dict) else None
        if not isinstance(status, dict):
            raise DelegationError(f"POST {path}: the answer has no status")
        return status

    def authenticate(self, token: str) -> User | None:
        """The user the API server says ``token`` is, or None; raises DelegationError."""
        key = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()
        cached = self.tokens.get(key)
        if cached is not None:
            return cached if isinstance(cached, User) else None
        status = self._create(TOKEN_REVIEWS, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                                              "spec": {"token": token}})
        user = _user(status)
        self.tokens.put(key, user if user is not None else False)
        return user

    def authorize(self, user: User, verb: str, path: str) -> tuple[bool, str]:
        """(allowed, reason) for ``user`` doing ``verb`` on the non-resource ``path``."""
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups),
                                "nonResourceAttributes": {"path": path, "verb": verb}}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        key = json.dumps(spec, sort_keys=True)
        cached = self.decisions.get(key)
        if cached is not None:
            return cached
        status = self._create(SUBJECT_ACCESS_REVIEWS, {"apiVersion": "authorization.k8s.io/v1",
                                                       "kind": "SubjectAccessReview", "spec": spec})
        decision = (status.get("allowed") is True, str(status.get("reason") or ""))
        self.decisions.put(key, decision)
        return decision

    def probe(self) -> str | None:
        """None if the API server answers both reviews for this client; else why not (after
        retrying what may pass: no connection, 429, 5xx)."""
        token = "kubesched-probe-" + secrets.token_hex(8)  # no one's token
        try:
            call_with_retries(lambda: self.client.request(
                "POST", TOKEN_REVIEWS, timeout=10.0,
                body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}))
            call_with_retries(lambda: self.client.request(
                "POST", SUBJECT_ACCESS_REVIEWS, timeout=10.0,
                body={"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                      "spec": {"user": ANONYMOUS, "groups": [UNAUTHENTICATED],
                               "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}}))
        except KubeClientError as exc:
            return str(exc)
        return None


def _status(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason, "details": {}, "code": code},
                      separators=(",", ":")).encode()


def _bearer(scope: Scope) -> str | None:
    """The bearer token, "" for another scheme (refused as upstream refuses it), None without
    an Authorization header."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else ""
    return None


class DelegatedAuth:
    """ASGI middleware: authenticate, then authorize, every HTTP request (see the module)."""

    def __init__(self, app: ASGIApp, delegation: Delegation, always_allow: PathMatcher) -> None:
        self.app = app
        self.delegation = delegation
        self.always_allow = always_allow

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        user: User | None = ANONYMOUS_USER
        try:
            if token is not None:
                user = await run_in_threadpool(self.delegation.authenticate, token) if token else None
        except DelegationError:
            user = None  # upstream: an authentication error is a 401, like a refused token
        if user is None:
            await _send(send, 401, _status(401, "Unauthorized", "Unauthorized"))
            return
        path, verb = scope["path"], scope["method"].lower()
        if not (self.always_allow.matches(path) or set(user.groups) & set(ALWAYS_ALLOW_GROUPS)):
            try:
                allowed, reason = await run_in_threadpool(self.delegation.authorize, user, verb, path)
            except DelegationError as exc:
                await _send(send, 500, f"Internal Server Error: {json.dumps(path)}: {exc}".encode(),
                            content_type=b"text/plain; charset=utf-8")
                return
            if not allowed:
                msg = f'forbidden: User "{user.name}" cannot {verb} path "{path}"' + (f": {reason}" if reason else "")
                await _send(send, 403, _status(403, "Forbidden", msg))
                return
        await self.app(scope, receive, send)


async def _send(send: Send, code: int, body: bytes, content_type: bytes = b"application/json") -> None:
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
                            (b"x-content-type-options", b"nosniff")]})
    await send({"type": "http.response.body", "body": body})
