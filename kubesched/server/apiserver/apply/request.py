"""A server-side apply request against the registry: PATCH ``application/apply-patch+yaml``.

Upstream's order: the patch options are validated first (``fieldManager`` is required,
``force`` only goes with apply), then the applied configuration is checked like any body
(kind, apiVersion, name and namespace must match the URL; ``managedFields`` must be
absent), merged into the live object under the write lock, and written through the usual
prepare/validate path. An apply to a missing object creates it (201).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kubesched.server.apiserver import errors as E
from kubesched.server.apiserver.apply.managed import apply_to
from kubesched.server.apiserver.typedefs import definition_for
from kubesched.server.store import errors as store_errors

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.server.apiserver.registry.resources import Resource

MAX_MANAGER_LENGTH = 128


def _options_invalid(reason: str, field: str, message: str) -> E.ApiError:
    return E.ApiError(422, "Invalid", f'PatchOptions.meta.k8s.io "" is invalid: {field}: {message}',
                      {"group": "meta.k8s.io", "kind": "PatchOptions",
                       "causes": [{"reason": reason, "message": message, "field": field}]})


def check_patch_options(apply: bool, manager: str | None, force_given: bool) -> None:
    """Upstream's ValidatePatchOptions: 422 on a missing manager for apply, ``force`` without apply,
    or a manager that is too long or not printable."""
    if not apply and force_given:
        raise _options_invalid("FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch")
    if apply and not manager:
        raise _options_invalid("FieldValueRequired", "fieldManager", "Required value: is required for apply patch")
    if manager and len(manager) > MAX_MANAGER_LENGTH:
        raise _options_invalid("FieldValueTooLong", "fieldManager",
                               f"Too long: may not be more than {MAX_MANAGER_LENGTH} bytes")
    if manager and not manager.isprintable():
        raise _options_invalid("FieldValueInvalid", "fieldManager",
                               f"Invalid value: {manager!r}: invalid characters")


def _config(res: Resource, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise E.bad_request(f"the body of the request must be a {res.kind} object")
    if not body.get("kind"):
        raise E.bad_request("couldn't get version/kind; json parse error: Object 'Kind' is missing in the "
                            "applied configuration")
    meta = body.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise E.bad_request("metadata.managedFields must be nil")
    return copy.deepcopy(body)


def server_side_apply(reg: Registry, res: Resource, namespace: str | None, name: str, body: Any, manager: str,
                      force: bool, subresource: str = "", dry_run: bool = False) -> tuple[dict[str, Any], bool]:
    """Apply ``body`` as ``manager``; return (object, created)."""
    check_patch_options(True, manager, False)
    ns = reg._ns(res, namespace)
    strategy = reg.strategy(res)
    config = reg._check_body(res, _config(res, body), ns, name)
    want_rv = config["metadata"].pop("resourceVersion", None)
    now = reg.context().timestamp()
    what = (res.plural, res.group, name)
    root = definition_for(res.group, res.version, res.kind)
    box: dict[str, list[Any]] = {}

    def change(cur: dict[str, Any]) -> dict[str, Any]:
        live = strategy.from_storage(copy.deepcopy(cur))
        cur_rv = cur["metadata"].get("resourceVersion")
        if want_rv not in (None, "", cur_rv):
            raise store_errors.Conflict(res.storage, ns, name, "the object has been modified; please "
                                        "apply your changes to the latest version and try again")
        merged = apply_to(live, config, manager, force, res.api_version, subresource, res.has_status, now, what,
                          root)
        box["managed"] = merged["metadata"]["managedFields"]
        merged["metadata"]["resourceVersion"] = cur_rv
        return strategy.to_storage(reg._check_body(res, merged, ns, name))

    try:
        return reg._rmw(res, ns, name, change, subresource, dry_run, managed=lambda: box["managed"]), False
    except E.ApiError as exc:
        if exc.code != 404 or subresource or exc.reason != "NotFound" or \
                (exc.details or {}).get("kind") != res.plural:
            raise
    created = apply_to(None, config, manager, force, res.api_version, subresource, res.has_status, now, what,
                       root)
    managed = created["metadata"].pop("managedFields")
    created["metadata"].pop("resourceVersion", None)
    return reg.create(res, namespace, created, dry_run=dry_run, managed=managed), True
