"""Bearer-token authentication (kube-apiserver's ``--token-auth-file``), as ASGI middleware.

The token file holds one token per line; like upstream's static token file, a line may be
``token,user,uid[,"group1,group2"]`` and only the first field is the token. Blank lines
and lines starting with ``#`` are ignored. Without a token file, every request is
accepted: the server then listens on the loopback interface only, by default.

``/healthz``, ``/livez`` and ``/readyz`` stay open (upstream grants them to anonymous
users through the ``system:public-info-viewer`` role); everything else, ``/metrics``
included, needs ``Authorization: Bearer <token>``, or gets 401 and a ``Status``. Tokens
the server issued through a ServiceAccount's ``token`` subresource (:mod:`.tokens`) are
accepted too, until they expire.
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from starlette.types import ASGIApp, Receive, Scope, Send

from kubesched.cluster.apiserver.errors import unauthorized
from kubesched.cluster.store import dumps

PUBLIC_PATHS = ("/healthz", "/livez", "/readyz")


def read_tokens(path: Path) -> frozenset[str]:
    tokens = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        tokens.add(line.split(",", 1)[0].strip())
    return frozenset(t for t in tokens if t)


def ensure_token_file(path: Path) -> frozenset[str]:
    """Read the token file, creating it (mode 0600, one random token) if it is missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{secrets.token_urlsafe(32)},admin,admin,system:masters\n")
    tokens = read_tokens(path)
    if not tokens:
        raise ValueError(f"{path}: no token in the token file")
    return tokens


class BearerAuth:
    def __init__(self, app: ASGIApp, tokens: frozenset[str],
                 verify: Callable[[str], object] | None = None) -> None:
        self.app = app
        self.tokens = tuple(t.encode() for t in tokens)
        self.verify = verify  # service-account tokens the server issued (tokens.py)

    def _ok(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or ():
            if name == b"authorization":
                scheme, _, token = value.partition(b" ")
                if scheme.lower() != b"bearer":
                    return False
                token = token.strip()
                if any(hmac.compare_digest(token, t) for t in self.tokens):
                    return True
                return self.verify is not None and token.count(b".") == 2 and \
                    bool(self.verify(token.decode("ascii", "replace")))
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.tokens or scope["path"].rstrip("/") in PUBLIC_PATHS \
                or scope["path"].startswith(tuple(p + "/" for p in PUBLIC_PATHS)) or self._ok(scope):
            await self.app(scope, receive, send)
            return
        body = dumps(unauthorized().status()).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"www-authenticate", b'Bearer realm="kubesched"')]})
        await send({"type": "http.response.body", "body": body})
