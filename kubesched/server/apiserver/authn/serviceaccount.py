"""Bearer tokens as kube-apiserver authenticates them: the ServiceAccount tokens the server
issued (``pkg/serviceaccount/jwt.go`` and ``claims.go``) and the token file's static tokens
(audience-agnostic, ``authenticator/audagnostic.go``).

A ServiceAccount token is accepted when, in upstream's order:

1. its signature and issuer are the server's (else it is not a token of ours);
2. its audiences (``aud``; none: the API server's) meet the audiences asked for (a
   request to the API: the server's ``--api-audiences``; a TokenReview: its
   ``spec.audiences``, else the server's), else
   ``token audiences ["x"] is invalid for the target audiences ["y"]``;
3. it is not expired, not used before ``nbf`` and not issued in the future, each with
   go-jose's leeway of 60 s (``jwt.DefaultLeeway``);
4. the ServiceAccount still exists with the uid the token names (a re-created account
   with the same name does not revive an old token), and was not deleted more than the
   leeway ago; so for the Secret, Pod or Node the token is bound to.

The user is ``system:serviceaccount:<ns>:<name>`` with the account's uid, the groups
``system:serviceaccounts`` and ``system:serviceaccounts:<ns>``, and upstream's extra
keys naming the pod, the node and the credential (``JTI=<jti>``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.authn.authenticator import AUTHENTICATED, UserInfo
from kubesched.server.apiserver.strategies.base import parse_rfc3339

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.server.apiserver.registry.tokens import TokenIssuer

LEEWAY = 60  # seconds: go-jose's jwt.DefaultLeeway
EXTRA = "authentication.kubernetes.io/"
INVALIDATED = "service account token has been invalidated"


@dataclass(frozen=True, slots=True)
class TokenResult:
    """One token's verdict: the user and the audiences it is good for, or why not.
    ``user`` None and ``error`` empty: the token is none of this authenticator's."""

    user: UserInfo | None = None
    audiences: tuple[str, ...] = ()
    error: str = ""


def _go_strings(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def _audiences(claim: Any) -> tuple[str, ...]:
    if isinstance(claim, str):
        return (claim,)
    if isinstance(claim, list):
        return tuple(a for a in claim if isinstance(a, str))
    return ()


def _time_error(claims: Mapping[str, Any], now: float) -> str:
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool) or now > exp + LEEWAY:
        return "service account token has expired"
    if isinstance(nbf, (int, float)) and now + LEEWAY < nbf:
        return "service account token is not valid yet"
    if isinstance(iat, (int, float)) and now + LEEWAY < iat:
        return "service account token is issued in the future"
    return ""


def _deleted_before(obj: Mapping[str, Any], cutoff: float) -> bool:
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    t = parse_rfc3339(stamp) if isinstance(stamp, str) else None
    return t is not None and t < cutoff


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _ref(k8s: Mapping[str, Any], key: str) -> dict[str, str] | None:
    ref = k8s.get(key)
    if not isinstance(ref, dict):
        return None
    return {"name": str(ref.get("name") or ""), "uid": str(ref.get("uid") or "")}


