"""``Status``: what every extension point returns, with upstream's codes.

Expected rejections are *returned* as a Status (Unschedulable, ...); a plugin raises only
for bugs, and the runtime turns the exception into an ``Error`` status naming the plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class Code(IntEnum):
    """Upstream ``fwk.Code``, same order and names."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.Success
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    # more than upstream's reasons, for explanations only (e.g. which DRA request failed)
    detail: str = field(default="", compare=False)

    @classmethod
    def of(cls, code: Code, *reasons: str, plugin: str = "") -> "Status":
        return cls(code, tuple(reasons), plugin)

    @property
    def success(self) -> bool:
        return self.code == Code.Success

    @property
    def rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream ``IsRejected``)."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> "Status":
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin, self.detail)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"plugin": self.plugin, "code": self.code.name, "reasons": list(self.reasons)}
        if self.detail:
            out["detail"] = self.detail
        return out


SUCCESS = Status()
SKIP = Status(Code.Skip)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.Unschedulable, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, reasons)


def error(*reasons: str) -> Status:
    return Status(Code.Error, reasons)
