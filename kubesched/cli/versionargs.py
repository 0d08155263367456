"""``--kubernetes-version`` and ``--feature-gates``: which release of kube-scheduler to decide as.

Every command that schedules takes both. The release is, first of all, the one the flag
names; else the one the input recorded (a snapshot's ServerVersion, or the cluster a
command talks to); else ``$KUBESCHED_KUBERNETES_VERSION``; else the newest supported.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kubesched.api.kubeversion import NEWEST, SUPPORTED, parse_minor
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
