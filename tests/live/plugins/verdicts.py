"""Verdicts: a Filter plugin answering what the node's ``verdict`` label says, for the
``kubesched extender`` tests: ``no`` → Unschedulable, ``never`` →
UnschedulableAndUnresolvable, ``boom`` → the plugin raises (an Error status)."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo


class Verdicts:
    name = "Verdicts"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        verdict = node_info.node.labels.get("verdict") if node_info.node is not None else None
        if verdict == "no":
            return Status(Code.Unschedulable, ("Verdicts: no", "not here"))
        if verdict == "never":
            return Status(Code.UnschedulableAndUnresolvable, ("Verdicts: never",))
        if verdict == "boom":
            raise ValueError("boom")
        return None
