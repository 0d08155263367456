"""The OpenAPI definitions of the served types (:mod:`.dsl`), derived from the declared types
for the OpenAPI documents, ``fieldValidation`` and server-side apply; :func:`definition_for`
names the definition of a kind."""

from __future__ import annotations

from kubesched.server.apiserver.typedefs import derived
from kubesched.server.apiserver.typedefs.derived import generic as definition_for

derived.load()

__all__ = ["definition_for"]
