"""How the DynamicResources plugin reaches DRA objects: a lister to read, a writer for PreBind.

Why this exists: upstream's plugin reads DeviceClasses, ResourceSlices and ResourceClaims
through its ``DRAManager`` (informer listers plus an assume cache of claims whose
allocation is in flight) and writes claims through the API in PreBind (finalizer,
``status.allocation``, ``status.reservedFor``). The scheduling core never imports
``cluster/``, so these two protocols are what the framework handle hands the plugin;
simulate's in-process store implements them, and serve/run can implement them over
informers and an API client without touching the plugin.

``DraLister`` methods must be cheap (dictionary reads): they run inside PreFilter.
``in_flight`` is the plugin's own record of claims whose allocation is assumed (Reserve)
but not yet written (PreBind); it lives with the lister because upstream keeps it in the
DRAManager, so that every profile's plugin sees the same devices as taken.
``DraWriter.update_claim`` raises :class:`DraWriteError` when the write is refused (a
conflict, a deleted claim); the message is the API's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from kubesched.api.dra import DeviceClass, ResourceClaim, ResourceSlice


class DraWriteError(Exception):
    """A PreBind write the API refused; the message is the API's."""


class DraLister(Protocol):
    """Read access to the DRA objects (upstream ``DRAManager``)."""

    @property
    def generation(self) -> int:
        """Bumped on every change of a class, slice or claim (the plugin caches per generation)."""
        ...

    def device_class(self, name: str) -> DeviceClass | None: ...

    def device_classes(self) -> Sequence[DeviceClass]:
        """Every class, in the order they were added (extended resource names resolve by it)."""
        ...

    def resource_slices(self) -> Sequence[ResourceSlice]: ...

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None: ...

    def resource_claims(self) -> Sequence[ResourceClaim]: ...

    @property
    def in_flight(self) -> dict[str, ResourceClaim]:
        """Claim uid -> the claim with its assumed allocation (Reserve until PreBind)."""
        ...


class DraWriter(Protocol):
    """What DynamicResources' PreBind (and PostFilter's deallocation) writes."""

    def update_claim(self, raw: dict[str, Any]) -> ResourceClaim: ...


class NoDra:
    """A cluster without DRA objects: every lookup misses, every write is refused."""

    def __init__(self) -> None:
        self._in_flight: dict[str, ResourceClaim] = {}

    @property
    def generation(self) -> int:
        return 0

    def device_class(self, name: str) -> DeviceClass | None:
        return None

    def device_classes(self) -> Sequence[DeviceClass]:
        return ()

    def resource_slices(self) -> Sequence[ResourceSlice]:
        return ()

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return None

    def resource_claims(self) -> Sequence[ResourceClaim]:
        return ()

    @property
    def in_flight(self) -> dict[str, ResourceClaim]:
        return self._in_flight

    def update_claim(self, raw: dict[str, Any]) -> ResourceClaim:
        raise DraWriteError("this cluster has no resource.k8s.io API")
