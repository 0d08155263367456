"""The always-allowed paths of ``kubesched run``'s endpoints match as upstream's path
authorizer does: the table of ``k8s.io/apiserver/pkg/authorization/path/path_test.go``
(``TestNewAuthorizer``), where "noOpinion" paths are the ones that still go to a
SubjectAccessReview. The delegation itself, through real processes:
test_run_endpoints_auth_e2e.py."""

from __future__ import annotations

import pytest

from kubesched.live.delegation import PathMatcher, TtlCache


@pytest.mark.parametrize(("patterns", "allowed", "no_opinion", "error"), [
    (["/foo*bar"], [], [], True),
    (["/foo**"], [], [], True),
    ([], [], ["/"], False),
    (["/"], ["/"], ["/foo", "//"], False),
    (["/foo"], ["/foo", "foo"], ["/", "", "/bar", "/foo/", "/fooooo", "//foo"], False),
    (["/foo/"], ["/foo/"], ["/", "", "/bar", "/foo", "/fooooo"], False),
    (["/foo/*"], ["/foo/", "/foo/bar/bla"], ["/", "", "/foo", "/bar", "/fooooo"], False),
    (["/foo", "/bar"], ["/foo", "/bar"], ["/", "", "/foo/", "/bar/", "/fooooo"], False),
    (["/foo*"], ["/foo", "/foooo"], ["/", "", "/fo", "/bar"], False),
    (["/*"], ["/", "", "/foo", "/foooo"], [], False),
], ids=["inner star", "double star", "empty", "slash", "foo", "foo slash", "foo slash star", "foo bar",
        "foo star", "star"])
def test_always_allow_paths(patterns: list[str], allowed: list[str], no_opinion: list[str], error: bool) -> None:
    if error:
        with pytest.raises(ValueError, match="only trailing"):
            PathMatcher(patterns)
        return
    matcher = PathMatcher(patterns)
    assert [p for p in allowed if not matcher.matches(p)] == []
    assert [p for p in no_opinion if matcher.matches(p)] == []


def test_cache_expires_and_stays_bounded() -> None:
    now = [0.0]
    cache: TtlCache[int] = TtlCache(10.0, size=2, clock=lambda: now[0])
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recently used
    cache.put("c", 3)  # over the size: b, the least recently used, goes
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    now[0] = 9.99
    assert cache.get("c") == 3
    now[0] = 10.0  # put at 0 with a 10 s ttl: gone at 10
    assert cache.get("c") is None
