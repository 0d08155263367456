"""Every console example in README.md and docs/ still does what it shows.

Run blocks are executed and their output compared (``...`` wildcards, see
``consoleblocks.py``); the ``kubesched`` commands of not-run blocks must be accepted by the
argument parser (and each ``make`` target shown must exist). The expected output is the documentation itself: a change of behaviour
makes this test fail until the page is brought up to date.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli.main import build_parser
from tests.docs import consoleblocks
from tests.docs.consoleblocks import ROOT, Block

_ALL = [b for doc in consoleblocks.documents() for b in consoleblocks.blocks(doc)]
_RUN = [b for b in _ALL if b.not_run is None]
_NOT_RUN = [b for b in _ALL if b.not_run is not None]
_MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
_ENTRY = "import sys; from kubesched.cli.main import main; sys.exit(main())"


def test_the_documents_have_console_blocks() -> None:
    assert _RUN and _NOT_RUN


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that looks like the repository root to the examples' paths but keeps
    what the commands write out of the tree."""
    work = tmp_path_factory.mktemp("docs-run")
    for name in ("examples", "deploy"):
        (work / name).symlink_to(ROOT / name)
    return work


def _run(text: str, cwd: Path) -> tuple[int, str]:
    assert consoleblocks.is_plain(text), f"`{text}`: a run block holds plain kubesched commands (mark the block not-run)"
    env_add, words = consoleblocks.split(text)
    assert words and words[0] == "kubesched", f"`{text}`: only kubesched commands run (mark the block not-run)"
    # as a user runs them: the suite's pinned release (tests/conftest.py) is not the user's default
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "KUBECONFIG", "KUBESCHED_KUBERNETES_VERSION")}
    env.update(env_add, COLUMNS="80", NO_COLOR="1", TERM="dumb")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env_add.get("PYTHONPATH"), str(ROOT)) if p)
    done = subprocess.run([sys.executable, "-c", _ENTRY, *words[1:]], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return done.returncode, done.stdout


@pytest.mark.parametrize("block", _RUN, ids=[b.id for b in _RUN])
def test_run_block_output_matches(block: Block, workdir: Path) -> None:
    for cmd in block.commands:
        code, out = _run(cmd.text, workdir)
        where = f"{block.path.relative_to(ROOT)}:{cmd.line}: `{cmd.text}`"
        shows_error = any("error" in line for line in cmd.expected)
        assert code == 0 or shows_error, f"{where} exited {code}:\n{out}"
        if not consoleblocks.matches(cmd.expected, out):
            diff = "\n".join(difflib.unified_diff(cmd.expected, out.rstrip().splitlines(), "documented",
                                                  "printed now", lineterm=""))
            pytest.fail(f"{where}: the output differs from the documentation\n{diff}")


def _refusals(block: Block) -> list[str]:
    """What is wrong with a not-run block: kubesched commands the parser refuses, make
    targets the Makefile does not have."""
    wrong = []
    for cmd in block.commands:
        where = f"{block.path.name}:{cmd.line}: `{cmd.text}`"
        for words in consoleblocks.segments(cmd.text):
            if words[0] == "make" and not all(re.search(rf"^{re.escape(t)}:", _MAKEFILE, re.M) for t in words[1:]):
                wrong.append(f"{where}: no such target in the Makefile")
            if words[0] != "kubesched":
                continue
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                try:
                    build_parser().parse_args(words[1:])
                except SystemExit as exc:
                    if exc.code != 0:
                        wrong.append(f"{where}: {err.getvalue().strip().splitlines()[-1]}")
    return wrong


@pytest.mark.parametrize("block", _NOT_RUN, ids=[b.id for b in _NOT_RUN])
def test_not_run_block_commands_parse(block: Block) -> None:
    assert _refusals(block) == []


def test_refusals_are_found(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("<!-- not-run: x -->\n```console\n$ kubesched serve --nodes three &\n$ make nonsense\n"
                    "$ kubesched simulate -f x.yaml --tie-break name | grep x\n```\n")
    (block,) = consoleblocks.blocks(page)
    wrong = _refusals(block)
    assert len(wrong) == 2, wrong
    assert "--nodes: invalid int value: 'three'" in wrong[0] and "no such target" in wrong[1]


@pytest.mark.parametrize(("expected", "actual", "ok"), [
    (["a", "b"], "a\nb\n", True),
    (["a", "b"], "a\nc\n", False),
    (["a", "...", "d"], "a\nb\nc\nd\n", True),
    (["a", "...", "d"], "a\nd\n", True),
    (["a", "...", "d"], "a\nb\n", False),
    (["took ...s on port ..."], "took 1.2s on port 4431   \n", True),
    (["took ...s"], "took 1.2\ns\n", False),
    ([], "", True),
    ([], "something\n", False),
], ids=["equal", "differs", "lines-wildcard", "lines-wildcard-empty", "lines-wildcard-tail", "inline",
        "inline-one-line-only", "empty", "empty-expected"])
def test_wildcards(expected: list[str], actual: str, ok: bool) -> None:
    """The rules of consoleblocks.py's docstring, by hand."""
    assert consoleblocks.matches(expected, actual) is ok


def test_blocks_and_markers_are_read(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("<!-- not-run: needs a cluster -->\n```console\n$ kubesched serve \\\n  --nodes 3\nout\n```\n"
                    "```console\n$ kubesched --version\nkubesched ...\n$ kubesched x\n```\n")
    first, second = consoleblocks.blocks(page)
    assert first.not_run == "needs a cluster" and first.commands[0].text == "kubesched serve --nodes 3"
    assert first.commands[0].expected == ["out"]
    assert second.not_run is None and [c.text for c in second.commands] == ["kubesched --version", "kubesched x"]
    assert second.commands[0].expected == ["kubesched ..."] and second.commands[1].expected == []
