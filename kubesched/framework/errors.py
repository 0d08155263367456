"""Errors of the framework layer.

    KubeschedError (kubesched.api.errors)
    └── ProfileError     raised by Framework() and the registry when a profile cannot be
                         built: unknown plugin, duplicate registration, no QueueSort/Bind,
                         a Score plugin without weight, bad plugin args
"""

from __future__ import annotations

from kubesched.api.errors import KubeschedError


class ProfileError(KubeschedError):
    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message
