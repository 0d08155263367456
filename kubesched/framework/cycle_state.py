"""``CycleState``: per-attempt scratch space shared by the plugins of one profile.

Keys are typed (``StateKey[T]``) so reading state back needs no casts. Values that plugins
mutate in AddPod/RemovePod (preemption and nominated pods evaluate "what if" states) must
implement ``clone()``; :meth:`CycleState.clone` calls it.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


class StateData(Protocol):
    def clone(self) -> "StateData": ...


class StateKey(Generic[T]):
    """A typed key; create one per plugin state at module level."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "record_plugin_metrics")

    def __init__(self) -> None:
        self._data: dict[StateKey[Any], Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def write(self, key: StateKey[T], value: T) -> None:
        self._data[key] = value

    def read(self, key: StateKey[T]) -> T:
        """Return the value; raises KeyError (a bug: PreFilter did not run) when absent."""
        return self._data[key]  # type: ignore[no-any-return]

    def get(self, key: StateKey[T]) -> T | None:
        return self._data.get(key)

    def delete(self, key: StateKey[Any]) -> None:
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        c = CycleState()
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if clone is not None else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.record_plugin_metrics = self.record_plugin_metrics
        return c
