"""The options every offline command reads manifests with (``simulate``, ``explain``,
``compare``, ``capacity``, ``replay``), and loading with a progress bar on stderr."""

from __future__ import annotations

import argparse
from typing import Any

from typing import TYPE_CHECKING

from kubesched.cli import progress

if TYPE_CHECKING:
    from kubesched.api.decode import Manifest
    from kubesched.sim.loading import LoadOptions

STRICT = "strict"
VALIDATE_MODES = (STRICT, "warn", "ignore")  # kubesched.sim.loading's; imported late (a heavy import)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--validate", choices=VALIDATE_MODES, default=STRICT,
                   help="unknown or duplicate fields in the manifests: an error (strict, the default, as "
                        "kubectl apply), a warning on stderr (warn), or nothing (ignore)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--controllers", dest="controllers", action="store_const", const=True, default=None,
                   help="turn Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs and DaemonSets into the pods "
                        "their controllers would create (the default, except with --single-pass)")
    g.add_argument("--no-controllers", dest="controllers", action="store_const", const=False,
                   help="schedule only the pods in the manifests, workloads read as listers only (the default "
                        "with --single-pass, the scheduler-alone setting of the fidelity corpora)")
    p.add_argument("--cronjobs-fire", action="store_true",
                   help="each CronJob creates one Job, the run of its first scheduled time after the "
                        "simulation's clock starts (1970-01-01T00:00:00Z); default: CronJobs create nothing")


def keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The loading options of ``args`` as :func:`kubesched.python_api.prepare` takes them."""
    opts = options(args)
    return {"validate": opts.validate, "controllers": opts.expand, "cronjobs_fire": opts.cronjobs_fire}


def options(args: argparse.Namespace, on_progress: Any = None) -> "LoadOptions":
    from kubesched.sim.loading import LoadOptions

    controllers = getattr(args, "controllers", None)
    if controllers is None:
        controllers = not getattr(args, "single_pass", False)
    return LoadOptions(validate=getattr(args, "validate", STRICT), expand=controllers,
                       cronjobs_fire=getattr(args, "cronjobs_fire", False), progress=on_progress)


def load_manifests(args: argparse.Namespace, paths: list[str] | None = None) -> "Manifest":
    """The manifests of ``-f`` (or ``paths``), read as :mod:`kubesched.sim.loading` reads them;
    a bar on stderr while large inputs load (``--progress``, or on a terminal after 2 s)."""
    from kubesched.sim.loading import load

    with progress.Bar("loading", None, getattr(args, "progress", progress.AUTO)) as bar:
        return load(paths if paths is not None else args.filename,
                    options(args, lambda what, done, total: bar.update(done, total=total or None, description=what)))
