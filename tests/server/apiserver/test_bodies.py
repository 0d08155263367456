"""Request bodies decode to what Go's decoders give kube-apiserver, or to a 400.

Expected values are Go's: ``encoding/json`` has no NaN/Infinity and refuses a float64
overflow (``strconv.ParseFloat``: value out of range); apimachinery's
``UnmarshalCaseSensitivePreserveInts`` keeps int64 integers and turns larger ones into
float64; an unpaired surrogate escape decodes to U+FFFD; sigs.k8s.io/yaml keeps
timestamps as strings and stringifies non-string keys; go-yaml refuses excessive
aliasing. Our depth bound (100) is documented in ``decoding.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.server.apiserver import decoding as bodies
from kubesched.server.apiserver.errors import ApiError


def bad(raw: bytes, content_type: str = "application/json") -> str:
    with pytest.raises(ApiError) as info:
        bodies.decode_body(raw, content_type)
    assert info.value.code == 400 and info.value.reason == "BadRequest"
    return info.value.message


@pytest.mark.parametrize("raw,expected", [
    (b'{"a": 9223372036854775807}', {"a": 9223372036854775807}),
    (b'{"a": -9223372036854775808}', {"a": -9223372036854775808}),
    (b'{"a": 9223372036854775808}', {"a": 9.223372036854775808e18}),
    (b'{"a": 1e308}', {"a": 1e308}),
    (b'{"a": 1.5, "b": [true, null]}', {"a": 1.5, "b": [True, None]}),
    (b'{"a": "\\ud800x", "\\udc00": "\\ud83d\\ude00"}', {"a": "\ufffdx", "\ufffd": "\U0001F600"}),
], ids=["int64-max", "int64-min", "beyond-int64-is-float", "large-float", "plain", "surrogates"])
def test_json_numbers_and_strings_as_go(raw: bytes, expected: Any) -> None:
    assert bodies.decode_body(raw, "application/json") == expected


@pytest.mark.parametrize("raw,words", [
    (b'{"a": NaN}', "invalid character 'N'"),
    (b'{"a": -Infinity}', "invalid character '-'"),
    (b'{"a": Infinity}', "invalid character 'I'"),
    (b'{"a": 1e999}', "value out of range"),
    (b"[" + b"9" * 400 + b"]", "value out of range"),
    (b"[" + b"9" * 5000 + b"]", "value out of range"),
    (b'{"a": ' + b"[" * 101 + b"]" * 101 + b"}", "exceeded max depth of 100"),
    (b"[" * 100_000, "exceeded max depth of 100"),
])
def test_json_that_go_refuses_is_400(raw: bytes, words: str) -> None:
    assert words in bad(raw)


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert bodies.json_depth(b'{"a": "' + b"[" * 500 + b'"}') == 1
    assert bodies.json_depth(b'{"a": "\\"' + b"[" * 150 + b'"}') == 1  # an escaped quote does not end it
    assert bodies.json_depth(b"[" * 100 + b"]" * 100) == 0  # no more brackets than the bound: no scan
    assert bodies.json_depth(b"[[]]" * 60) == 2
    assert bodies.json_depth(b"[" * 150 + b"]" * 150) == 150
    deep_ok = b'{"s": "' + b"{" * 300 + b'", "x": ' + b"[" * 99 + b"]" * 99 + b"}"
    assert bodies.decode_body(deep_ok, "application/json")["s"] == "{" * 300


def test_yaml_as_sigs_k8s_io_yaml() -> None:
    doc = bodies.decode_body(b"when: 2020-01-01\n1: one\ntrue: yes\nnull: x\nf: 1.5\nbig: 99999999999999999999\n",
                             "application/yaml")
    assert doc == {"when": "2020-01-01", "1": "one", "true": True, "null": "x", "f": 1.5, "big": 1e20}


@pytest.mark.parametrize("raw,words", [
    (b"a: .inf\n", "unsupported value: inf"),
    (b"a: .nan\n", "unsupported value: nan"),
    (b"a: !!binary aGVsbG8=\n", "unsupported value of type bytes"),
    (b"a: !!set {x, y}\n", "unsupported value of type set"),
    (b"a: " + b"[" * 101 + b"]" * 101 + b"\n", "exceeded max depth of 100"),
    (b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n".encode() for p, c in zip("abcdef", "bcdefg")),
     "excessive aliasing"),
    (b"a: [unclosed\n", "error converting YAML to JSON"),
    (b"? [a, b]\n: c\n", "unsupported map key list"),
], ids=["inf", "nan", "binary", "set", "deep", "billion-laughs", "syntax", "list-key"])
def test_yaml_that_json_cannot_hold_is_400(raw: bytes, words: str) -> None:
    assert words in bad(raw, "application/yaml")


def test_yaml_aliases_within_bounds_expand_to_independent_copies() -> None:
    doc = bodies.decode_body(b"a: &x {k: [1, 2]}\nb: *x\n", "application/yaml")
    assert doc == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}
    doc["a"]["k"].append(3)
    assert doc["b"]["k"] == [1, 2]
