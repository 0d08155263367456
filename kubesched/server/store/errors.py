"""Errors of the durable store.

    KubeschedError (kubesched.api.errors)
    └── StoreError            the root; also raised for a corrupt or unreadable database
        ├── NotFound          get/update/delete of an object that does not exist
        ├── AlreadyExists     create of a kind/namespace/name that exists
        ├── Conflict          a precondition failed: the object's resourceVersion (or uid)
        │                     is not the one the caller read (optimistic concurrency)
        └── Expired           a watch or a continued list starts at a revision older than
                              the compacted event log (HTTP 410 Gone)

The API server translates each to a Kubernetes ``Status`` (404, 409, 409, 410).
"""

from __future__ import annotations

from kubesched.api.errors import KubeschedError


class StoreError(KubeschedError):
    """Root of the store's errors."""


class NotFound(StoreError):
    """Raised by get/update/delete when the object does not exist."""

    def __init__(self, kind: str, namespace: str, name: str) -> None:
        super().__init__(f"{kind} {namespace + '/' if namespace else ''}{name} not found")
        self.kind, self.namespace, self.name = kind, namespace, name


class AlreadyExists(StoreError):
    """Raised by create when an object of that kind, namespace and name exists."""

    def __init__(self, kind: str, namespace: str, name: str) -> None:
        super().__init__(f"{kind} {namespace + '/' if namespace else ''}{name} already exists")
        self.kind, self.namespace, self.name = kind, namespace, name


class Conflict(StoreError):
    """Raised by update/delete when a precondition (resourceVersion, uid) does not hold."""

    def __init__(self, kind: str, namespace: str, name: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.namespace, self.name = kind, namespace, name
        self.message = message


class Expired(StoreError):
    """Raised when a watch or a list continuation needs events that were compacted."""

    def __init__(self, message: str, requested: int, oldest: int) -> None:
        super().__init__(message)
        self.message = message
        self.requested = requested
        self.oldest = oldest
