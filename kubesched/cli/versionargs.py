"""``--kubernetes-version`` and ``--feature-gates``: which release of kube-scheduler to decide as.

Every command that schedules takes both. The release is, first of all, the one the flag
names; else the one the input recorded (a snapshot's ServerVersion, or the cluster a
command talks to); else ``$KUBESCHED_KUBERNETES_VERSION``; else the newest supported.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.api.kubeversion import NEWEST, SUPPORTED, VersionError, from_version_info, parse_minor
from kubesched.framework.features import Features

VERSION_HELP = (f"Kubernetes release whose scheduler to reproduce: {', '.join(SUPPORTED)} "
                f"(default: {{default}})")
GATES_HELP = ("feature gates as kube-scheduler takes them, e.g. DRAPartitionableDevices=false,"
              "OpportunisticBatching=false (defaults: the release's; see docs/versions.md)")


def add_arguments(p: argparse.ArgumentParser,
                  default: str = f"the version the manifests recorded, else {NEWEST}") -> None:
    p.add_argument("--kubernetes-version", metavar="VERSION", help=VERSION_HELP.format(default=default))
    p.add_argument("--feature-gates", metavar="NAME=BOOL,...", default="", help=GATES_HELP)


def features(args: argparse.Namespace, recorded: Callable[[], str | None] | None = None) -> Features:
    """The Features the flags ask for; without ``--kubernetes-version``, ``recorded()`` (the
    input's own release, or None) and then the default release."""
    version = getattr(args, "kubernetes_version", None)
    if version:
        version = parse_minor(version)
    elif recorded is not None:
        version = recorded()
    return Features.for_version(version, getattr(args, "feature_gates", "") or None)


def server_features(args: argparse.Namespace, client: Any) -> Features:
    """The Features for a scheduler working against ``client``'s API server: without
    ``--kubernetes-version``, the server's own release (its ``/version``)."""
    from kubesched.cluster.kube import KubeClientError, TransportError

    def recorded() -> str | None:
        try:
            body = client.request("GET", "/version", timeout=30.0)
        except (TransportError, KubeClientError) as exc:
            raise KubeschedError(f"cannot read {client.host}/version ({exc}); --kubernetes-version "
                                 "names the release to decide as") from exc
        try:
            return from_version_info(body if isinstance(body, dict) else {}, f"{client.host}/version")
        except VersionError as exc:
            raise VersionError(f"{exc} (--kubernetes-version names the release to decide as)") from None

    return features(args, recorded)
