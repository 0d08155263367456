"""``DryRun``: the exception that rolls a dry-run write back, in a module of its own so that
the registry and the deletion code it calls can both raise and catch it."""

from __future__ import annotations

from typing import Any


class DryRun(Exception):
    """Raised inside a transaction to roll a dry-run write back, carrying its result."""

    def __init__(self, obj: dict[str, Any]) -> None:
        super().__init__("dry run")
        self.obj = obj
