"""The explain score tables for people: columns only for plugins that scored something, node
names never cut at 80 columns. The attempt below is written by hand."""

from __future__ import annotations

import io

from rich.console import Console

from kubesched.cli.render import print_attempt


def _render(doc: dict[str, object]) -> list[str]:
    buf = io.StringIO()
    print_attempt(Console(file=buf, width=80, soft_wrap=False, highlight=False, color_system=None), 0, doc)
    return [line.rstrip() for line in buf.getvalue().splitlines()]


def test_zero_plugins_are_named_once_and_node_names_are_whole() -> None:
    nodes = ["a-rather-long-node-name-01", "a-rather-long-node-name-02"]
    plugins = ["DynamicResources", "ImageLocality", "InterPodAffinity", "NodeResourcesBalancedAllocation",
               "NodeResourcesFit", "TaintToleration", "VolumeBinding"]
    # DynamicResources and VolumeBinding give 0 everywhere; ImageLocality gives 0 after
    # weighting on node 02 but 2 raw on node 01, so it keeps its column
    raw = {nodes[0]: {"DynamicResources": 0, "ImageLocality": 2, "InterPodAffinity": 0,
                      "NodeResourcesBalancedAllocation": 93, "NodeResourcesFit": 31, "TaintToleration": 0,
                      "VolumeBinding": 0},
           nodes[1]: {"DynamicResources": 0, "ImageLocality": 0, "InterPodAffinity": -100,
                      "NodeResourcesBalancedAllocation": 87, "NodeResourcesFit": 62, "TaintToleration": 0,
                      "VolumeBinding": 0}}
    weights = {"DynamicResources": 2, "ImageLocality": 1, "InterPodAffinity": 2,
               "NodeResourcesBalancedAllocation": 1, "NodeResourcesFit": 1, "TaintToleration": 3,
               "VolumeBinding": 1}
    norm = {nodes[0]: dict(raw[nodes[0]], InterPodAffinity=100, TaintToleration=100),
            nodes[1]: dict(raw[nodes[1]], InterPodAffinity=0, TaintToleration=100)}
    scores = {n: {p: norm[n][p] * weights[p] for p in plugins} for n in nodes}
    totals = {n: sum(scores[n].values()) for n in nodes}
    assert totals == {nodes[0]: 2 + 200 + 93 + 31 + 300, nodes[1]: 87 + 62 + 300}
    doc = {"result": "Scheduled", "chosen": nodes[0], "time": 0, "filter": {n: "ok" for n in nodes},
           "scores": scores, "totals": totals, "rawScores": raw, "normalizedScores": norm, "weights": weights}
    lines = _render(doc)
    text = "\n".join(lines)
    assert all(len(line) <= 80 for line in lines)
    assert f"│ {nodes[0]} * │" in text and f"│ {nodes[1]}   │" in text
    assert "0 on every node: DynamicResources, VolumeBinding" in lines
    first = lines.index("Score (weighted, after normalisation)")
    header = [line for line in lines[first:] if line.startswith("┃")]
    assert header and not any("DRA" in h or "Volume" in h for h in header)
    assert header[0].count("┃") - 1 == 7  # NODE, the 5 plugins that scored, TOTAL
