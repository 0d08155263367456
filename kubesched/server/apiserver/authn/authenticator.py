"""Authentication (kube-apiserver's static token file and x509 client certificates), as
ASGI middleware, and the ``SelfSubjectReview`` that says who a request was (``kubectl
auth whoami``).

Two authenticators, tried as kube-apiserver's union authenticator tries them, the client
certificate first:

* **x509**: with TLS, the server asks every client for a certificate and verifies it
  against its CA (:mod:`.clientcert` hands the verified subject to the app); as upstream's
  ``CommonNameUserConversion``, the user name is the certificate's CN and the groups its
  O entries. A certificate the CA did not sign fails the TLS handshake (Python's ``ssl``
  cannot ask for a certificate without verifying it, as Go's ``RequestClientCert`` does),
  so such a client gets a TLS alert rather than a 401.
* **token**: ``Authorization: Bearer <token>`` against the token file. Like upstream's
  static token file, a line is ``token,user,uid[,"group1,group2"]`` (only the token is
  required here); blank lines and lines starting with ``#`` are ignored.

Authenticated users also get the group ``system:authenticated``. Authentication is on
when the server has a token file or TLS; then ``/healthz``, ``/livez``, ``/readyz`` and
``/version`` stay open (upstream grants them to anonymous users through ``system:public-info-viewer``)
and every other request, ``/metrics`` included, without valid credentials gets 401 and
a ``Status``. Without either, every request is anonymous (``system:anonymous``) and
accepted: the server then listens on the loopback interface only, by default.

Tokens the server issued through a ServiceAccount's ``token`` subresource are accepted
too, as kube-apiserver accepts them (:mod:`.serviceaccount`: meant for the API server, not
expired, their account and bound object still standing).
"""

from __future__ import annotations

import csv
import hmac
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.server.apiserver.errors import unauthorized
from kubesched.server.store import dumps

PUBLIC_PATHS = ("/healthz", "/livez", "/readyz")
_PUBLIC_PREFIXES = tuple(p + "/" for p in PUBLIC_PATHS)
_PUBLIC_EXACT = (*PUBLIC_PATHS, "/version")  # and "/version/"
PEER_KEY = "kubesched.peer"  # in scope["state"]: the verified client certificate's UserInfo
USER_KEY = "kubesched.user"  # in scope: who the request is, once authenticated
SELF_SUBJECT_REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
AUTHENTICATED = "system:authenticated"
ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (key, values), sorted by key

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(UNAUTHENTICATED,))


@dataclass(frozen=True, slots=True)
class Authn:
    """What the server accepts: tokens (to their users) and/or client certificates."""

    tokens: Mapping[str, UserInfo] = field(default_factory=dict)
    client_certs: bool = False

    @property
    def enabled(self) -> bool:
        return bool(self.tokens) or self.client_certs


def public_path(path: str) -> bool:
    """Whether ``path`` answers anonymous clients (``system:public-info-viewer``'s paths)."""
    return path.rstrip("/") in _PUBLIC_EXACT or path.startswith(_PUBLIC_PREFIXES)


def _with_authenticated(groups: tuple[str, ...]) -> tuple[str, ...]:
    return groups if AUTHENTICATED in groups else (*groups, AUTHENTICATED)


def read_tokens(path: Path) -> dict[str, UserInfo]:
    """The token file's tokens and their users. Unlike upstream, which requires
    ``token,user,uid``, a line may hold only a token (kubesched's earlier one-token-per-line
    form): its user is then ``token-user-N``, N the record's number."""
    users: dict[str, UserInfo] = {}
    n = 0  # the record number, as upstream counts them
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        n += 1
        fields = [f.strip() for f in next(csv.reader([line], skipinitialspace=True))]
        token = fields[0]
        if not token:
            continue
        name = fields[1] if len(fields) > 1 and fields[1] else f"token-user-{n}"
        uid = fields[2] if len(fields) > 2 else ""
        groups = tuple(g.strip() for g in fields[3].split(",") if g.strip()) if len(fields) > 3 else ()
        users[token] = UserInfo(name, uid, _with_authenticated(groups))
    return users


def ensure_token_file(path: Path) -> dict[str, UserInfo]:
    """Read the token file, creating it (mode 0600, one random token) if it is missing.
    Raises ValueError (naming the file) if it cannot be read or holds no token."""
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"{secrets.token_urlsafe(32)},admin,admin,system:masters\n")
        tokens = read_tokens(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: cannot read the token file: {getattr(exc, 'strerror', None) or exc}") from None
    if not tokens:
        raise ValueError(f"{path}: no token in the token file")
    return tokens


def peer_user(peercert: Mapping[str, object] | None) -> UserInfo | None:
    """The user of a verified client certificate (``ssl.SSLSocket.getpeercert()`` form)."""
    if not peercert:
        return None
    cn, orgs = "", []
    for rdn in peercert.get("subject") or ():  # type: ignore[attr-defined]
        for key, value in rdn:
            if key == "commonName":
                cn = value
            elif key == "organizationName":
                orgs.append(value)
    if not cn:
        return None  # upstream: "x509: subject with cn=... is required"
    return UserInfo(cn, groups=_with_authenticated(tuple(orgs)))


class Authenticator:
    """``sa_user``: the user of a ServiceAccount token the server issued, or None (it reads
    the store, so it runs off the event loop; :mod:`.serviceaccount`)."""

    def __init__(self, app: ASGIApp, authn: Authn,
                 sa_user: Callable[[str], UserInfo | None] | None = None) -> None:
        self.app = app
        self.authn = authn
        self.tokens = tuple((t.encode(), u) for t, u in authn.tokens.items())
        self.sa_user = sa_user

    def _user(self, scope: Scope) -> tuple[UserInfo | None, str]:
        """The request's user from its certificate or a static token; else, for a bearer
        token shaped as a JWT, the token (to be checked as a ServiceAccount's)."""
        if self.authn.client_certs:
            user = (scope.get("state") or {}).get(PEER_KEY)
            if user is not None:
                return user, ""
        for name, value in scope.get("headers") or ():
            if name == b"authorization":
                scheme, _, token = value.partition(b" ")
                if scheme.lower() != b"bearer":
                    return None, ""
                token = token.strip()
                found = None
                for t, user in self.tokens:  # compare with every token: no timing hint
                    if hmac.compare_digest(token, t):
                        found = user
                if found is None and self.sa_user is not None and token.count(b".") == 2:
                    return None, token.decode("ascii", "replace")
                return found, ""
        return None, ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user: UserInfo | None = ANONYMOUS_USER
        if self.authn.enabled:
            user, jwt = self._user(scope)
            if jwt and self.sa_user is not None:
                user = await run_in_threadpool(self.sa_user, jwt)
        if user is None and not public_path(scope["path"]):
            await _respond(send, 401, dumps(unauthorized().status()).encode(),
                           [(b"www-authenticate", b'Bearer realm="kubesched"')])
            return
        scope[USER_KEY] = user or ANONYMOUS_USER
        if scope["path"] == SELF_SUBJECT_REVIEW and scope["method"] == "POST":
            await _drain(receive)
            review = {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                      "metadata": {"creationTimestamp": None},
                      "status": {"userInfo": scope[USER_KEY].to_json()}}
            await _respond(send, 201, dumps(review).encode())
            return
        await self.app(scope, receive, send)


async def _drain(receive: Receive) -> None:
    """Read (and ignore) a small request body: a SelfSubjectReview has no input."""
    seen = 0
    while True:
        message = await receive()
        seen += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body") or seen > 64 * 1024:
            return


async def _respond(send: Send, code: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
