"""GPU sharing and the FGD paper's GPU policies as scheduler plugins.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC '23), and its simulator (hkust-adsl/kubernetes-scheduler-simulator).
Reference the plugins by import path in a KubeSchedulerConfiguration::

    - name: kubesched.contrib.gpushare:GpuShare        # Filter, Reserve, Unreserve, PreBind
    - name: kubesched.contrib.gpushare:FGDScore        # or BestFitScore, DotProductScore,
                                                       # GpuPackingScore, GpuClusteringScore, RandomScore

See docs/research.md and examples/gpushare/.
"""

from kubesched.contrib.gpushare.gpushare import GpuShare
from kubesched.contrib.gpushare.scores import (BestFitScore, DotProductScore, FGDScore, GpuClusteringScore,
                                               GpuPackingScore, RandomScore)

__all__ = ["BestFitScore", "DotProductScore", "FGDScore", "GpuClusteringScore", "GpuPackingScore", "GpuShare",
           "RandomScore"]
