"""kubesched's own version, as the installed distribution declares it (pyproject.toml), for
``kubesched --version`` and the ``version`` field of the JSON documents the commands print."""

from __future__ import annotations

from functools import cache


@cache
def package_version() -> str:
    """The installed distribution's version, or ``unknown`` when kubesched runs from a source
    tree that was never installed (importlib.metadata is imported only when asked: it is
    slow to import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubesched")
    except PackageNotFoundError:
        return "unknown"


def with_version(doc: dict[str, object]) -> dict[str, object]:
    """``doc`` with kubesched's version added as ``version`` (last)."""
    return {**doc, "version": package_version()}
