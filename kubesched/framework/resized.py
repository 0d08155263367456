"""The requests a bound pod counts with, per release: pod-level in-place resizing.

A pod's requests are computed once, when it is decoded (:mod:`kubesched.api.resize`), as
every supported release counts container-level resizes. Pod-level resizes count only with
``InPlacePodLevelResourcesVerticalScaling`` (on from 1.36); for a pod whose pod-level status
changes its requests, the decoder keeps that second result beside the first, and the
scheduler takes it where pods enter its cache when its release has the gate on.
"""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.api.resize import POD_LEVEL_RESIZE
from kubesched.framework.features import Features


def as_counted(pod: Pod, features: Features) -> Pod:
    """``pod`` with the requests ``features``' release counts for it."""
    alt = pod.extra.get(POD_LEVEL_RESIZE)
    if alt is None or not features.enabled("InPlacePodLevelResourcesVerticalScaling"):
        return pod
    requests, non0_cpu, non0_mem = alt
    return pod.evolve(requests=requests, non0_cpu=non0_cpu, non0_mem=non0_mem)
