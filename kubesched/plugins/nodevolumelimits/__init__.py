"""NodeVolumeLimits (upstream ``plugins/nodevolumelimits``): CSI attach limits per node."""

from kubesched.plugins.nodevolumelimits.csi import CSILimits

__all__ = ["CSILimits"]
