"""The bound every YAML reader applies before building a value (kubesched.api.yamlshape).

Expected refusals follow go-yaml, which kubectl and kube-apiserver read YAML with: an alias
may not name a node that contains it (v2 ``decode.go``: "anchor '%s' value contains
itself"), nor expand a document without end (``allowedAliasRatio``: "document contains
excessive aliasing"). Node counts below are worked by hand: ``[x, x, x]`` is 4 values (the
list and three scalars); an alias adds the values of the node its anchor names.
"""

from __future__ import annotations

import pytest

from kubesched.api.yamlshape import EXCESSIVE_ALIASING, SELF_REFERENCE, ShapeError, check_shape, nested_too_deeply


@pytest.mark.parametrize("text,message,where", [
    ("&a [*a]", SELF_REFERENCE, (1, 1, 5)),
    ("a: &x {b: [1, *x]}", SELF_REFERENCE, (1, 1, 15)),
    ("---\nok: 1\n---\nb: &b {c: *b}\n", SELF_REFERENCE, (2, 4, 11)),
    ("[[[x]]]", nested_too_deeply(2), (1, 1, 3)),
    # the map 1, key a 1, its list 4, key b 1, its list 1 + 3 x 4: 20 > 19 at the third
    # alias (line 2, column 13)
    ("a: &a [x, x, x]\nb: [*a, *a, *a]\n", EXCESSIVE_ALIASING, (1, 2, 13)),
], ids=["seven-bytes", "nested-self", "second-document", "depth", "expansion"])
def test_refused_before_any_value_is_built(text: str, message: str, where: tuple[int, int, int]) -> None:
    with pytest.raises(ShapeError) as info:
        check_shape(text, max_depth=2 if message.startswith("exceeded") else 100, max_nodes=19)
    assert info.value.message == message
    assert (info.value.document, info.value.line, info.value.column) == where


@pytest.mark.parametrize("text", [
    "a: &a [x, x, x]\nb: [*a, *a]\n",  # 1 + 1 + 4 + 1 + (1 + 2 x 4) = 16 values: within 19
    "- &a [&b 1, *b]\n- *a\n",  # an alias to a closed sibling, not to an open parent
    "[[x]]",
])
def test_within_bounds(text: str) -> None:
    check_shape(text, max_depth=2, max_nodes=19)


def test_the_anchor_of_a_self_reference_is_named() -> None:
    with pytest.raises(ShapeError) as info:
        check_shape("top: &node {child: *node}", max_depth=10, max_nodes=10)
    assert info.value.anchor == "node"
