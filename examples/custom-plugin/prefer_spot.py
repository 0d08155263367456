"""PreferSpot: a custom Score plugin, loaded by import path (``prefer_spot:PreferSpot``).

It gives 100 to nodes whose label ``label`` has the value ``value`` (by default Karpenter's
``karpenter.sh/capacity-type: spot``) and 0 to the others; the profile's weight scales it
like any in-tree score. A plugin is any class with a ``name`` and the methods of the
extension points it serves (kubesched/framework/interface.py); it is built as
``PreferSpot(args, handle)``, its ``pluginConfig`` args parsed by ``parse_args`` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.errors import ProfileError
from kubesched.framework.types import NodeInfo


@dataclass(frozen=True, slots=True)
class PreferSpotArgs:
    label: str = "karpenter.sh/capacity-type"
    value: str = "spot"


class PreferSpot:
    name = "PreferSpot"

    def __init__(self, args: PreferSpotArgs, handle: Any) -> None:
        self.args = args

    @staticmethod
    def parse_args(raw: Mapping[str, Any] | None, path: str) -> PreferSpotArgs:
        raw = raw or {}
        for key, val in raw.items():
            if key not in ("label", "value"):
                raise ProfileError(f'unknown field "{key}"', field=f"{path}.{key}")
            if not isinstance(val, str) or not val:
                raise ProfileError("must be a non-empty string", field=f"{path}.{key}")
        return PreferSpotArgs(**raw)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        labels = node_info.node.labels if node_info.node is not None else {}
        return 100 if labels.get(self.args.label) == self.args.value else 0
