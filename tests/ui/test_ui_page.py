"""The page itself in a real browser (Debian's chromium), its server answered by the test
(page.route): the page's own files come from the package, the JSON is made up here.

* virtualised tables at 5,000 nodes: only the rows in view exist in the DOM and the page
  asks for one window of rows at a time (tests/ui/test_views.py checks the server side
  at that size, without starting a cluster of that size);
* the pod page renders explain documents defensively: keys it does not know are ignored,
  ``not evaluated`` is shown as such (never as ``ok``), and a score may be a number
  (weighted) or an object with raw, normalised and weighted values."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
BASE = "http://kubesched.test"
STATIC = resources.files("kubesched.ui") / "static"
NODES = 5000

pytestmark = pytest.mark.slow


def node_row(i: int) -> dict[str, Any]:
    return {"name": f"node-{i:05d}", "unschedulable": False, "pods": 0, "taints": [], "conditions": [],
            "resources": [{"name": "cpu", "allocatable": 4000, "requested": 0}]}


@pytest.fixture
def page() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser.new_page(viewport={"width": 1300, "height": 800})
        finally:
            browser.close()


def static_or(route: Any, url: Any) -> bool:
    """Answer the page's own files; False for anything else."""
    if url.path == "/":
        route.fulfill(body=(STATIC / "index.html").read_text(), content_type="text/html")
    elif url.path.startswith("/ui/static/"):
        route.fulfill(body=(STATIC / url.path.rsplit("/", 1)[1]).read_text(), content_type="text/javascript"
                      if url.path.endswith(".js") else "text/css")
    else:
        return False
    return True


def test_5000_nodes_render_only_the_rows_in_view(page: Any) -> None:
    limits: list[int] = []

    def answer(route: Any) -> None:
        url = urlparse(route.request.url)
        if static_or(route, url):
            pass
        elif url.path == "/ui/api/mode":
            route.fulfill(json={"readOnly": True, "scheduler": True, "profiles": ["default-scheduler"]})
        elif url.path == "/ui/api/nodes":
            q = parse_qs(url.query)
            offset, limit = int(q["offset"][0]), int(q["limit"][0])
            limits.append(limit)
            rows = [node_row(i) for i in range(offset + 1, min(NODES, offset + limit) + 1)]
            route.fulfill(body=json.dumps({"total": NODES, "offset": offset, "all": NODES, "items": rows}),
                          content_type="application/json")
        else:  # /metrics, the change stream: nothing to say (204 ends an EventSource)
            route.fulfill(status=204, body="")

    page.route(f"{BASE}/**", answer)
    page.goto(f"{BASE}/#/nodes")
    table = page.locator("[data-testid=nodes-table]")
    page.wait_for_selector("[data-testid=nodes-table] .r [data-col=node]:text-is('node-00001')")
    assert table.get_attribute("data-total") == str(NODES)
    in_dom = page.locator("[data-testid=nodes-table] .r").count()
    # a 62vh table of 28px rows shows ~18 rows; with 10 rows of margin each side, well under 100
    assert 0 < in_dom < 100
    # the body is as tall as all 5,000 rows, so the scroll bar is the real one
    assert page.eval_on_selector("[data-testid=nodes-table] .body", "e => e.style.height") == f"{NODES * 28}px"
    page.eval_on_selector("[data-testid=nodes-table]", "e => e.scrollTop = e.scrollHeight")
    page.wait_for_selector("[data-testid=nodes-table] .r [data-col=node]:text-is('node-05000')")
    assert page.locator("[data-testid=nodes-table] .r").count() < 100
    assert page.locator("[data-testid=nodes-table] .r [data-col=node]:text-is('node-00001')").count() == 0
    assert limits and max(limits) < 100  # never the whole list


EXPLAIN = {
    "time": 1790000000.0, "result": "Scheduled", "chosen": "n2", "message": None,
    "filter": {
        "n1": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
               "reasons": ["node(s) had untolerated taint {dedicated: gpu}"]},
        "n2": "ok",
        "n3": {"verdict": "not evaluated", "why": "sampling stopped (percentageOfNodesToScore)"},
        "n4": "not evaluated",
    },
    "scores": {"n2": {"NodeResourcesFit": {"raw": 81, "normalized": 81, "weighted": 81},
                      "TaintToleration": 300}},
    "totals": {"n2": 381},
    "someFieldAddedLater": {"nested": [1, 2, 3]},
}


def test_the_pod_page_renders_explain_documents_defensively(page: Any) -> None:
    def answer(route: Any) -> None:
        url = urlparse(route.request.url)
        if static_or(route, url):
            return
        if url.path == "/ui/api/mode":
            route.fulfill(json={"readOnly": True, "scheduler": True, "profiles": ["default-scheduler"]})
        elif url.path == "/ui/api/pods/default/web":
            route.fulfill(json={"namespace": "default", "name": "web", "node": "n2", "status": "Running",
                                "priority": 0, "schedulerName": "default-scheduler", "requests": {"cpu": 1000},
                                "nominatedNode": "", "why": "", "queue": None})
        elif url.path == "/debug/explain/default/web":
            route.fulfill(json=EXPLAIN)
        else:
            route.fulfill(status=204, body="")

    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route(f"{BASE}/**", answer)
    page.goto(f"{BASE}/#/pod/default/web")
    page.wait_for_selector("[data-testid=filter-table] .r >> nth=3")
    rows = page.locator("[data-testid=filter-table] .r")
    assert rows.locator("[data-col=node]").all_inner_texts() == ["n1", "n2 ★", "n3", "n4"]
    assert rows.locator("[data-col=verdict]").all_inner_texts() == [
        "TaintToleration (UnschedulableAndUnresolvable)", "ok", "not evaluated", "not evaluated"]
    assert rows.locator("[data-col=reasons]").all_inner_texts() == [
        "node(s) had untolerated taint {dedicated: gpu}", "", "sampling stopped (percentageOfNodesToScore)", ""]
    assert page.locator("[data-testid=filter-table] .r .ne").count() == 2  # drawn as not evaluated, not ok
    assert "Filter: 4 node(s) — 1 ok, 1 rejected, 2 not evaluated" in page.inner_text("main")
    score = page.locator("[data-testid=score-table] .r")
    assert score.locator("[data-col=NodeResourcesFit]").inner_text() == "81 raw 81 · norm 81"
    assert score.locator("[data-col=TaintToleration]").inner_text() == "300"
    assert score.locator("[data-col=total]").inner_text() == "381"
    assert errors == []
