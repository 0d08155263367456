"""The store's JSON text (kubesched/api/jsontext.py): orjson where it agrees with
the standard library, the standard library elsewhere. The reference for every value is
``json`` itself: integers beyond 64 bits (which orjson would read as floats or refuse to
write), lone surrogates and non-string keys must come out exactly as ``json`` gives them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings, strategies as st

from kubesched.server.store import Store, dumpb, dumps, loads


def reference_text(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


BIG = [2**64, 2**64 - 1, -(2**63) - 1, -(2**63), 10**30, -(10**40), 123456789012345678901234567890]


def test_integers_beyond_64_bits_are_kept_exactly() -> None:
    for n in BIG:
        doc = {"spec": {"n": n, "list": [n, 1]}}
        text = dumps(doc)
        assert text == reference_text(doc)
        assert dumpb(doc) == text.encode()
        back = loads(text)
        assert back == doc and type(back["spec"]["n"]) is int, (n, back)
        assert loads(text.encode()) == doc


def test_what_orjson_refuses_is_answered_as_json_answers_it() -> None:
    assert loads('"\\ud800"') == json.loads('"\\ud800"')  # a lone surrogate escape
    assert loads('{"a":1e400}') == {"a": float("inf")}  # as json reads it (bodies refuse it before)
    assert dumps({1: "a"}) == '{"1":"a"}'  # a non-string key, written as json writes it
    assert dumps({"s": "\ud800"}) == reference_text({"s": "\ud800"})


def test_a_long_digit_run_inside_a_string_only_takes_the_slow_path() -> None:
    doc = {"name": "x" + "9" * 25, "n": 5}
    assert loads(dumps(doc)) == doc


def test_a_text_with_a_raw_lone_surrogate_and_a_big_integer_is_read_as_json_reads_it() -> None:
    # the digit-run test looks at a str's UTF-8 bytes; a lone surrogate has none, so it is
    # given its 3 bytes ("surrogatepass"), and the big integer still takes the slow path
    text = '{"a":"\ud800","n":123456789012345678901234567,"b":"\u0663\u0663"}'  # raw characters
    assert "\ud800" in text  # the raw character, not an escape
    got = loads(text)
    assert got == json.loads(text) and got["n"] == 123456789012345678901234567 and type(got["n"]) is int


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_same_values_as_the_standard_library(value: Any) -> None:
    text = dumps(value)
    assert json.loads(text) == json.loads(reference_text(value))
    assert loads(text) == json.loads(text)
    assert repr(loads(text)) == repr(json.loads(text))  # same types (int stays int, float stays float)


def test_a_stored_big_integer_reads_back_and_watches_exactly(tmp_path: Path) -> None:
    s = Store(tmp_path / "store.db")
    try:
        w = s.watch(["example.com/widgets"], 0)
        s.create("example.com/widgets", "default", "w", {"metadata": {"name": "w"}, "spec": {"size": 2**70}})
        assert s.get("example.com/widgets", "default", "w")["spec"]["size"] == 2**70
        assert s.list("example.com/widgets").items[0]["spec"]["size"] == 2**70
        events, _ = w.get(timeout=5)
        assert [e.obj()["spec"]["size"] for e in events] == [2**70]
    finally:
        s.close()
