"""DefaultBinder: binds the pod through the cluster sink (upstream ``defaultbinder``)."""

from __future__ import annotations

from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Status, error
from kubesched.plugins import names


class DefaultBinder:
    name = names.DEFAULT_BINDER

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        sink = self.handle.sink
        if sink is None:
            return error("no cluster sink to bind through")
        return sink.bind(pod, node_name)  # type: ignore[no-any-return]
