"""``WatchConnection``: a watch response's events are its JSON lines, whatever the HTTP
chunks are (an event split across chunks, many events in one chunk, blank keep-alive lines,
a last line without its newline)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cluster.kube.client import WatchConnection


class FakeResponse:
    """Only what WatchConnection reads of urllib3's response."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.shut = False

    def stream(self, amt: Any = None, decode_content: bool = True) -> Iterator[bytes]:
        yield from self.chunks

    def shutdown(self) -> None:
        self.shut = True


EVENTS = [{"type": "ADDED", "object": {"metadata": {"name": f"p{i}", "resourceVersion": str(10 + i)},
                                        "spec": {"nodeName": "n1" if i % 2 else ""}}} for i in range(6)]


def payload(final_newline: bool) -> bytes:
    lines = [json.dumps(e).encode() for e in EVENTS]
    lines.insert(3, b"")  # a blank line between events
    text = b"\n".join(lines)
    return text + b"\n" if final_newline else text


@settings(max_examples=120, deadline=None)
@given(cuts=st.lists(st.integers(0, len(payload(True))), max_size=12), final_newline=st.booleans())
def test_events_are_the_lines_whatever_the_chunks(cuts: list[int], final_newline: bool) -> None:
    data = payload(final_newline)
    points = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in zip(points, points[1:])]
    resp = FakeResponse(chunks)
    assert list(WatchConnection(resp)) == EVENTS
    assert resp.shut


def test_all_events_in_one_chunk() -> None:
    resp = FakeResponse([payload(True)])
    assert list(WatchConnection(resp)) == EVENTS
