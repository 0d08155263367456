"""A Filter plugin for end-to-end tests of ``kubesched run`` and ``serve`` (loaded by import
path ``misbehaving:Misbehaving``, with this directory on PYTHONPATH) that misbehaves as a
careless custom plugin would: it raises for a pod labelled ``crash``, returns a string for
one labelled ``junk``, and returns ``None`` (Go's nil Status: success) for every other pod."""

from __future__ import annotations

from typing import Any


class Misbehaving:
    name = "Misbehaving"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: Any, pod: Any, node_info: Any) -> Any:
        if "crash" in pod.labels:
            raise ValueError("boom")
        if "junk" in pod.labels:
            return "junk"
        return None
