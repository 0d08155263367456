"""The service-account controller: every active namespace has a ServiceAccount named
``default`` (``pkg/controller/serviceaccount/serviceaccounts_controller.go``), created when
the namespace appears and again if it is deleted, so ``kubectl create token default``
works in any namespace as on a real cluster. Namespaces being deleted are skipped, and one
already gone is never re-created by the account's creation."""

from __future__ import annotations

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import Controller, deleting, meta
from kubesched.server.controllers.informer import Informer, Obj

DEFAULT = "default"


class ServiceAccountsController(Controller[str]):
    name = "serviceaccount-controller"

    def __init__(self, registry: Registry, namespaces: Informer, accounts: Informer, *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        # never bring a namespace back: creating in a namespace that is gone is a 404 here,
        # checked in the same transaction as the insert (the server's registry would
        # auto-provision it)
        self.strict = Registry(registry.store, clock=registry.clock, table=registry.table,
                               autoprovision_namespaces=False)
        self.namespaces = namespaces
        self.accounts = accounts
        namespaces.add_handler(self._on_namespace)
        accounts.add_handler(self._on_account)

    def _on_namespace(self, old: Obj | None, new: Obj | None) -> None:
        if new is not None:
            self.queue.add(str(meta(new).get("name")))

    def _on_account(self, old: Obj | None, new: Obj | None) -> None:
        if new is None and old is not None and meta(old).get("name") == DEFAULT:
            self.queue.add(str(meta(old).get("namespace") or ""))

    def sync(self, key: str) -> None:
        ns = self.namespaces.get("", key)
        if ns is None or deleting(ns) or (ns.get("status") or {}).get("phase") == "Terminating":
            return
        if self.accounts.get(key, DEFAULT) is not None:
            return
        try:
            out = self.strict.create("serviceaccounts", key, {"apiVersion": "v1", "kind": "ServiceAccount",
                                                                "metadata": {"name": DEFAULT, "namespace": key}})
        except ApiError as exc:
            if exc.reason == "AlreadyExists" or exc.code in (403, 404):  # namespace going away
                return
            raise
        self.expect(key, self.accounts, out)
