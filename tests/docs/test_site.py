"""The documentation site builds with ``mkdocs build --strict``: a broken link or anchor, a
page under docs/ left out of ``nav``, a missing include or a docstring the API reference
cannot render fails the suite (mkdocs.yml's ``validation`` makes each of those a warning,
and ``--strict`` makes warnings fatal). The README's relative links must name files that
exist (GitHub renders it; mkdocs does not see it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "plugin-api" / "index.html").read_text().count("FilterPlugin") > 0


def test_readme_links_name_files_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = [m.group(1) for m in re.finditer(r"\]\(([^)\s]+)\)", text)]
    local = [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]
    assert local, "the README links into docs/"
    missing = [link for link in local if link and not (ROOT / link).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
