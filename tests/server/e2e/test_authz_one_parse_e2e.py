"""A query parameter given twice is authorized and served as the same value, on a real
``kubesched serve --authorization-mode RBAC`` with bearer tokens.

Expected values are upstream's: a request's parameters are Go's ``url.Values``, whose
``Get`` is the first value and which keeps blank values; RequestInfo
(``k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``) takes the name of a list from
its fieldSelector's ``metadata.name`` term and makes a GET of a collection a ``watch`` when
the first ``watch`` value is anything but ``0`` or ``false`` (``Convert_Slice_string_To_bool``
in ``apimachinery/pkg/runtime/conversion.go``: "Any other value (including empty string)
resolves to true"); the handlers decode ListOptions with the same conversions. So:

* ``fieldSelector=metadata.name=s-a1&fieldSelector=`` is a list of ``s-a1``: allowed by a
  Role with ``resourceNames: [s-a1]``, and it returns ``s-a1`` only;
* ``fieldSelector=&fieldSelector=metadata.name=s-a1`` is a list of every secret: refused;
* ``watch=false&watch=1`` is a ``list`` and is served as one (a SecretList, not a stream);
  ``watch=1&watch=false`` and ``watch=`` are watches: refused to a user who may only list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_harness import API_ONLY, Server, started

pytestmark = pytest.mark.slow

TOKENS = 'admintok,admin,1,system:masters\nbobtok,bob,2\n'
SECRETS_A = "/api/v1/namespaces/ns-a/secrets"
SECRETS_W = "/api/v1/namespaces/ns-w/secrets"


def _role(ns: str, name: str, verbs: list[str], names: list[str] | None = None) -> list[dict[str, Any]]:
    rule: dict[str, Any] = {"apiGroups": [""], "resources": ["secrets"], "verbs": verbs}
    if names:
        rule["resourceNames"] = names
    return [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name, "namespace": ns},
             "rules": [rule]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": name, "namespace": ns},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}]


@pytest.fixture(scope="module")
def rbac(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("oneparse")
    (base / "tokens").write_text(TOKENS)
    for server in started(base, "--token-file", str(base / "tokens"), "--authorization-mode", "RBAC", *API_ONLY):
        docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                                      for ns in ("ns-a", "ns-w")]
        docs += [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
                  "stringData": {"k": name}} for ns, name in (("ns-a", "s-a1"), ("ns-a", "s-a2"), ("ns-w", "s-w1"))]
        docs += _role("ns-a", "s-a1-reader", ["get", "list", "watch"], ["s-a1"]) + _role("ns-w", "lister", ["list"])
        server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
        yield server


def _bob(server: Server, path: str) -> tuple[int, Any]:
    return server.request("GET", path, auth=False, headers={"Authorization": "Bearer bobtok"})


def _names(body: Any) -> list[str]:
    assert isinstance(body, dict) and body.get("kind") == "SecretList", body
    return sorted(item["metadata"]["name"] for item in body["items"])


def test_a_repeated_field_selector_is_authorized_and_served_as_its_first_value(rbac: Server) -> None:
    code, body = _bob(rbac, SECRETS_A + "?fieldSelector=metadata.name%3Ds-a1")
    assert code == 200 and _names(body) == ["s-a1"]
    assert _bob(rbac, SECRETS_A)[0] == 403  # the Role names s-a1 only: no list of every secret
    code, body = _bob(rbac, SECRETS_A + "?fieldSelector=metadata.name%3Ds-a1&fieldSelector=")
    assert code == 200 and _names(body) == ["s-a1"], body
    code, body = _bob(rbac, SECRETS_A + "?fieldSelector=&fieldSelector=metadata.name%3Ds-a1")
    assert code == 403 and body["reason"] == "Forbidden", body
    assert body["message"] == ('secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" '
                               'in the namespace "ns-a"')


def test_a_repeated_watch_is_authorized_and_served_as_its_first_value(rbac: Server) -> None:
    # timeoutSeconds bounds the answer should it ever be a watch stream again
    code, body = _bob(rbac, SECRETS_W + "?watch=false&watch=1&timeoutSeconds=1")
    assert code == 200 and _names(body) == ["s-w1"], body
    for query in ("watch=1&watch=false", "watch=", "watch=yes"):
        code, body = _bob(rbac, f"{SECRETS_W}?{query}&timeoutSeconds=1")
        assert code == 403, (query, body)
        assert body["message"] == ('secrets is forbidden: User "bob" cannot watch resource "secrets" in API group "" '
                                   'in the namespace "ns-w"')
    # who may watch is served a watch for the same parameters (the first value decides)
    events = list(rbac.stream(SECRETS_W + "?watch=&timeoutSeconds=1"))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "s-w1")]
    code, body = rbac.request("GET", SECRETS_W + "?watch=0&watch=true&timeoutSeconds=1")
    assert code == 200 and _names(body) == ["s-w1"], body