class ServiceAccountTokens:
    """Authenticates the tokens ``issuer`` signed, looking their objects up in ``registry``."""

    def __init__(self, issuer: "TokenIssuer", registry: "Registry") -> None:
        self.issuer = issuer
        self.registry = registry

    def authenticate(self, token: str, audiences: Sequence[str] = ()) -> TokenResult:
        """The verdict on ``token`` for ``audiences`` (none: the API server's). Reads the
        store: call it off the event loop."""
        claims = self.issuer.decode(token)
        if claims is None:
            return TokenResult()
        api = self.issuer.audiences
        token_auds = _audiences(claims.get("aud")) or api
        wanted = tuple(audiences) or api
        auds = tuple(a for a in token_auds if a in wanted)
        if not auds and api:
            return TokenResult(error=f"token audiences {_go_strings(token_auds)} is invalid for the "
                                     f"target audiences {_go_strings(wanted)}")
        now = self.issuer.clock()
        error = _time_error(claims, now)
        k8s = claims.get("kubernetes.io")
        if not error and not isinstance(k8s, dict):
            error = "service account token claims could not be validated due to unexpected private claim"
        if error or not isinstance(k8s, dict):
            return TokenResult(error=error)
        try:
            extra = self._validate(k8s, now - LEEWAY)
        except _Refused as exc:
            return TokenResult(error=str(exc))
        if isinstance(claims.get("jti"), str) and claims["jti"]:
            extra[EXTRA + "credential-id"] = ("JTI=" + claims["jti"],)
        ns, sa = str(k8s.get("namespace") or ""), _ref(k8s, "serviceaccount") or {"name": "", "uid": ""}
        user = UserInfo(f"system:serviceaccount:{ns}:{sa['name']}", sa["uid"],
                        ("system:serviceaccounts", f"system:serviceaccounts:{ns}", AUTHENTICATED),
                        tuple(sorted(extra.items())))
        return TokenResult(user, auds)

    def _get(self, plural: str, namespace: str | None, name: str, missing: str | None) -> dict[str, Any]:
        try:
            return self.registry.get(plural, namespace, name)
        except E.ApiError as exc:
            raise _Refused(missing or exc.message) from None

    def _validate(self, k8s: Mapping[str, Any], cutoff: float) -> dict[str, tuple[str, ...]]:
        """Upstream's ``validator.Validate``: the objects the token names still stand."""
        ns = str(k8s.get("namespace") or "")
        sa_ref = _ref(k8s, "serviceaccount") or {"name": "", "uid": ""}
        sa = self._get("serviceaccounts", ns, sa_ref["name"], None)
        if _uid(sa) != sa_ref["uid"]:
            raise _Refused(f"service account UID ({_uid(sa)}) does not match claim ({sa_ref['uid']})")
        if _deleted_before(sa, cutoff):
            raise _Refused(f"service account {ns}/{sa_ref['name']} has been deleted")
        extra: dict[str, tuple[str, ...]] = {}
        for key, plural in (("secret", "secrets"), ("pod", "pods")):
            ref = _ref(k8s, key)
            if ref is None:
                continue
            obj = self._get(plural, ns, ref["name"], INVALIDATED)
            if ref["uid"] != _uid(obj):
                raise _Refused(f"{key} UID ({_uid(obj)}) does not match service account {key} ref claim ({ref['uid']})")
            if _deleted_before(obj, cutoff):
                raise _Refused(INVALIDATED)
            if key == "pod":
                extra[EXTRA + "pod-name"], extra[EXTRA + "pod-uid"] = (ref["name"],), (ref["uid"],)
        node = _ref(k8s, "node")
        if node is not None and _ref(k8s, "pod") is None:  # bound to the node itself: it must stand
            obj = self._get("nodes", None, node["name"], INVALIDATED)
            if node["uid"] != _uid(obj):
                raise _Refused(f"node UID ({_uid(obj)}) does not match service account node ref claim ({node['uid']})")
            if _deleted_before(obj, cutoff):
                raise _Refused(INVALIDATED)
        if node is not None:
            extra[EXTRA + "node-name"] = (node["name"],)
            if node["uid"]:
                extra[EXTRA + "node-uid"] = (node["uid"],)
        return extra


class _Refused(Exception):
    """A token whose objects no longer stand (the message is upstream's)."""


def static_token(user: UserInfo, api_audiences: Sequence[str], audiences: Sequence[str]) -> TokenResult:
    """A token-file user for ``audiences``: static tokens know no audience, so, as upstream's
    audience-agnostic wrapper, they are good for the API server's audiences only."""
    wanted = tuple(audiences) or tuple(api_audiences)
    auds = tuple(a for a in api_audiences if a in wanted)
    if not auds and api_audiences:
        return TokenResult()
    return TokenResult(user, auds)
