"""NodeAffinity (upstream ``plugins/nodeaffinity``), split by concern:

- ``validation``: upstream's lazy parse errors of node selector terms, and their messages;
- ``selector``: terms evaluated on one node or, vectorised, on NodeTable rows;
- ``args``: ``NodeAffinityArgs`` (the scheduler-enforced ``addedAffinity``);
- ``plugin``: the plugin (PreFilter, Filter, PreScore, Score, NormalizeScore, hints).
"""

from kubesched.plugins.nodeaffinity.args import NodeAffinityArgs, parse_args
from kubesched.plugins.nodeaffinity.plugin import (
    ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity,
)

__all__ = ["ERR_REASON_CONFLICT", "ERR_REASON_ENFORCED", "ERR_REASON_POD", "NodeAffinity",
           "NodeAffinityArgs", "parse_args"]
