"""``/version`` reports the release serve decides as (``serve --kubernetes-version``), in
kube-apiserver's ``version.Info`` shape (major, minor, gitVersion, ...); ``kubesched run``
and ``snapshot`` read the release back from it."""

import pytest

from kubesched.api.kubeversion import from_version_info
from kubesched.server.apiserver.http.discovery import version_info


@pytest.mark.parametrize("minor,git", [("1.34", "v1.34.1"), ("1.35", "v1.35.4"), ("1.36", "v1.36.0"),
                                       ("1.37", "v1.37.0")])
def test_version_document(minor: str, git: str) -> None:
    doc = version_info(minor)
    assert (doc["major"], doc["minor"], doc["gitVersion"]) == ("1", minor[2:], f"{git}+kubesched")
    assert {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"} <= set(doc)
    assert from_version_info(doc) == minor
