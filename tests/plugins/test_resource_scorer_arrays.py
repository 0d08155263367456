"""Property: the array forms of LeastAllocated's and BalancedAllocation's scorers (with their
fast paths for nodes that all have every resource) give, node by node, exactly what the
per-node forms give (upstream ``least_allocated.go`` / ``balanced_allocation.go``, which
score one node at a time), including over-requested nodes and nodes lacking a resource."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.noderesources.balanced_allocation import BalancedScorer
from kubesched.plugins.noderesources.least_allocated import LeastAllocated

_node = st.tuples(st.integers(0, 64_000), st.integers(0, 2**36), st.integers(0, 110))  # cpu m, memory, pods


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_node, _node), min_size=1, max_size=12), st.integers(2, 3),
       st.lists(st.integers(1, 5), min_size=3, max_size=3), st.booleans())
def test_array_scores_equal_per_node_scores(nodes: list[tuple[tuple[int, int, int], tuple[int, int, int]]],
                                            n_res: int, weights: list[int], all_have: bool) -> None:
    # (requested, allocatable) per node; with all_have every allocatable is made positive,
    # which is the fast path's case
    req = [[r[k] for r, _ in nodes] for k in range(n_res)]
    alloc = [[(a[k] or 1) if all_have else a[k] for _, a in nodes] for k in range(n_res)]
    reqs = [np.array(c, np.int64) for c in req]
    allocs = [np.array(c, np.int64) for c in alloc]
    for scorer in (LeastAllocated(weights[:n_res]), BalancedScorer()):
        many = scorer.score_many(reqs, allocs).tolist()
        one = [scorer.score_one([c[i] for c in req], [c[i] for c in alloc]) for i in range(len(nodes))]
        assert many == one, type(scorer).__name__
