"""PodTopologySpread (upstream ``plugins/podtopologyspread``), split by concern:
``args`` (pluginConfig), ``common`` (constraints, inclusion policies, counting),
``filtering`` (PreFilter/Filter/AddPod/RemovePod), ``scoring`` (PreScore/Score/Normalize),
``plugin`` (the plugin class)."""

from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
