"""Several updates in one store transaction, for the in-process writers that make many at once.

Why this exists: ``serve``'s simulated kubelets write one pod status per pod start, and in a
burst of thousands of pods each of those writes paid for its own transaction: the write
lock, its group's commit and the wait for it (a thread hand-off under the GIL), and a copy
of the body the kubelet had just built. :func:`update_many` makes a batch of updates (pod
statuses from any nodes, node Leases) inside ONE :meth:`.Store.txn`, one commit and one
fsync, while keeping every object's own semantics:

* each update is the registry's own read-modify-write (:meth:`.Registry.update`'s checks,
  strategy, validation, managed fields, the no-op rule), in its own SAVEPOINT: it takes its
  own resourceVersion and produces its own watch event;
* one that fails (409 Conflict on a stale resourceVersion, 404, 422) fails alone: its
  :class:`~.errors.ApiError` is returned in its place and the others are written;
* the batch is acknowledged, like any write, only once its group is committed and durable.

The caller hands its bodies over (``owned``): they are not copied, so it must not reuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kubesched.server.apiserver import errors as E

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.server.apiserver.registry.resources import Resource

Result = dict[str, Any] | E.ApiError
# bound on one batch: it holds the store's write lock (and so delays other writers) throughout
MAX_BATCH = 64


class Update(NamedTuple):
    """One update of a batch: :meth:`.Registry.update`'s arguments, the body handed over."""

    resource: "Resource | str"
    namespace: str | None
    name: str
    body: dict[str, Any]
    subresource: str = ""


def update_many(reg: "Registry", updates: Sequence[Update], *, field_manager: str | None = None) -> list[Result]:
    """Make every update (of any resources) in one transaction; the result of each, in
    order: the stored object, or the ApiError it failed with. An unexpected exception (a
    bug, a failed COMMIT) is raised after the others ran."""
    out: list[Result] = []
    for start in range(0, len(updates), MAX_BATCH):
        out += _update_batch(reg, updates[start:start + MAX_BATCH], field_manager)
    return out


def _update_batch(reg: "Registry", updates: Sequence[Update], field_manager: str | None) -> list[Result]:
    out: list[Result] = []
    crash: BaseException | None = None
    if len(updates) == 1:  # a transaction of its own, as Registry.update's
        u = updates[0]
        try:
            return [reg.update(u.resource, u.namespace, u.name, u.body, subresource=u.subresource,
                               field_manager=field_manager, owned=True)]
        except E.ApiError as exc:
            return [exc]
    with reg.store.txn():  # the group: each update below is a nested transaction (a SAVEPOINT)
        for u in updates:
            try:
                out.append(reg.update(u.resource, u.namespace, u.name, u.body, subresource=u.subresource,
                                      field_manager=field_manager, owned=True))
            except E.ApiError as exc:
                out.append(exc)
            except Exception as exc:  # noqa: BLE001 - kept for after the batch: the others still commit
                out.append(E.internal(str(exc)))
                crash = crash or exc
    if crash is not None:
        raise crash
    return out
