"""What a plugin may return at each extension point, and what becomes of anything else.

A custom plugin is Python, so nothing stops it from raising, returning ``None`` or
returning something that is not a :class:`Status`. The framework never lets that escape
as a traceback: as upstream turns a plugin's error into an ``Error`` status naming the
plugin, each call goes through :func:`call` (an exception becomes an Error whose message
is ``<ExceptionType>: <message>``) and its result through one of the ``as_*`` functions
below, and the runtime then wraps the error in upstream's words for that extension point
(``running "X" filter plugin: ...``, ``running Reserve plugin "X": ...``; see
:mod:`.runtime`). The scheduler treats it as any Error: the pod goes back to the queue
with backoff, and its failure is reported; the loop goes on.

What may be returned (``None`` is Go's nil ``*Status``, which upstream reads as Success):

==========================  ==================================================
pre_enqueue, filter,        ``Status`` or ``None``
pre_score, reserve,
pre_bind, bind, add_pod,
remove_pod, normalize_score
pre_filter                  ``(PreFilterResult | None, Status | None)``, a ``Status``, or ``None``
post_filter                 ``(PostFilterResult | None, Status | None)``, a ``Status``, or ``None``
permit                      ``(Status | None, timeout seconds)``, a ``Status``, or ``None``
score                       an ``int`` in [0, 100] (after normalisation), or ``(int, Status | None)``;
                            a non-success ``Status`` is an error
filter_nodes                a boolean array aligned with the rows it was given
score_nodes                 an integer array aligned with the rows it was given
unreserve, post_bind        anything (ignored)
==========================  ==================================================
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PostFilterResult, PreFilterResult
from kubesched.framework.runtime.metrics import call_timed
from kubesched.framework.status import SUCCESS, Code, Status

log = logging.getLogger(__name__)


def call(plugin: Any, what: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Run one plugin call; an exception is a bug in the plugin and becomes an Error status
    (the plugin's name in ``Status.plugin``; the runtime words the message)."""
    try:
        if args and type(args[0]) is CycleState and args[0].record_plugin_metrics:
            return call_timed(plugin, what, fn, args[0], args)  # a sampled cycle
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - turned into an Error status naming the plugin
        # one line, not a traceback (a plugin raising on every pod would flood the log);
        # the traceback at DEBUG, for the plugin's author
        log.error("plugin %s failed in %s: %s: %s", plugin.name, what, type(exc).__name__, exc)
        log.debug("plugin %s failed in %s", plugin.name, what, exc_info=True)
        return Status(Code.Error, (f"{type(exc).__name__}: {exc}",), plugin.name)


def _bad(what: str, value: Any, expected: str, plugin: str) -> Status:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return Status(Code.Error, (f"{what} returned {shown} ({type(value).__name__}), not {expected}",), plugin)


def as_status(value: Any, what: str, plugin: str) -> Status:
    """A Status-returning extension point (``what``: the plugin's method): ``None`` is Success."""
    if type(value) is Status:
        return value
    if value is None:
        return SUCCESS
    if isinstance(value, Status):
        return value
    return _bad(what, value, "a Status or None", plugin)


def _pair_status(value: Any, what: str, plugin: str, first: type, expected: str) -> tuple[Any, Status]:
    if value is None:
        return None, SUCCESS
    if isinstance(value, Status):
        return None, value
    if isinstance(value, tuple) and len(value) == 2 and (value[0] is None or isinstance(value[0], first)) \
            and (value[1] is None or isinstance(value[1], Status)):
        return value[0], value[1] if value[1] is not None else SUCCESS
    return None, _bad(what, value, expected, plugin)


def as_pre_filter(value: Any, plugin: str) -> tuple[PreFilterResult | None, Status]:
    r, st = _pair_status(value, "pre_filter", plugin, PreFilterResult,
                         "(PreFilterResult | None, Status | None), a Status or None")
    return r, st


def as_post_filter(value: Any, plugin: str) -> tuple[PostFilterResult | None, Status]:
    r, st = _pair_status(value, "post_filter", plugin, PostFilterResult,
                         "(PostFilterResult | None, Status | None), a Status or None")
    return r, st


def as_permit(value: Any, plugin: str) -> tuple[Status, float]:
    if value is None:
        return SUCCESS, 0.0
    if isinstance(value, Status):
        return value, 0.0
    if isinstance(value, tuple) and len(value) == 2 and (value[0] is None or isinstance(value[0], Status)) \
            and isinstance(value[1], numbers.Real) and not isinstance(value[1], bool):
        return value[0] if value[0] is not None else SUCCESS, float(value[1])
    return _bad("permit", value, "(Status | None, timeout seconds), a Status or None", plugin), 0.0


def as_score(value: Any, plugin: str) -> int | Status:
    """A per-node score, or the Error status it amounts to."""
    if type(value) is int:
        return value
    st: Any = None
    if isinstance(value, tuple) and len(value) == 2 and (value[1] is None or isinstance(value[1], Status)):
        value, st = value
    if isinstance(value, Status):
        value, st = None, value
    if st is not None and not st.success:
        return st if st.code == Code.Error else Status(Code.Error, st.reasons, plugin)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return _bad("score", value, "an int score", plugin)


_KINDS = {"b": "b", "i": "iu"}


def as_rows(value: Any, what: str, plugin: str, size: int, kind: str) -> np.ndarray | Status:
    """A batch form's array for ``size`` rows: ``kind`` "b" (Filter) or "i" (Score)."""
    if type(value) is np.ndarray and value.shape == (size,) and value.dtype.kind in _KINDS[kind]:
        return value  # the built-in plugins' case, kept cheap: it runs for every plugin and pod
    if isinstance(value, Status):
        return value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged or odd objects
        arr = np.asarray(None)
    ok = arr.shape == (size,) and (arr.dtype.kind == kind or (kind == "i" and arr.dtype.kind == "u")
                                   or (kind == "b" and size == 0))
    if not ok:
        expected = "a boolean array" if kind == "b" else "an integer array"
        return _bad(what, value, f"{expected} of {size} rows", plugin)
    return arr


# -- upstream's wording of a plugin's error, per extension point (framework.go) ----------
def error(message: str, plugin: str) -> Status:
    return Status(Code.Error, (message,), plugin)


def filter_error(st: Status, plugin: str) -> Status:
    """Upstream RunFilterPlugins: a Filter status that is neither success nor a rejection."""
    return error(f'running "{plugin}" filter plugin: {st.message}', plugin)


def score_error(prefix: str, st: Status, plugin: str) -> Status:
    """Upstream RunScorePlugins: ``<prefix>: plugin "X" failed with: <error>``."""
    return error(f'{prefix}: plugin "{plugin}" failed with: {st.message}', plugin)
