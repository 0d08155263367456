"""ServiceAccount tokens against a real ``kubesched serve --authorization-mode RBAC``, with
real kubectl and raw HTTP: a token must be meant for the API server (``--api-audiences``,
defaulting to the issuer: ``pkg/kubeapiserver/options/authentication.go``; the check is
``pkg/serviceaccount/jwt.go``'s), dies with its ServiceAccount (a re-created account of the
same name has another uid) and with the pod it is bound to (``pkg/serviceaccount/claims.go``);
and the two reviews delegating servers ask (``TokenReview``:
``pkg/registry/authentication/tokenreview/storage.go``; ``SubjectAccessReview``:
``pkg/registry/authorization/subjectaccessreview/rest.go`` and
``pkg/apis/authorization/validation``).

401 for a refused token is upstream's (``responsewriters.Unauthorized``: reason
``Unauthorized``); ``whoami`` proves a token is accepted: ``system:basic-user`` lets every
authenticated user create a SelfSubjectReview."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_harness import API_ONLY, Server, kubectl_path, pod_manifest, started

pytestmark = pytest.mark.slow

WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
TOKEN_REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
ISSUER = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(scope="module")
def rbac(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("sa-tokens"), "--authorization-mode", "RBAC", *API_ONLY)


def whoami(server: Server, token: str) -> tuple[int, Any]:
    return server.request("POST", WHOAMI, {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1"},
                          auth=False, headers={"Authorization": f"Bearer {token}"})


def create_token(server: Server, name: str, *args: str) -> str:
    return server.kubectl("create", "token", name, "-n", "tok", *args).stdout.strip()


def test_a_token_for_another_audience_is_refused(rbac: Server) -> None:
    rbac.kubectl("create", "namespace", "tok", check=False)
    rbac.kubectl("create", "serviceaccount", "aud", "-n", "tok")
    own = create_token(rbac, "aud")
    status, review = whoami(rbac, own)
    assert status == 201 and review["status"]["userInfo"]["username"] == "system:serviceaccount:tok:aud"
    vault = create_token(rbac, "aud", "--audience", "vault")
    assert whoami(rbac, vault)[0] == 401
    # kubectl with a kubeconfig holding only that token (the client certificate would win)
    cfg = yaml.safe_load(rbac.kubeconfig.read_text())
    cfg["users"][0]["user"] = {"token": vault}
    kubeconfig = rbac.data_dir.parent / "kubeconfig-vault"
    kubeconfig.write_text(yaml.safe_dump(cfg))
    out = subprocess.run([kubectl_path(), "get", "--raw", "/api"], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60, env={**os.environ, "KUBECONFIG": str(kubeconfig)})
    assert out.returncode != 0 and "Unauthorized" in out.stderr


def test_a_token_dies_with_its_service_account(rbac: Server) -> None:
    rbac.kubectl("create", "namespace", "tok", check=False)
    rbac.kubectl("create", "serviceaccount", "gone", "-n", "tok")
    token = create_token(rbac, "gone")
    assert whoami(rbac, token)[0] == 201
    rbac.kubectl("delete", "serviceaccount", "gone", "-n", "tok")
    assert whoami(rbac, token)[0] == 401
    rbac.kubectl("create", "serviceaccount", "gone", "-n", "tok")  # same name, new uid
    assert whoami(rbac, token)[0] == 401
    assert whoami(rbac, create_token(rbac, "gone"))[0] == 201


def test_a_pod_bound_token_dies_with_the_pod(rbac: Server) -> None:
    rbac.kubectl("create", "namespace", "tok", check=False)
    rbac.kubectl("create", "serviceaccount", "runner", "-n", "tok")
    pod = pod_manifest("bound-pod")
    pod["spec"]["serviceAccountName"] = "runner"
    assert rbac.request("POST", "/api/v1/namespaces/tok/pods", pod)[0] == 201
    token = create_token(rbac, "runner", "--bound-object-kind", "Pod", "--bound-object-name", "bound-pod")
    status, review = whoami(rbac, token)
    assert status == 201
    assert review["status"]["userInfo"]["extra"]["authentication.kubernetes.io/pod-name"] == ["bound-pod"]
    # unscheduled: the pod is removed at once (no kubelet to wait for)
    rbac.kubectl("delete", "pod", "bound-pod", "-n", "tok", "--grace-period=0", "--force")
    assert whoami(rbac, token)[0] == 401
    assert whoami(rbac, create_token(rbac, "runner"))[0] == 201  # the account's other tokens live on


def test_token_review(rbac: Server) -> None:
    rbac.kubectl("create", "namespace", "tok", check=False)
    rbac.kubectl("create", "serviceaccount", "reviewed", "-n", "tok")
    token = create_token(rbac, "reviewed")
    status, review = rbac.request("POST", TOKEN_REVIEW, {"apiVersion": "authentication.k8s.io/v1",
                                                         "kind": "TokenReview", "spec": {"token": token}})
    assert status == 201, review
    st = review["status"]
    assert st["authenticated"] is True and st["audiences"] == [ISSUER]
    assert st["user"]["username"] == "system:serviceaccount:tok:reviewed"
    assert st["user"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:tok", "system:authenticated"]
    # asked for another audience than the token's: not authenticated, upstream's reason in the error
    status, review = rbac.request("POST", TOKEN_REVIEW, {"kind": "TokenReview",
                                                         "spec": {"token": token, "audiences": ["vault"]}})
    assert status == 201 and review["status"]["authenticated"] is False
    assert (f'token audiences ["{ISSUER}"] is invalid for the target audiences ["vault"]'
            in review["status"]["error"])
    status, review = rbac.request("POST", TOKEN_REVIEW, {"kind": "TokenReview", "spec": {}})
    assert (status, review["message"]) == (400, "token is required for TokenReview in authentication")
    # creating one needs RBAC's create tokenreviews (system:auth-delegator): the account has none
    status, review = rbac.request("POST", TOKEN_REVIEW, {"kind": "TokenReview", "spec": {"token": token}},
                                  auth=False, headers={"Authorization": f"Bearer {token}"})
    assert status == 403 and review["reason"] == "Forbidden"


def test_subject_access_review(rbac: Server) -> None:
    def sar(spec: dict[str, Any]) -> tuple[int, Any]:
        return rbac.request("POST", SAR, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                                          "spec": spec})

    status, review = sar({"user": "alice", "nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    assert status == 201 and review["status"]["allowed"] is False
    status, review = sar({"user": "root", "groups": ["system:masters"],
                          "resourceAttributes": {"verb": "delete", "resource": "nodes"}})
    assert status == 201 and review["status"]["allowed"] is True
    # system:public-info-viewer: anyone may get /healthz
    status, review = sar({"user": "system:anonymous", "groups": ["system:unauthenticated"],
                          "nonResourceAttributes": {"path": "/healthz", "verb": "get"}})
    assert status == 201 and review["status"]["allowed"] is True
    status, review = sar({"resourceAttributes": {"verb": "get", "resource": "pods"}})
    assert status == 422
    assert review["message"] == ('SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: '
                                 '"": at least one of user or group must be specified')
