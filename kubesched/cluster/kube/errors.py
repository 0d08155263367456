"""Errors of the Kubernetes client side (``kubesched.cluster.kube``).

    KubeschedError (kubesched.api.errors)
    └── KubeClientError         the root; also: a kubeconfig or in-cluster configuration
        │                       that cannot be loaded (raised by KubeClient.connect)
        ├── ApiStatusError      the API server answered with a failure Status (4xx/5xx):
        │                       ``code``, ``reason`` (NotFound, Conflict, Expired, ...), message
        ├── TransportError      no answer: connection refused or reset, timeout, TLS failure.
        │                       The request may or may not have reached the server.
        └── FencedError         not sent: a replica's write of a decision was refused before
                                it left, because the replica cannot prove it still holds its
                                Lease (leader election's fence). Never retried.

``retriable(exc)`` says which of them are worth another try (upstream's ``Retriable``:
internal errors, unavailable, throttled, no connection).
"""

from __future__ import annotations

from typing import Any

from kubesched.api.errors import KubeschedError


class KubeClientError(KubeschedError):
    """Root of the client's errors; raised as such for a configuration that cannot load."""


class ApiStatusError(KubeClientError):
    """The server answered ``code`` with a Kubernetes ``Status`` (or something else)."""

    def __init__(self, code: int, reason: str, message: str, body: Any = None) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.body = body

    @classmethod
    def from_body(cls, code: int, body: Any, fallback: str = "") -> "ApiStatusError":
        if isinstance(body, dict) and body.get("kind") == "Status":
            return cls(code, str(body.get("reason") or ""), str(body.get("message") or fallback), body)
        return cls(code, "", fallback or str(body)[:200], body)

    @property
    def not_found(self) -> bool:
        return self.code == 404

    @property
    def conflict(self) -> bool:
        return self.code == 409

    @property
    def gone(self) -> bool:
        return self.code == 410


class TransportError(KubeClientError):
    """No HTTP answer (raised from the underlying connection error)."""


class FencedError(KubeClientError):
    """Raised by a fence (``LeaderElector.fence``) that a write request calls just before it
    is sent: the request was not sent."""


def retriable(exc: BaseException) -> bool:
    """Transient failures: no connection, 429 (throttled), 500 and 503 (and the other 5xx)."""
    if isinstance(exc, TransportError):
        return True
    return isinstance(exc, ApiStatusError) and (exc.code == 429 or exc.code >= 500)
