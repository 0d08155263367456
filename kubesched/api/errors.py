"""Errors raised while decoding or validating Kubernetes objects.

    KubeschedError                 (kubesched/errors root; every user-facing error derives from it)
    └── DecodeError                raised by kubesched.api.decode and the object constructors
        ├── FieldTypeError         a value of the wrong JSON type (kubesched.api.schema)
        ├── QuantityError          a resource.Quantity string that upstream would reject
        └── SelectorError          a label selector / node selector that upstream would reject

Each error carries where the bad input was (file, object, field) so the CLI can print a
one-line message such as ``pods.yaml: Pod default/web: spec.containers[0].resources.requests.cpu:
quantities must match the regular expression ...`` and exit 2 without a traceback.
"""

from __future__ import annotations

import re

# Characters that would break the one-line message (or a terminal): shown escaped.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(ch: re.Match[str]) -> str:
    c = ch.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
    return named or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


class KubeschedError(Exception):
    """Root of every error kubesched reports to a user (never shown as a traceback)."""


class DecodeError(KubeschedError):
    """Bad input in a manifest: raised by the decoders and object constructors.

    ``field`` is a dotted path inside the object (``spec.containers[0].image``); ``obj``
    names the object (``Pod default/web``); ``file`` the source file. Missing parts are
    filled in by outer layers with :meth:`at`, so inner code only knows the field.
    """

    def __init__(self, message: str, *, field: str = "", obj: str = "", file: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.obj = obj
        self.file = file

    def at(self, *, field_prefix: str = "", obj: str = "", file: str = "") -> "DecodeError":
        """Return the same error with outer context filled in (inner context wins)."""
        if field_prefix:
            self.field = f"{field_prefix}.{self.field}" if self.field else field_prefix
        if obj and not self.obj:
            self.obj = obj
        if file and not self.file:
            self.file = file
        return self

    def __str__(self) -> str:
        """One line: control characters from the input (names, keys, values) are escaped."""
        parts = [p for p in (self.file, self.obj, self.field) if p]
        return _CONTROL.sub(_escape, ": ".join(parts + [self.message]))


class FieldTypeError(DecodeError):
    """A value of the wrong JSON type for its field, raised by :mod:`kubesched.api.schema`
    with the message Go's JSON decoder writes (kube-apiserver answers it with 400)."""


class QuantityError(DecodeError):
    """A quantity string upstream's ``resource.ParseQuantity`` rejects."""


class SelectorError(DecodeError):
    """A label or node selector upstream's validation rejects (bad operator, values)."""
