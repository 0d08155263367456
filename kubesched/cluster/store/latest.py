"""The latest change of each recently written object, so that a MODIFIED event's object
before the change is the previous event's parse rather than a second parse of the same text.

Why this exists: a watch with a label or field selector must know whether the object
matched *before* a change (leaving a selector is DELETED for that watch, entering is
ADDED), so it reads :meth:`~.watch.StoredEvent.prev_obj` of every MODIFIED event. That
text is the previous event's ``data``, which the in-process informers have already parsed
(:meth:`~.watch.StoredEvent.obj` caches it), so the store links the new event to the
previous one (:attr:`~.watch.StoredEvent.prev_event`) when the texts are equal; equal text
means an equal parse, so a link made inside a group whose COMMIT later fails, or to an
event rolled back with its savepoint, still gives the right object.

Bounded: the ``limit`` keys written last (the oldest forgotten first); an event linked to
keeps only its own object, so no chain of versions builds up.
"""

from __future__ import annotations

from kubesched.cluster.store.watch import DELETED, MODIFIED, StoredEvent

DEFAULT_LIMIT = 4096


class LatestEvents:
    """Key -> the last event written for it, for the ``limit`` keys written last."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = max(1, limit)
        self._by_key: dict[tuple[str, str, str], StoredEvent] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def note(self, ev: StoredEvent) -> None:
        """Record ``ev`` (called for every event a transaction writes, in revision order)
        and link it to its key's previous event when that one's text is ``ev.prev``."""
        key = (ev.kind, ev.namespace, ev.name)
        last = self._by_key.pop(key, None)
        if ev.type == DELETED:
            return
        if last is not None and ev.type == MODIFIED and ev.prev is not None and last.data == ev.prev:
            ev.prev_event = last
            last.prev_event = None  # one level deep: what ``last`` was before is not kept
            last._prev_obj = None
        self._by_key[key] = ev
        if len(self._by_key) > self.limit:
            del self._by_key[next(iter(self._by_key))]

    def clear(self) -> None:
        self._by_key.clear()
