"""Coscheduling (gang scheduling by PodGroup), as kubernetes-sigs/scheduler-plugins has it.

Not in the default profile. Enable it in a KubeSchedulerConfiguration as scheduler-plugins
documents, with Coscheduling as the queue sort in place of PrioritySort::

    profiles:
    - plugins:
        multiPoint:
          enabled: [{name: Coscheduling}]
        queueSort:
          enabled: [{name: Coscheduling}]
          disabled: [{name: "*"}]
      pluginConfig:
      - name: Coscheduling
        args: {permitWaitingTimeSeconds: 10}

``plugin`` holds the extension points, ``core`` the PodGroup manager (state kept across
cycles), ``clusterresource`` the minResources check, ``args`` the pluginConfig args.
"""

from kubesched.plugins.coscheduling.plugin import Coscheduling

__all__ = ["Coscheduling"]
