"""The served types described once (:mod:`.dsl`), for the OpenAPI documents, ``fieldValidation``
and server-side apply; :func:`definition_for` names the definition of a kind."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs import compact, kinds, pod, workctl  # noqa: F401 (they register the definitions)
from kubesched.server.apiserver.typedefs.kinds import generic as definition_for

compact.load()  # after the hand-written ones, which win

__all__ = ["definition_for"]
