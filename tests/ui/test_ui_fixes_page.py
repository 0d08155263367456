"""The pod page's "Every blocker" table and its "What would fix it?" section, in a real
browser (Debian's chromium), the JSON made up here in the shape ``/debug/explain`` serves
(``blockers``; ``?fixes=N``), as tests/ui/test_ui_page.py does for the decision tables."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.ui.test_ui_page import BASE, page, static_or  # noqa: F401 - page is a fixture

pytestmark = pytest.mark.slow

CPU = {"requested": "2", "allocatable": "4", "used": "3", "free": "1", "short": "1",
       "usedBy": [{"pod": "default/x", "requested": "3", "priority": 0}], "usedByCount": 1}
SPREAD = {"constraint": 0, "topologyKey": "zone", "maxSkew": 1, "domain": "a", "matchingInDomain": 2,
          "globalMin": 1, "selfMatch": 1, "skew": 2, "domains": 2, "neededDomains": ["b"]}
EXPLAIN = {
    "pod": "default/web", "time": 1790000000.0, "result": "Unschedulable", "chosen": None,
    "message": "0/2 nodes are available: 2 Insufficient cpu.",
    "filter": {"n1": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
               "n2": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]}},
    "blockers": {"pod": "default/web", "feasibleNodes": [], "blockedNodes": 2, "rejectionsBeyondUpstream": 1,
                 "byPlugin": {"NodeResourcesFit": 2, "PodTopologySpread": 1},
                 "nodes": {"n1": [{"plugin": "NodeResourcesFit", "stage": "Filter", "code": "Unschedulable",
                                   "reasons": ["Insufficient cpu"], "evidence": {"resources": {"cpu": CPU}}},
                                  {"plugin": "PodTopologySpread", "stage": "Filter", "code": "Unschedulable",
                                   "reasons": ["x"], "beyondUpstream": True, "evidence": {"constraints": [SPREAD]}}],
                           "n2": [{"plugin": "NodeResourcesFit", "stage": "Filter", "code": "Unschedulable",
                                   "reasons": ["Insufficient cpu"], "evidence": {"resources": {"cpu": CPU}}}]}},
}
FIXES = {"pod": "default/web", "candidatesChecked": 4, "fixes": [
    {"kind": "lower-request", "target": "pod", "patchType": "json", "node": "n2", "verified": True,
     "why": "requesting less cpu fits", "patch": [], "command": "kubectl patch pod web -n default --type=json -p '[]'"},
    {"kind": "move-pods", "target": "node/n1", "patchType": "delete", "node": "n1", "verified": True,
     "why": "moving default/x", "patch": ["pod/default/x"], "moves": {"default/x": "n3"}}]}


def test_pod_page_shows_every_blocker_and_the_fixes(page: Any) -> None:  # noqa: F811
    asked: list[dict[str, list[str]]] = []

    def answer(route: Any) -> None:
        url = urlparse(route.request.url)
        if static_or(route, url):
            return
        if url.path == "/ui/api/mode":
            route.fulfill(json={"readOnly": True, "scheduler": True, "profiles": ["default-scheduler"]})
        elif url.path == "/ui/api/pods/default/web":
            route.fulfill(json={"namespace": "default", "name": "web", "node": "", "status": "Pending",
                                "priority": 0, "schedulerName": "default-scheduler", "requests": {"cpu": 2000},
                                "nominatedNode": "", "why": "", "queue": "unschedulable"})
        elif url.path == "/debug/explain/default/web":
            query = parse_qs(url.query)
            asked.append(query)
            route.fulfill(json=FIXES if "fixes" in query else EXPLAIN)
        else:
            route.fulfill(status=204, body="")

    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route(f"{BASE}/**", answer)
    page.goto(f"{BASE}/#/pod/default/web")
    page.wait_for_selector("[data-testid=blockers-table] .r >> nth=2")
    rows = page.locator("[data-testid=blockers-table] .r")
    assert rows.locator("[data-col=plugin]").all_inner_texts() == ["NodeResourcesFit", "PodTopologySpread",
                                                                     "NodeResourcesFit"]
    assert rows.locator("[data-col=upstream]").all_inner_texts() == ["decides", "beyond", "decides"]
    evidence = rows.locator("[data-col=evidence]").all_inner_texts()
    assert evidence[0] == "cpu: asks 2, 1 free of 4 (used by default/x)"
    assert evidence[1] == "zone=a has 2 matching, min 1: skew 2 > maxSkew 1; may go to b"
    assert "1 beyond upstream's first rejection" in page.inner_text("[data-testid=blockers]")
    assert not any("fixes" in q for q in asked)  # the search runs only when asked for
    page.click("[data-testid=fixes-section] summary")
    page.wait_for_selector("[data-testid=fix] >> nth=1")
    assert any(q.get("fixes") == ["10"] for q in asked)
    fixes = page.locator("[data-testid=fix]").all_inner_texts()
    assert fixes[0].startswith("1. lower-request pod → lands on n2")
    assert "moved pods land on: default/x → n3" in fixes[1]
    assert errors == []
