"""A 422 names the object by its group-qualified kind, as apimachinery's ``errors.NewInvalid``
prints ``schema.GroupKind.String()`` (``Kind.group``; a core kind has no group):
k8s.io/apimachinery/pkg/api/errors/errors.go, k8s.io/apimachinery/pkg/runtime/schema/group_version.go."""

from __future__ import annotations

import pytest

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.registry.registry import Registry


def test_a_deployment_without_a_template_is_a_deployment_apps_error(reg: Registry) -> None:
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"selector": {"matchLabels": {"app": "web"}}}}
    with pytest.raises(E.ApiError) as exc:
        reg.create("deployments", "default", bad)
    assert exc.value.code == 422
    assert exc.value.message.startswith('Deployment.apps "web" is invalid: ')
    assert exc.value.details is not None and exc.value.details["kind"] == "Deployment"
    assert exc.value.details["group"] == "apps"


def test_a_core_kind_is_named_without_a_group(reg: Registry) -> None:
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    with pytest.raises(E.ApiError) as exc:
        reg.create("pods", "default", bad)
    assert exc.value.message.startswith('Pod "p" is invalid: ')
