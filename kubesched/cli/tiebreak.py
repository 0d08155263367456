"""``--tie-break random|name`` and ``--seed`` for the schedulers that run against an API
server (``serve``, ``run``), as ``simulate`` has them.

Why: where upstream draws lots between nodes of equal score, two schedulers (``serve``'s
own and a shadow beside it, or a live run and its replay) agree only if both break ties
the same way. ``--tie-break name`` picks the lowest node name; ``--tie-break random`` (the
default) is upstream's reservoir sampling, seeded by ``--seed`` (without it: a fresh seed
each start, as upstream).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tie-break", choices=("random", "name"), default="random",
                   help="equal scores: seeded random choice (upstream, default) or the lowest node name")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="seed of the random tie-break (default: a fresh one at each start)")


def options(args: argparse.Namespace) -> dict[str, Any]:
    """The LiveOptions fields of :func:`add_flags`' flags."""
    return {"seed": args.seed, "tie_break_by_name": args.tie_break == "name"}


def argv(args: argparse.Namespace) -> list[str]:
    """The same flags, for a child process that parses them with :func:`add_flags`."""
    out = ["--tie-break", args.tie_break]
    return out + (["--seed", str(args.seed)] if args.seed is not None else [])
