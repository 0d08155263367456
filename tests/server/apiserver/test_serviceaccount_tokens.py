"""ServiceAccount tokens as kube-apiserver authenticates them, over the in-process registry
on a fake clock: expiry, ``nbf`` and ``iat`` with go-jose's 60 s leeway
(``jwt.DefaultLeeway``, used by ``pkg/serviceaccount/claims.go``), the audience check and
its message (``pkg/serviceaccount/jwt.go``), the account's and the bound objects' uids and
upstream's messages (``claims.go`` ``validator.Validate``), the claims of a bound token and
the user's extra keys (``claims.go`` ``Claims``; ``ServiceAccountInfo.UserInfo``), and the
TokenRequest's refusals for a bound object (``pkg/registry/core/serviceaccount/storage/token.go``).
The real-process versions are in tests/server/e2e/test_serviceaccount_tokens_e2e.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver.authn.serviceaccount import ServiceAccountTokens
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.tokens import ISSUER, TokenIssuer

from kubesched.testing.clock import T0, ManualClock as Clock


def _issue(reg: Registry, issuer: TokenIssuer, name: str = "robot", **spec: Any) -> str:
    out = issuer.request(reg, "default", name, {"spec": {"expirationSeconds": 600, **spec}})
    return str(out["status"]["token"])


def test_expiry_with_the_leeway(reg: Registry, clock: Clock) -> None:
    reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    issuer = TokenIssuer(clock=clock)
    sa = ServiceAccountTokens(issuer, reg)
    token = _issue(reg, issuer)  # exp = T0 + 600
    clock.t = T0 + 600 + 60  # now.After(exp + leeway) is false at exactly exp + 60
    assert sa.authenticate(token).user is not None
    clock.t = T0 + 661
    assert sa.authenticate(token).error == "service account token has expired"


@pytest.mark.parametrize(("claim", "offset", "error"), [
    ("nbf", 60, ""),  # now + leeway is not before nbf
    ("nbf", 61, "service account token is not valid yet"),
    ("iat", 60, ""),
    ("iat", 61, "service account token is issued in the future"),
], ids=["nbf-in-leeway", "nbf-future", "iat-in-leeway", "iat-future"])
def test_not_before_and_issued_at(reg: Registry, clock: Clock, claim: str, offset: int, error: str) -> None:
    sa_obj = reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    issuer = TokenIssuer(clock=clock)
    now = int(T0)
    claims = {"iss": ISSUER, "sub": "system:serviceaccount:default:robot", "aud": [ISSUER],
              "iat": now, "nbf": now, "exp": now + 3600,
              "kubernetes.io": {"namespace": "default",
                                "serviceaccount": {"name": "robot", "uid": sa_obj["metadata"]["uid"]}}}
    claims[claim] = now + offset
    result = ServiceAccountTokens(issuer, reg).authenticate(issuer.sign(claims))
    assert result.error == error
    assert (result.user is not None) == (not error)


def test_audiences(reg: Registry, clock: Clock) -> None:
    reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    issuer = TokenIssuer(clock=clock, audiences=("https://api.example", "kubesched"))
    sa = ServiceAccountTokens(issuer, reg)
    own = _issue(reg, issuer)  # no audiences asked: the API server's
    vault = _issue(reg, issuer, audiences=["vault"])
    assert sa.authenticate(own).audiences == ("https://api.example", "kubesched")
    # jwt.go: the token's audiences must meet the API server's (Go's %q of a []string)
    assert sa.authenticate(vault).error == (
        'token audiences ["vault"] is invalid for the target audiences ["https://api.example" "kubesched"]')
    # a TokenReview asking for the token's own audience accepts it, for that audience only
    result = sa.authenticate(vault, ("vault", "other"))
    assert result.user is not None and result.audiences == ("vault",)


def test_account_uid_and_bound_pod(reg: Registry, clock: Clock) -> None:
    old = reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    reg.create("nodes", None, {"metadata": {"name": "n1"}})
    pod = reg.create("pods", "default", {"metadata": {"name": "p"},
                                         "spec": {"serviceAccountName": "robot", "nodeName": "n1",
                                                  "containers": [{"name": "c", "image": "i"}]}})
    issuer = TokenIssuer(clock=clock)
    sa = ServiceAccountTokens(issuer, reg)
    bound = _issue(reg, issuer, boundObjectRef={"kind": "Pod", "apiVersion": "v1", "name": "p"})
    k8s = (issuer.decode(bound) or {})["kubernetes.io"]
    assert k8s["pod"] == {"name": "p", "uid": pod["metadata"]["uid"]}
    assert k8s["node"]["name"] == "n1"
    user = sa.authenticate(bound).user
    assert user is not None and user.name == "system:serviceaccount:default:robot"
    extra = dict(user.extra)
    assert extra["authentication.kubernetes.io/pod-name"] == ("p",)
    assert extra["authentication.kubernetes.io/pod-uid"] == (pod["metadata"]["uid"],)
    assert extra["authentication.kubernetes.io/node-name"] == ("n1",)
    assert extra["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")
    plain = _issue(reg, issuer)
    # the pod goes: the bound token dies with it; the account's other tokens live on
    reg.delete("pods", "default", "p", {"gracePeriodSeconds": 0})
    assert sa.authenticate(bound).error == "service account token has been invalidated"
    assert sa.authenticate(plain).user is not None
    # the account goes and comes back with the same name: a new uid, old tokens stay dead
    reg.delete("serviceaccounts", "default", "robot")
    assert sa.authenticate(plain).error == 'serviceaccounts "robot" not found'
    new = reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    assert sa.authenticate(plain).error == (f"service account UID ({new['metadata']['uid']}) does not match "
                                            f"claim ({old['metadata']['uid']})")
    assert sa.authenticate(_issue(reg, issuer)).user is not None


@pytest.mark.parametrize(("ref", "code", "message"), [
    ({"kind": "Pod", "apiVersion": "v1", "name": "other"}, 400,
     'cannot bind token for serviceaccount "robot" to pod running with different serviceaccount name.'),
    ({"kind": "Pod", "apiVersion": "v1", "name": "missing"}, 404, 'pods "missing" not found'),
    ({"kind": "Pod", "apiVersion": "v1", "name": "mine", "uid": "not-its-uid"}, 409,
     'Operation cannot be fulfilled on Pod "mine": the UID in the bound object reference (not-its-uid) does '
     "not match the UID in record. The object might have been deleted and then recreated"),
    ({"kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}, 400,
     "cannot bind token to object of type apps/v1, Kind=Deployment"),
], ids=["other-account", "missing", "uid", "kind"])
def test_bound_object_refusals(reg: Registry, clock: Clock, ref: dict[str, str], code: int, message: str) -> None:
    reg.create("serviceaccounts", "default", {"metadata": {"name": "robot"}})
    containers = [{"name": "c", "image": "i"}]
    reg.create("pods", "default", {"metadata": {"name": "other"}, "spec": {"containers": containers}})
    reg.create("pods", "default", {"metadata": {"name": "mine"},
                                   "spec": {"serviceAccountName": "robot", "containers": containers}})
    with pytest.raises(ApiError) as err:
        _issue(reg, TokenIssuer(clock=clock), boundObjectRef=ref)
    assert (err.value.code, err.value.message) == (code, message)


def test_static_tokens_are_good_for_the_api_audiences_only(reg: Registry, clock: Clock) -> None:
    """``authenticator/audagnostic.go``: a token that knows no audience (the token file's)
    authenticates for the API server's audiences, and for no other."""
    from kubesched.server.apiserver.authn.authenticator import UserInfo
    from kubesched.server.apiserver.authz.reviews import TokenAuthenticator

    issuer = TokenIssuer(clock=clock, audiences=("api", "kubesched"))
    alice = UserInfo("alice", "1", ("system:authenticated",))
    auth = TokenAuthenticator({"secret-token": alice}, issuer.audiences, ServiceAccountTokens(issuer, reg).authenticate)
    assert auth.review("secret-token", ()).audiences == ("api", "kubesched")
    assert auth.review("secret-token", ("kubesched", "other")).audiences == ("kubesched",)
    refused = auth.review("secret-token", ("vault",))
    assert refused.user is None and refused.error == ""
    assert auth.review("unknown", ()).user is None
