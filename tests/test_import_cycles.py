"""No import cycle between kubesched's modules, except through type-only imports.

The rule: a module may import another only if that one does not, directly or through
others, import it back at run time. Imports under ``TYPE_CHECKING`` do not count (they
never run); imports inside functions do (they run when the function is called). A cycle is a
strongly connected component of more than one module in the import graph, which grimp
builds from the source (the same graph ``lint-imports`` checks its contracts on); the
expected set of such components is empty.
"""

from __future__ import annotations

import grimp


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node of ``graph`` (Tarjan's
    algorithm, iterative so that a deep import chain cannot exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_search_finds_cycles() -> None:
    """Hand-made graphs: a -> b -> c -> a is one cycle, d -> e -> d another, f alone none;
    a -> b -> c without the edge back has none."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    built = grimp.build_graph("kubesched", exclude_type_checking_imports=True, cache_dir=None)
    graph = {m: set(built.find_modules_directly_imported_by(m)) & built.modules for m in built.modules}
    assert _cycles(graph) == []
