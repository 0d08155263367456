"""NodeResourcesFit and NodeResourcesBalancedAllocation (upstream ``plugins/noderesources``).

    args / validation        pluginConfig args: decoding, v1 defaults, upstream validation
    fitting                  does the pod's request fit a node (Filter, queueing hints)
    resource_allocation      per-resource (allocatable, requested) inputs of the scorers
    least_allocated, most_allocated, requested_to_capacity_ratio
                             NodeResourcesFit's scoring strategies
    fit                      the NodeResourcesFit plugin
    balanced_allocation      the NodeResourcesBalancedAllocation plugin and its scorer
    gomath                   Go integer division and math.Round, scalar and NumPy
"""

from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit

__all__ = ["BalancedAllocation", "Fit"]
