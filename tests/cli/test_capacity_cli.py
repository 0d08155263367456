"""``kubesched capacity`` and ``kubesched replay`` through the real command: tables, JSON,
report files, one-line errors with exit status 2. The numbers are the hand-computed ones of
``tests/sim/test_capacity.py`` and ``tests/sim/test_replay.py`` (the same clusters)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli.main import main
from tests.sim.test_capacity import DRAIN_CLUSTER, FIT_CLUSTER, PLAN_CLUSTER, TEMPLATE
from tests.sim.test_replay import CLUSTER, TRACE, jsonl

REPO = Path(__file__).resolve().parents[2]
WHATIF = REPO / "examples" / "whatif"


def files(tmp_path: Path, **texts: str) -> dict[str, str]:
    out = {}
    for name, text in texts.items():
        path = tmp_path / name.replace("_", ".")
        path.write_text(text)
        out[name] = str(path)
    return out


def test_fit_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = files(tmp_path, cluster_yaml=FIT_CLUSTER, web_yaml=TEMPLATE)
    args = ["capacity", "fit", "-f", f["cluster_yaml"], "--pod", f["web_yaml"]]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "7 more copies of default/web fit" in out and "Why copy 8 does not fit" in out
    assert main(args + ["-o", "json", "--max", "2"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["fits"], doc["stoppedBy"], "refusal" in doc) == (2, "max", False)


def test_plan_json_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = files(tmp_path, cluster_yaml=PLAN_CLUSTER,
              shapes_yaml="shapes:\n- {name: small, cpu: '4', memory: 16Gi, price: 1}\n"
                          "- {name: large, cpu: '16', memory: 64Gi, price: 5}\n")
    assert main(["capacity", "plan", "-f", f["cluster_yaml"], "--catalogue", f["shapes_yaml"], "--objective",
                 "price", "-o", "json", "--output-dir", str(tmp_path / "r")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["nodesAdded"], doc["cost"], doc["shapes"], doc["verified"]) == (4, 4.0, {"small": 4}, True)
    assert [u["pod"] for u in doc["unplaceable"]] == ["default/huge"]
    html = (tmp_path / "r" / "report.html").read_text()
    assert "<svg" in html and "capacity plan (price)" in html
    bars = (tmp_path / "r" / "series" / "01-nodes-to-add-per-shape.csv").read_text().splitlines()
    assert bars == ["category,series,value", "small,nodes,4.0"]


def test_drain_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = files(tmp_path, cluster_yaml=DRAIN_CLUSTER)
    assert main(["capacity", "drain", "-f", f["cluster_yaml"], "--tie-break", "name"]) == 0
    out = capsys.readouterr().out
    assert "drainable: n1" in out and "PodDisruptionBudget default/db allows 0" in out


def test_replay_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = files(tmp_path, cluster_yaml=CLUSTER, trace_jsonl=jsonl(TRACE))
    out_dir = tmp_path / "out"
    assert main(["replay", "-f", f["cluster_yaml"], "--trace", f["trace_jsonl"], "--output-dir", str(out_dir)]) == 0
    assert "latency max (virtual s)" in capsys.readouterr().out
    with open(out_dir / "pods.csv", newline="") as fh:
        pods = {r["pod"]: r for r in csv.DictReader(fh)}
    assert {p: r["latency"] for p, r in pods.items()} == {
        "default/a": "0.0", "default/b": "9.0", "default/c": "12.0", "default/d": ""}
    series = (out_dir / "series.csv").read_text().splitlines()
    assert series[0] == "time,pending,running,cpu,memory,fragmentation" and len(series) == 1 + 8
    doc = json.loads((out_dir / "replay.json").read_text())
    assert doc["summary"]["latencyP50"] == 9.0
    assert "<svg" in (out_dir / "report.html").read_text()


@pytest.mark.parametrize(("argv", "texts", "message"), [
    (["replay", "--trace", "{t_jsonl}"], {"t_jsonl": '{"time": 0, "memory": "lots"}\n'},
     "{t_jsonl}: line 1: memory: quantities must match the regular expression"),
    (["capacity", "plan", "--catalogue", "{s_yaml}", "--objective", "price"],
     {"s_yaml": "shapes:\n- {name: a, cpu: '4', memory: 16Gi}\n"},
     "{s_yaml}: shape a: price: is required by --objective price"),
    (["capacity", "drain", "--nodes", "nope"], {}, "--nodes: node 'nope' not found in the manifests"),
    (["capacity", "fit", "--pod", "{p_yaml}", "--max", "-1"], {"p_yaml": TEMPLATE}, "--max: must be >= 0, got -1"),
    (["capacity", "fit", "--pod", "{missing}"], {}, "{missing}: No such file or directory"),
    (["replay", "--trace", "{t_jsonl}", "--output-dir", "{t_jsonl}"], {"t_jsonl": '{"time": 0}\n'},
     "replay --output-dir {t_jsonl}: File exists"),
    (["capacity", "drain", "--output-dir", "{cluster_yaml}/r"], {},
     "capacity drain --output-dir {cluster_yaml}/r: Not a directory"),
], ids=["trace", "price", "drain-node", "max", "missing-template", "replay-output", "drain-output"])
def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                             texts: dict[str, str], message: str) -> None:
    f = files(tmp_path, cluster_yaml=CLUSTER, **texts)
    f["missing"] = str(tmp_path / "missing.yaml")
    assert main([*(a.format(**f) for a in argv), "-f", f["cluster_yaml"]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {message.format(**f)}") and err.count("\n") == 1


def screenshot_dir() -> Path:
    d = Path(os.environ.get("KUBESCHED_ARTIFACTS") or REPO / "build" / "screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.mark.slow
def test_replay_report_opens_in_headless_chromium_and_plots_render(tmp_path: Path) -> None:
    """The example trace (examples/whatif) through the installed command; the report opens
    offline in Chromium with its four plots drawn (screenshot kept as a CI artefact)."""
    res = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "replay", "-f", str(WHATIF / "cluster.yaml"),
                          "--trace", str(WHATIF / "trace.jsonl"), "--output-dir", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert res.returncode == 0, res.stderr
    page_path = tmp_path / "r" / "report.html"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_path.as_uri())
            assert page.title() == "replay: trace.jsonl"
            svgs = page.query_selector_all("figure svg")
            assert len(svgs) == 4  # pending/running, utilisation, fragmentation, latency histogram
            for svg in svgs:
                box = svg.bounding_box()
                assert box is not None and box["width"] > 100 and box["height"] > 100
                assert svg.evaluate("e => e.querySelectorAll('path, use').length") > 20
            assert requests == [page_path.as_uri()]  # self-contained
            page.screenshot(path=str(screenshot_dir() / "replay-report.png"), full_page=True)
        finally:
            browser.close()


def test_progress_on_stderr_only_when_asked(tmp_path: Path) -> None:
    f = files(tmp_path, cluster_yaml=CLUSTER, trace_jsonl=jsonl(TRACE))

    def kubesched(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kubesched.cli.main", *args], cwd=REPO, capture_output=True,
                              text=True, timeout=120)

    args = ["replay", "-f", f["cluster_yaml"], "--trace", f["trace_jsonl"], "-o", "json"]
    plain, shown = kubesched(*args), kubesched(*args, "--progress")
    assert plain.returncode == shown.returncode == 0, shown.stderr
    assert plain.stderr == ""
    assert "replay t=16s" in shown.stderr and "4/4" in shown.stderr  # 4 pods arrived by t=16
    assert json.loads(shown.stdout)["pods"] == json.loads(plain.stdout)["pods"]
