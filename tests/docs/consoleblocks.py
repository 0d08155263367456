"""The console examples of the README and the documentation, as data a test can run.

Every fenced block marked ``console`` in README.md and docs/ is a transcript: lines starting
with ``$ `` are commands (a line ending in a backslash continues on the next line), the
lines after a command up to the next one are what it prints. Conventions the test relies on:

- A block is **run**: each command must be a plain ``kubesched ...`` (optionally preceded by
  ``NAME=value`` environment assignments, no pipes or redirections); it runs from a
  directory holding the repository's ``examples/`` and ``deploy/`` (so ``-o report/`` writes
  nowhere in the tree), at 80 columns, with stdout and stderr together, and what it prints
  must match the lines shown.
- **Wildcards**, as doctest's ELLIPSIS: a line holding only ``...`` stands for any number of
  lines (none included); ``...`` inside a line stands for any text on that line (times,
  ports, paths). Trailing spaces are ignored.
- A block preceded by ``<!-- not-run: why -->`` (the line before the fence) is **not run**:
  long-running commands (``serve``, ``run``, ``extender``, ``bench``), sessions with
  kubectl or curl, commands that need a cluster. Each ``kubesched`` command in such a block
  must still be accepted by the argument parser; other commands are not checked.
- A command whose shown output is empty must print nothing.
- Blocks marked ``sh`` (or ``bash``, ``shell``) hold commands only, one a line, without
  ``$``; they are treated as not-run blocks: their ``kubesched`` commands must parse.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_FENCE = re.compile(r"^\s*```")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(.+?)\s*-->\s*$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SHELL_FENCES = ("sh", "bash", "shell")
_SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>&1"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """One ``$`` line of a transcript and the output shown under it."""

    line: int
    text: str
    expected: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A ``console`` block: where it is, its commands, and why it is not run (or None)."""

    path: Path
    line: int
    not_run: str | None
    commands: list[Command]

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def documents() -> list[Path]:
    """README.md and every page of the documentation site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The console blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        info = lines[i].strip()[3:].strip()
        end = next((j for j in range(i + 1, len(lines)) if _FENCE.match(lines[j])), len(lines))
        if info == "console":
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            reason = m.group(1) if (m := _NOT_RUN.match(before)) else None
            found.append(Block(path=path, line=i + 1, not_run=reason,
                               commands=_commands(lines[i + 1:end], first_line=i + 2)))
        elif info in _SHELL_FENCES:
            body = [f"$ {line}" if line.strip() else line for line in lines[i + 1:end]]
            found.append(Block(path=path, line=i + 1, not_run=f"a {info} block: commands only",
                               commands=_commands(body, first_line=i + 2)))
        i = end + 1
    return found


def _commands(body: list[str], first_line: int) -> list[Command]:
    commands: list[Command] = []
    k = 0
    while k < len(body):
        text = body[k]
        if not text.startswith("$ "):
            if not commands:
                raise ValueError(f"line {first_line + k}: a console block starts with a `$ ` command")
            commands[-1].expected.append(text.rstrip())
            k += 1
            continue
        start = k
        cmd = text[2:]
        while cmd.endswith("\\") and k + 1 < len(body):
            k += 1
            cmd = cmd[:-1].rstrip() + " " + body[k].strip().removeprefix("$ ")
        commands.append(Command(line=first_line + start, text=cmd))
        k += 1
    return commands


def split(text: str) -> tuple[dict[str, str], list[str]]:
    """A plain command's environment assignments and its words (no comments)."""
    words = shlex.split(text, comments=True)
    env: dict[str, str] = {}
    while words and _ASSIGN.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def segments(text: str) -> list[list[str]]:
    """The simple commands of a shell line (split at pipes, ``&&``, ``;``, ``&``), each
    without its environment assignments."""
    words = shlex.split(text, comments=True, posix=True)
    parts: list[list[str]] = [[]]
    for word in words:
        if word in _SHELL_OPERATORS:
            parts.append([])
        else:
            parts[-1].append(word)
    out = []
    for part in parts:
        while part and _ASSIGN.match(part[0]):
            part.pop(0)
        if part:
            out.append(part)
    return out


def is_plain(text: str) -> bool:
    """True when the command has no shell operators (it can run without a shell)."""
    return not any(w in _SHELL_OPERATORS for w in shlex.split(text, comments=True))


def matches(expected: list[str], actual: str) -> bool:
    """Does the output match the shown lines, with the ``...`` wildcards?"""
    want = _trim(expected)
    got = _trim([line.rstrip() for line in actual.splitlines()])
    pattern = []
    for line in want:
        if line.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append("[^\n]*?".join(re.escape(part) for part in line.split("...")) + r"\n")
    return re.fullmatch("".join(pattern), "".join(g + "\n" for g in got)) is not None


def _trim(lines: list[str]) -> list[str]:
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return out
