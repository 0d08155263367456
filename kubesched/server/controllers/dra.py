"""The DRA and batch controllers of ``kubesched serve`` and the informers they share: the
resourceclaim controller (claims from templates, reservations released, claims of done
pods deleted) and the Job controller.

In a real cluster both run in kube-controller-manager; the DRA driver that publishes
ResourceSlices runs per node (here: :mod:`kubesched.server.nodes.dradriver`).
"""

from __future__ import annotations

import random
from typing import Any

from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer
from kubesched.server.controllers.job import JobController
from kubesched.server.controllers.resourceclaim import CLAIMS, TEMPLATES, ResourceClaimController


def dra_controllers(reg: Registry, pods: Informer, jobs: Informer, rng: random.Random, *, workers: int = 1
                    ) -> tuple[list[Informer], list[Controller[Any]]]:
    """New informers (not started) and the controllers over them; ``pods`` (indexed by
    namespace) and ``jobs`` are the manager's, shared with its other controllers."""
    claims = Informer(reg, CLAIMS)
    templates = Informer(reg, TEMPLATES)
    controllers: list[Controller[Any]] = [
        ResourceClaimController(reg, pods, claims, templates, EventRecorder(reg, "resource_claim"), workers=workers),
        JobController(reg, jobs, pods, rng, EventRecorder(reg, "job-controller"), workers=workers),
    ]
    return [claims, templates], controllers
