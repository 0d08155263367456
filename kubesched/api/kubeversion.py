"""The Kubernetes releases whose scheduler kubesched reproduces, and how a version is named.

Why here (the innermost layer): the scheduling core (feature gates, default profile), the
embedded API server (its ``/version``) and the CLI all need the same list and the same
parsing, and the API server may not import the scheduling core.

A version is kept as its minor release, ``"1.35"``: every patch of a release schedules
alike. Anything a user or a cluster writes is accepted: ``1.35``, ``v1.35``, ``v1.35.4``,
``v1.35.4+k3s1``, ``v1.35.4-gke.1200``. A version outside :data:`SUPPORTED` is an error
naming the supported ones.

A snapshot records the cluster's ``/version`` as a ``kubesched.io/v1`` ``ServerVersion``
document (the ``/version`` fields at top level) among its manifests.

``KUBESCHED_KUBERNETES_VERSION`` in the environment sets the version used when nothing
else chooses one (no flag, no version recorded by a snapshot, no server to ask).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from kubesched.api.errors import KubeschedError

SUPPORTED: tuple[str, ...] = ("1.34", "1.35", "1.36", "1.37")
NEWEST = SUPPORTED[-1]
ENV = "KUBESCHED_KUBERNETES_VERSION"
# The release each minor's decisions come from (reported as the embedded server's gitVersion).
GIT_VERSION: dict[str, str] = {"1.34": "v1.34.1", "1.35": "v1.35.4", "1.36": "v1.36.0", "1.37": "v1.37.0"}

# How a snapshot records the cluster's /version among the manifests it writes.
SERVER_VERSION_API, SERVER_VERSION_KIND = "kubesched.io/v1", "ServerVersion"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


class VersionError(KubeschedError):
    """A Kubernetes version kubesched cannot parse or does not support."""


def parse_minor(text: str, where: str = "--kubernetes-version") -> str:
    """``"1.35"`` for ``"v1.35.4"`` and friends; VersionError when unparsable or unsupported."""
    m = _VERSION.match(text.strip())
    if m is None:
        raise VersionError(f'{where}: "{text}" is not a Kubernetes version (want e.g. 1.35 or v1.35.4); '
                           f"supported: {', '.join(SUPPORTED)}")
    minor = f"{int(m.group(1))}.{int(m.group(2))}"
    if minor not in SUPPORTED:
        raise VersionError(f"{where}: Kubernetes {minor} is not supported; supported: {', '.join(SUPPORTED)}")
    return minor


def from_version_info(info: Mapping[str, Any], where: str = "/version") -> str:
    """The minor release of a server's ``/version`` document (gitVersion first; then
    major/minor, where minor may carry a provider's ``+``)."""
    git = info.get("gitVersion")
    if isinstance(git, str) and git:
        return parse_minor(git, where)
    major, minor = str(info.get("major", "")), str(info.get("minor", "")).rstrip("+")
    return parse_minor(f"{major}.{minor}", where)


def default_minor() -> str:
    """The version used when nothing chose one: ``$KUBESCHED_KUBERNETES_VERSION``, else the newest."""
    env = os.environ.get(ENV)
    return parse_minor(env, ENV) if env else NEWEST


def minor_number(minor: str) -> int:
    """35 for ``"1.35"`` (releases compare by it)."""
    return int(minor.split(".")[1])


def version_info(minor: str) -> dict[str, str]:
    """The ``major``/``minor``/``gitVersion`` part of a ``/version`` document for ``minor``."""
    major, mnr = minor.split(".")
    return {"major": major, "minor": mnr, "gitVersion": GIT_VERSION[minor]}


def server_version_document(info: Mapping[str, Any]) -> dict[str, Any]:
    """A ``/version`` document as the ServerVersion object a snapshot writes."""
    return {"apiVersion": SERVER_VERSION_API, "kind": SERVER_VERSION_KIND, "metadata": {"name": "cluster"},
            **{k: v for k, v in info.items() if isinstance(v, str)}}
