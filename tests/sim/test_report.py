"""sim/report.py: the HTML, JSON and CSV files a workbench report writes."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from kubesched.sim.report import Report


def _sample() -> Report:
    r = Report("least <vs> most")
    r.heading("Summary")
    r.text("first paragraph\n\nsecond & last")
    r.table("per configuration", ["config", "nodes used", "mean cpu"], [["least", 4, 0.5], ["most", 2, None]])
    r.line_plot("pending over time", {"least": [(0, 3), (1.5, 0)], "most": [(0, 3), (2, 1)]},
                "time (s)", "pods", step=True)
    r.bar_plot("nodes used", ["least", "most"], {"nodes": [4, 2]}, "configuration", "nodes")
    r.histogram("cpu utilisation", {"least": [0.25, 0.5], "most": [1.0]}, "fraction", range=(0, 1))
    return r


def test_write_layout_and_contents(tmp_path: Path) -> None:
    path = _sample().write(tmp_path / "out")
    assert path == tmp_path / "out" / "report.html"
    page = path.read_text()
    # self-contained: inline SVGs, no external references
    assert page.count("<svg") == 3
    assert "<script" not in page and "<link" not in page and "src=" not in page
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and all(h.startswith("#") or h.startswith("series/") for h in hrefs)
    assert "least &lt;vs&gt; most" in page and "second &amp; last" in page
    assert '<td class="num">4</td>' in page
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["title"] == "least <vs> most"
    kinds = [s["kind"] for s in data["sections"]]
    assert kinds == ["heading", "text", "table", "line", "bar", "histogram"]
    assert data["sections"][2]["rows"] == [["least", 4, 0.5], ["most", 2, None]]
    assert data["sections"][3]["series"]["least"] == [[0.0, 3.0], [1.5, 0.0]]
    hist = data["sections"][5]
    assert hist["bins"][0] == 0.0 and hist["bins"][-1] == 1.0 and len(hist["bins"]) == 11
    with open(tmp_path / "out" / hist["csv"]) as f:
        assert list(csv.reader(f)) == [["series", "value"], ["least", "0.25"], ["least", "0.5"], ["most", "1.0"]]
    with open(tmp_path / "out" / "series" / "02-nodes-used.csv") as f:
        assert list(csv.reader(f)) == [["category", "series", "value"], ["least", "nodes", "4.0"],
                                       ["most", "nodes", "2.0"]]
    assert (tmp_path / "out" / "series" / "01-pending-over-time.csv").read_text().splitlines()[1:] == [
        "least,0.0,3.0", "least,1.5,0.0", "most,0.0,3.0", "most,2.0,1.0"]


def test_plots_have_unique_ids_and_output_is_deterministic(tmp_path: Path) -> None:
    a = _sample().write(tmp_path / "a").read_text()
    b = _sample().write(tmp_path / "b").read_text()
    assert a == b
    ids = re.findall(r'\bid="([^"]+)"', a)
    assert len(ids) == len(set(ids))


def test_bad_shapes_are_refused() -> None:
    r = Report("t")
    with pytest.raises(ValueError, match="row 1 has 1 cells, expected 2"):
        r.table("x", ["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="series 's' has 1 values for 2 categories"):
        r.bar_plot("y", ["a", "b"], {"s": [1]}, "x", "y")
