"""VolumeBinding (upstream ``plugins/volumebinding``): the plugin, its binder and assume cache."""

from kubesched.plugins.volumebinding.plugin import VolumeBinding, VolumeBindingArgs

__all__ = ["VolumeBinding", "VolumeBindingArgs"]
