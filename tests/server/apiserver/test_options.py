"""Which methods each path serves, and the request options checked before any object is
touched, as kube-apiserver's ``endpoints/installer.go`` registers routes and
``apis/meta/v1/validation`` / ``apis/meta/internalversion/validation`` check options."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams

from kubesched.server.apiserver.registry import options
from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.http.target import Target
from kubesched.server.apiserver.registry.resources import TABLE

ALL = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def served(t: Target) -> set[str]:
    out = set()
    for method in ALL:
        try:
            options.check_method(t, method)
            out.add(method)
        except ApiError as exc:
            assert (exc.code, exc.reason) == (405, "MethodNotAllowed")
    return out


@pytest.mark.parametrize("plural", ["pods", "events", "services", "configmaps", "leases.coordination.k8s.io",
                                    "deployments.apps", "poddisruptionbudgets.policy"])
def test_namespaced_resources(plural: str) -> None:
    res = TABLE[plural]
    assert served(Target(res, None, None, "")) == {"GET", "HEAD"}  # /api/v1/pods: list and watch only
    assert served(Target(res, "default", None, "")) == {"GET", "HEAD", "POST", "DELETE"}
    assert served(Target(res, "default", "x", "")) == {"GET", "HEAD", "PUT", "PATCH", "DELETE"}


def test_cluster_scoped_resources() -> None:
    assert served(Target(TABLE["nodes"], None, None, "")) == {"GET", "HEAD", "POST", "DELETE"}
    assert served(Target(TABLE["namespaces"], None, None, "")) == {"GET", "HEAD", "POST"}  # no deletecollection
    assert served(Target(TABLE["namespaces"], None, "x", "")) == {"GET", "HEAD", "PUT", "PATCH", "DELETE"}


@pytest.mark.parametrize("plural,sub,methods", [
    ("pods", "status", {"GET", "HEAD", "PUT", "PATCH"}),
    ("pods", "binding", {"POST"}),
    ("pods", "eviction", {"POST"}),
    ("deployments.apps", "scale", {"GET", "HEAD", "PUT", "PATCH"}),
    ("nodes", "status", {"GET", "HEAD", "PUT", "PATCH"}),
])
def test_subresources(plural: str, sub: str, methods: set[str]) -> None:
    res = TABLE[plural]
    assert served(Target(res, "default" if res.namespaced else None, "x", sub)) == methods


@pytest.mark.parametrize("values,dry", [([], False), (["All"], True), (["All", "All"], True)])
def test_dry_run_values(values: list[str], dry: bool) -> None:
    assert options.dry_run(values, "POST") is dry


@pytest.mark.parametrize("method,kind", [("POST", "CreateOptions"), ("PUT", "UpdateOptions"),
                                         ("PATCH", "PatchOptions"), ("DELETE", "DeleteOptions")])
def test_dry_run_refused_names_the_options_kind(method: str, kind: str) -> None:
    with pytest.raises(ApiError) as info:
        options.dry_run(["All", "x"], method)
    assert info.value.code == 422
    assert info.value.message == (f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                  '[]string{"All", "x"}: supported values: "All"')


def test_list_options_several_errors_are_one_status() -> None:
    q = QueryParams("resourceVersionMatch=Bogus&continue=abc&sendInitialEvents=true")
    with pytest.raises(ApiError) as info:
        options.check_list_options(q, watch=False)
    causes = info.value.details["causes"]  # type: ignore[index]
    assert [c["field"] for c in causes] == ["resourceVersionMatch"] * 3 + ["sendInitialEvents"]
    assert info.value.message.startswith('ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: ')
    options.check_list_options(QueryParams("resourceVersion=5&resourceVersionMatch=NotOlderThan"), watch=False)
    options.check_list_options(QueryParams("sendInitialEvents=true&resourceVersionMatch=NotOlderThan"), watch=True)


def test_delete_options_types() -> None:
    assert options.delete_options({"gracePeriodSeconds": 5, "unknown": [1]}, QueryParams("dryRun=All")) == {
        "gracePeriodSeconds": 5, "dryRun": ["All"]}
    for body in ({"gracePeriodSeconds": True}, {"gracePeriodSeconds": 1.5}, {"preconditions": {"uid": 5}},
                 {"dryRun": [1]}, {"orphanDependents": "yes"}):
        with pytest.raises(ApiError) as info:
            options.delete_options(body)
        assert info.value.code == 400 and "Go struct field DeleteOptions." in info.value.message
