"""Suite-wide set-up.

cel-python (DynamicResources' CEL, imported when the DRA plugin is first built) raises
Python's recursion limit when it is imported. Hypothesis refuses a test during which the
limit changes, so a property test that happens to build the default profile first would fail
when run alone. Importing the CEL module once here, before any test runs, keeps every test's
outcome independent of the order the tests run in.

The suite's expected decisions are upstream v1.34.1's (the fidelity corpus and the
plugins' test tables of that release), so the default Kubernetes release is pinned to 1.34
for every test, and for every ``kubesched`` a test starts (``$KUBESCHED_KUBERNETES_VERSION``).
Tests of other releases ask for theirs explicitly.

``count_handoffs``: a fixture shared by the tests that count hand-offs from other threads to
an event loop (the watch waker's, the store's loop writes').
"""

import asyncio
import os
from collections.abc import Callable

import pytest

import kubesched.plugins.dynamicresources.cel  # noqa: F401
from kubesched.api.kubeversion import ENV as KUBERNETES_VERSION_ENV

os.environ[KUBERNETES_VERSION_ENV] = "1.34"


def _count_handoffs(loop: asyncio.AbstractEventLoop) -> list[object]:
    """Make ``loop.call_soon_threadsafe`` note each call (a hand-off to the loop) in the
    returned list, then do what it did."""
    calls: list[object] = []
    real = loop.call_soon_threadsafe

    def counting(*args: object) -> object:
        calls.append(args[0])
        return real(*args)  # type: ignore[arg-type]

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    return calls


@pytest.fixture
def count_handoffs() -> Callable[[asyncio.AbstractEventLoop], list[object]]:
    return _count_handoffs
