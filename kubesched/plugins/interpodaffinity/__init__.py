"""InterPodAffinity (upstream ``framework/plugins/interpodaffinity``): required pod
(anti-)affinity as a filter, preferred pod (anti-)affinity as a score.

``common`` matches affinity terms (with upstream's namespaceSelector semantics),
``filtering`` holds PreFilter/Filter, ``scoring`` PreScore/Score/NormalizeScore, ``args``
the plugin args, and ``plugin`` the plugin class that wires them together.
"""

from kubesched.plugins.interpodaffinity.args import InterPodAffinityArgs
from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity", "InterPodAffinityArgs"]
