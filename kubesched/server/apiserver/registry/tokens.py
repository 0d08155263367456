"""The ServiceAccount ``token`` subresource (TokenRequest, ``kubectl create token``).

Upstream signs a JWT with the service-account issuer's RSA key and binds it to the
account's uid. Here a token is a JWT signed with HMAC-SHA256 (``alg: HS256``) under a key
drawn when the server starts, with upstream's claims: ``iss``, ``sub``
(``system:serviceaccount:<namespace>:<name>``), ``aud`` (the requested audiences, else
the server's), ``iat``/``nbf``/``exp`` and the ``kubernetes.io`` claim naming the
namespace and the account (name and uid). ``expirationSeconds`` defaults to 3600 and
must be at least 600, as upstream.

With a token file (``--token-file``) the server also accepts these tokens, until they
expire and while the server that issued them runs (the key is not persisted, so a
restart invalidates them); without one every request is accepted anyway. Which user a
token names matters only to an authorizer; kubesched's is AlwaysAllow unless RBAC is on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.strategies.base import rfc3339

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenIssuer:
    """Signs and verifies service-account tokens with one per-process key."""

    def __init__(self, key: bytes | None = None, clock: Callable[[], float] = time.time) -> None:
        self._key = key or secrets.token_bytes(32)
        self.clock = clock

    def sign(self, claims: dict[str, Any]) -> str:
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
        sig = hmac.new(self._key, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{_b64(sig)}"

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this issuer signed that has not expired, else None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            want = hmac.new(self._key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(want, _unb64(parts[2])):
                return None
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, TypeError):
            return None
        if not isinstance(claims, dict) or not isinstance(claims.get("exp"), int):
            return None
        return claims if claims["exp"] > self.clock() else None

    def identity(self, token: str) -> tuple[str, str, tuple[str, ...]] | None:
        """(username, uid, groups) a valid token authenticates as, as upstream's
        service-account authenticator reports them: ``system:serviceaccount:<ns>:<name>``,
        the account's uid, groups ``system:serviceaccounts``,
        ``system:serviceaccounts:<ns>`` and ``system:authenticated``."""
        claims = self.verify(token)
        if claims is None or not isinstance(claims.get("kubernetes.io"), dict):
            return None
        k8s = claims["kubernetes.io"]
        ns = str(k8s.get("namespace") or "")
        uid = str((k8s.get("serviceaccount") or {}).get("uid") or "")
        return str(claims.get("sub")), uid, ("system:serviceaccounts", f"system:serviceaccounts:{ns}",
                                             "system:authenticated")

    def request(self, reg: "Registry", namespace: str, name: str, body: Any) -> dict[str, Any]:
        """Answer a TokenRequest for the ServiceAccount ``namespace/name``."""
        if not isinstance(body, dict):
            raise E.bad_request("the body of the request must be a TokenRequest object")
        if body.get("kind") not in (None, "", "TokenRequest"):
            raise E.bad_request(f'{body.get("kind")} cannot be handled as a TokenRequest')
        sa = reg.get("serviceaccounts", namespace, name)
        spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
        seconds = spec.get("expirationSeconds", DEFAULT_EXPIRATION)
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < MIN_EXPIRATION:
            raise E.invalid("TokenRequest", "authentication.k8s.io", name, [
                ("FieldValueInvalid", "spec.expirationSeconds",
                 f"Invalid value: {seconds!r}: may not specify a duration less than 10 minutes")])
        audiences = spec.get("audiences") or [ISSUER]
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise E.invalid("TokenRequest", "authentication.k8s.io", name, [
                ("FieldValueInvalid", "spec.audiences", "Invalid value: must be a list of strings")])
        now = int(self.clock())
        exp = now + seconds
        sa_meta = sa.get("metadata") or {}
        claims = {"iss": ISSUER, "sub": f"system:serviceaccount:{namespace}:{name}", "aud": audiences,
                  "iat": now, "nbf": now, "exp": exp,
                  "kubernetes.io": {"namespace": namespace,
                                    "serviceaccount": {"name": name, "uid": sa_meta.get("uid")}}}
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace,
                             "creationTimestamp": None},
                "spec": {"audiences": audiences, "expirationSeconds": seconds,
                         "boundObjectRef": spec.get("boundObjectRef")},
                "status": {"token": self.sign(claims), "expirationTimestamp": rfc3339(exp)}}
