"""Progress bars (rich, on stderr) for commands that can run for a while: ``simulate``,
``snapshot``, ``compare``.

Why a wrapper: a bar must never appear in captured output (tests, pipes) unless asked for,
and never for a run that is over in a moment. ``mode`` is ``auto`` (the default: only when
stderr is a terminal, and only once the work has lasted ``delay`` seconds), ``always``
(``--progress``: from the start, even into a pipe) or ``never`` (``--no-progress``). The
bar is transient: it disappears when the work is done, leaving the command's output alone.
Updates are cheap (a clock read and an attribute store) so the scheduling loop may call
:meth:`Bar.update` after every attempt.
"""

from __future__ import annotations

import argparse
import sys
import time
from types import TracebackType
from typing import Any

AUTO, ALWAYS, NEVER = "auto", "always", "never"
DELAY = 2.0


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_const", const=ALWAYS, default=AUTO,
                   help="show a progress bar on stderr (default: only on a terminal, after 2 s)")
    g.add_argument("--no-progress", dest="progress", action="store_const", const=NEVER, help="never show one")


class Bar:
    """One task's bar: ``with Bar("scheduling", total, mode) as bar: bar.update(done)``."""

    def __init__(self, description: str, total: int | None, mode: str = AUTO, delay: float = DELAY) -> None:
        self.description = description
        self.total = total
        self.mode = mode
        self.delay = 0.0 if mode == ALWAYS else delay
        self._start = time.monotonic()
        self._progress: Any = None
        self._task: Any = None
        self._done = 0
        self._enabled = mode == ALWAYS or (mode == AUTO and sys.stderr.isatty())

    def __enter__(self) -> "Bar":
        self._start = time.monotonic()
        if self._enabled and self.delay == 0:
            self._show()
        return self

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True, force_terminal=self.mode == ALWAYS or None)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console, transient=True)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total, completed=self._done)

    def update(self, done: int, *, total: int | None = None, description: str | None = None) -> None:
        """``done`` units of ``total`` are finished (``total``/``description`` may change)."""
        self._done = done
        if total is not None:
            self.total = total
        if description is not None:
            self.description = description
        if self._progress is None:
            if not self._enabled or time.monotonic() - self._start < self.delay:
                return
            self._show()
        self._progress.update(self._task, completed=done, total=self.total, description=self.description)

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
