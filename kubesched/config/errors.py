"""Errors of the configuration layer: a bad ``KubeSchedulerConfiguration`` file.

    KubeschedError (kubesched.api.errors)
    └── ConfigError               cannot read the file (missing, unreadable)
        ├── ConfigSyntaxError     malformed YAML; carries the line
        ├── ConfigDecodeError     upstream's strict decoding would reject it: wrong
        │                         apiVersion/kind, unknown or duplicate field, wrong type
        ├── ConfigUnsupportedError  a valid upstream feature kubesched does not run (extenders)
        └── ConfigValidationError   upstream's validation (or the plugin registry) rejects a value

Every error carries the file, and one or more :class:`FieldError` (a field path such as
``profiles[0].plugins.score.enabled[1].weight``, a message, the YAML line when known), so
the CLI prints ``sched.yaml:12: profiles[0]...: message`` and no traceback. Errors found
while *building* a profile (no QueueSort, a plugin that does not extend a point) are
``kubesched.framework.errors.ProfileError``, as the runtime raises them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.errors import KubeschedError


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem at one field path (upstream ``field.Error``)."""

    field: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def show(value: Any) -> str:
    """A value as upstream's field errors print it (strings quoted)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, f"Invalid value: {show(value)}: {detail}")


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, f"Required value: {detail}" if detail else "Required value")


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(field, f"Duplicate value: {show(value)}")


class ConfigError(KubeschedError):
    """The configuration cannot be used. Raised by :func:`kubesched.config.load_config`."""

    def __init__(self, message: str = "", *, field: str = "", file: str = "", line: int | None = None,
                 errors: Sequence[FieldError] = ()) -> None:
        self.errors: tuple[FieldError, ...] = tuple(errors) or (FieldError(field, message, line),)
        first = self.errors[0]
        self.message = message or first.message
        self.field = field or first.field
        self.line = line if line is not None else first.line
        self.file = file
        super().__init__(str(self))

    def with_file(self, file: str) -> "ConfigError":
        if file and not self.file:
            self.file = file
            self.args = (str(self),)
        return self

    def __str__(self) -> str:
        if len(self.errors) == 1:
            err = self.errors[0]
            where = self.file + (f":{err.line}" if self.file and err.line else "")
            if not self.file and err.line:
                where = f"line {err.line}"
            return f"{where}: {err}" if where else str(err)
        lines = [f"{self.file}: " if self.file else ""]
        lines[0] += f"{len(self.errors)} errors:"
        for err in self.errors:
            lines.append(f"  line {err.line}: {err}" if err.line else f"  {err}")
        return "\n".join(lines)


class ConfigSyntaxError(ConfigError):
    """The file is not well-formed YAML (or not text). ``line`` is 1-based."""


class ConfigDecodeError(ConfigError):
    """Upstream's strict decoder would refuse the document: wrong ``apiVersion``/``kind``,
    an unknown or repeated field, a value of the wrong type."""


class ConfigUnsupportedError(ConfigError):
    """A field upstream accepts but kubesched cannot honour (``extenders``)."""


class ConfigValidationError(ConfigError):
    """Values upstream's ``ValidateKubeSchedulerConfiguration`` rejects, unknown plugin
    names, or plugin args the plugin's own parser rejects. ``errors`` lists all of them."""
