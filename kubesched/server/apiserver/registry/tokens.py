"""The ServiceAccount ``token`` subresource (TokenRequest, ``kubectl create token``).

Upstream signs a JWT with the service-account issuer's RSA key. Here a token is a JWT
signed with HMAC-SHA256 (``alg: HS256``) under a key drawn when the server starts, with
upstream's claims (``pkg/serviceaccount/claims.go``): ``iss``, ``sub``
(``system:serviceaccount:<namespace>:<name>``), ``aud`` (the requested audiences, else the
API server's, ``--api-audiences``), ``iat``/``nbf``/``exp``, ``jti``, and the
``kubernetes.io`` claim naming the namespace, the account (name and uid) and the object
the token is bound to (``spec.boundObjectRef``: a Pod, with the Node it runs on; a
Secret; a Node), each with its uid. ``expirationSeconds`` defaults to 3600 and must be at
least 600, as upstream.

Which tokens the server accepts, and until when, is :mod:`..authn.serviceaccount`'s
business: the account (and the bound object) must still exist with the uid the token
names, the token must be meant for the API server and not expired. The key is not
persisted: a restart of the server invalidates every token it issued.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
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
    """Signs service-account tokens with one per-process key, and checks their signature.

    ``audiences``: the API server's own (``--api-audiences``; upstream defaults them to the
    issuer), given to a TokenRequest that names none."""

    def __init__(self, key: bytes | None = None, clock: Callable[[], float] = time.time,
                 issuer: str = ISSUER, audiences: Sequence[str] = (ISSUER,)) -> None:
        self._key = key or secrets.token_bytes(32)
        self.clock = clock
        self.issuer = issuer
        self.audiences = tuple(audiences)

    def sign(self, claims: dict[str, Any]) -> str:
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
        sig = hmac.new(self._key, f"{header}.{body}".encode(), hashlib.sha256).digest()
        return f"{header}.{body}.{_b64(sig)}"

    def decode(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this issuer signed (its signature and issuer checked, nothing
        else: expiry and the rest are the authenticator's), else None."""
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
        if not isinstance(claims, dict) or claims.get("iss") != self.issuer:
            return None
        return claims

    def request(self, reg: "Registry", namespace: str, name: str, body: Any) -> dict[str, Any]:
        """Answer a TokenRequest for the ServiceAccount ``namespace/name``
        (``pkg/registry/core/serviceaccount/storage/token.go``)."""
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
        audiences = spec.get("audiences") or list(self.audiences)
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise E.invalid("TokenRequest", "authentication.k8s.io", name, [
                ("FieldValueInvalid", "spec.audiences", "Invalid value: must be a list of strings")])
        bound = bound_objects(reg, namespace, name, spec.get("boundObjectRef"))
        now = int(self.clock())
        exp = now + seconds
        sa_meta = sa.get("metadata") or {}
        k8s: dict[str, Any] = {"namespace": namespace,
                               "serviceaccount": {"name": name, "uid": sa_meta.get("uid")}, **bound}
        claims = {"iss": self.issuer, "sub": f"system:serviceaccount:{namespace}:{name}", "aud": audiences,
                  "iat": now, "nbf": now, "exp": exp, "jti": str(uuid.uuid4()), "kubernetes.io": k8s}
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace,
                             "creationTimestamp": None},
                "spec": {"audiences": audiences, "expirationSeconds": seconds,
                         "boundObjectRef": spec.get("boundObjectRef")},
                "status": {"token": self.sign(claims), "expirationTimestamp": rfc3339(exp)}}


def _ref(obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {"name": str(meta.get("name") or ""), "uid": str(meta.get("uid") or "")}


def bound_objects(reg: "Registry", namespace: str, sa_name: str, ref: Any) -> dict[str, Any]:
    """The ``kubernetes.io`` claims of ``spec.boundObjectRef`` (upstream's ``boundObjects``):
    ``pod`` (and the ``node`` it runs on), ``secret`` or ``node``, each ``{name, uid}``."""
    if ref is None:
        return {}
    if not isinstance(ref, dict):
        raise E.bad_request("spec.boundObjectRef must be an object")
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    ref_name = str(ref.get("name") or "")
    core = "/" not in api_version
    out: dict[str, Any] = {}
    if core and kind == "Pod":
        pod = reg.get("pods", namespace, ref_name)
        if ((pod.get("spec") or {}).get("serviceAccountName") or "default") != sa_name:
            raise E.bad_request(f'cannot bind token for serviceaccount "{sa_name}" to pod running with '
                                "different serviceaccount name.")
        out["pod"] = _ref(pod)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name:
            try:
                out["node"] = _ref(reg.get("nodes", None, node_name))
            except E.ApiError as exc:
                if exc.code != 404:
                    raise
                out["node"] = {"name": node_name, "uid": ""}  # upstream keeps the name of a missing node
        uid = out["pod"]["uid"]
    elif core and kind == "Secret":
        out["secret"] = _ref(reg.get("secrets", namespace, ref_name))
        uid = out["secret"]["uid"]
    elif core and kind == "Node":
        out["node"] = _ref(reg.get("nodes", None, ref_name))
        uid = out["node"]["uid"]
    else:
        group = api_version.split("/")[0] if not core else ""
        version = api_version.split("/")[-1]
        raise E.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    want = ref.get("uid")
    if want and want != uid:
        raise E.conflict(kind, "", ref_name, f"the UID in the bound object reference ({want}) does not match "
                                            "the UID in record. The object might have been deleted and then recreated")
    return out
