"""API errors as Kubernetes ``Status`` objects (apimachinery ``pkg/api/errors``).

    KubeschedError (kubesched.api.errors)
    └── ApiError        raised by the registry and the HTTP layer; carries the HTTP code,
                        the ``reason`` (NotFound, AlreadyExists, Conflict, Invalid, Gone /
                        Expired, BadRequest, Forbidden, Unauthorized, MethodNotAllowed,
                        UnsupportedMediaType, RequestEntityTooLarge, TooManyRequests,
                        InternalError) and ``details`` (name, group, kind, causes)

The constructors below produce upstream's messages (``pods "web" not found``), because
clients match on reasons and people on messages. :func:`from_store_error` translates the
store's errors at the boundary.
"""

from __future__ import annotations

from typing import Any

from kubesched.api.errors import KubeschedError
from kubesched.server.store import errors as store_errors


class ApiError(KubeschedError):
    def __init__(self, code: int, reason: str, message: str,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Failure", "message": self.message, "reason": self.reason}
        if self.details is not None:
            out["details"] = self.details
        out["code"] = self.code
        return out


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = kind
    return d


def qualified(plural: str, group: str) -> str:
    """``pods``, ``deployments.apps`` (how upstream names a resource in messages)."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{qualified(plural, group)} "{name}" not found',
                    _details(name, group, plural))


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{qualified(plural, group)} "{name}" already exists',
                    _details(name, group, plural))


def conflict(plural: str, group: str, name: str, message: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {qualified(plural, group)} '
                    f'"{name}": {message}', _details(name, group, plural))


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """``causes``: (reason, field, message) with reason FieldValueInvalid, FieldValueRequired..."""
    joined = ", ".join(f"{f}: {m}" if f else m for _, f, m in causes)
    shown = f"{kind}.{group}" if group else kind  # schema.GroupKind's String(), as NewInvalid prints it
    msg = f'{shown} "{name}" is invalid: {joined}' if len(causes) == 1 else \
        f'{shown} "{name}" is invalid: [{joined}]'
    d = _details(name, group, kind)
    d["causes"] = [{"reason": r, "message": m, "field": f} for r, f, m in causes]
    return ApiError(422, "Invalid", msg, d)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(plural: str, group: str, name: str, message: str) -> ApiError:
    what = f'{qualified(plural, group)} "{name}"' if name else qualified(plural, group)
    return ApiError(403, "Forbidden", f"{what} is forbidden: {message}", _details(name, group, plural))


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def method_not_allowed() -> ApiError:
    """What kube-apiserver's router answers for a method a path does not serve (go-restful's
    405 wrapped by ``NewGenericServerResponse``)."""
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                    {"causes": [{"reason": "UnexpectedServerResponse", "message": "405: Method Not Allowed"}]})


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", f'the body of the request was in an unknown format - '
                    f'accepted media types include: application/json-patch+json, '
                    f'application/merge-patch+json, application/strategic-merge-patch+json '
                    f'(got "{content_type}")')


def too_large(limit: int) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def too_large_resource_version(requested: int, current: int, retry_after: int = 1) -> ApiError:
    """A list (or streaming watch) that must be at least as fresh as ``requested`` when the
    store is at ``current`` (apiserver ``storage.NewTooLargeResourceVersionError``)."""
    details: dict[str, Any] = {"causes": [{"reason": "ResourceVersionTooLarge",
                                           "message": "Too large resource version"}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {requested}, current: {current}",
                    details)


def invalid_options(kind: str, field: str, message: str, reason: str = "FieldValueNotSupported",
                    more: list[tuple[str, str, str]] | None = None) -> ApiError:
    """Bad query options (``CreateOptions.meta.k8s.io "" is invalid: dryRun: ...``);
    ``more``: further (reason, field, message) causes."""
    causes = [(reason, field, message)] + (more or [])
    joined = ", ".join(f"{f}: {m}" for _, f, m in causes)
    return ApiError(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: '
                    + (joined if len(causes) == 1 else f"[{joined}]"),
                    {"group": "meta.k8s.io", "kind": kind,
                     "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]})


def too_many_requests(message: str, causes: list[dict[str, str]] | None = None) -> ApiError:
    return ApiError(429, "TooManyRequests", message, {"causes": causes} if causes else None)


def not_found_path() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def internal(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}",
                    {"causes": [{"message": message}]})


def from_store_error(exc: store_errors.StoreError, plural: str, group: str, name: str) -> ApiError:
    if isinstance(exc, store_errors.NotFound):
        return not_found(plural, group, name)
    if isinstance(exc, store_errors.AlreadyExists):
        return already_exists(plural, group, name)
    if isinstance(exc, store_errors.Conflict):
        return conflict(plural, group, name, exc.message)
    if isinstance(exc, store_errors.Expired):
        return gone(exc.message)
    return internal(str(exc))
