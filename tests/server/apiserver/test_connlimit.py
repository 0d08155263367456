"""The connection bound (kubesched.server.apiserver.http.connlimit): connections kept below
the file limit with room for serve's own files, and at the bound the connection idle longest
(no request in progress) closed to make room. The limits are worked by hand from the module's
constants: reserve = max(384, files / 3) + 64 accepted at once."""

from __future__ import annotations

import pytest

from kubesched.server.apiserver.http.connlimit import ConnectionLimit, connection_limit


class Conn:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def close_idle(self) -> None:
        self.log.append(f"shed {self.name}")

    def refuse(self) -> None:
        self.log.append(f"refused {self.name}")


@pytest.mark.parametrize("files,wanted,limit", [
    (1024, 11_600, 1024 - 384 - 64),  # 576
    (20_000, 11_600, 11_600),  # 20,000 - 6,666 - 64 = 13,270: what is wanted fits
    (12_000, 11_600, 12_000 - 4_000 - 64),  # 7,936
    (300, 11_600, 1),  # not even the reserve: one connection
])
def test_the_limit_leaves_room_for_serves_own_files(files: int, wanted: int, limit: int) -> None:
    assert connection_limit(files, wanted) == limit


def test_at_the_bound_the_connection_idle_longest_makes_room() -> None:
    log: list[str] = []
    lim = ConnectionLimit(3)
    a, b, c, d, e = (Conn(n, log) for n in "abcde")
    for conn in (a, b, c):
        lim.opened(conn)
    lim.busy(a)  # a request in progress: never shed
    lim.idle(b)  # b finished a request after c connected: c is now idle longest
    lim.opened(d)
    assert log == ["shed c"]
    lim.closed(c)
    lim.busy(b)
    lim.busy(d)
    lim.opened(e)  # every other connection is busy: the new one is refused
    assert log == ["shed c", "refused e"]
    lim.closed(e)
    assert (lim.open, lim.shed, lim.refused) == (3, 1, 1)
