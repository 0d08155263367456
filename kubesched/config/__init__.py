"""The scheduler configuration: upstream's ``KubeSchedulerConfiguration`` (v1) file.

``load_config(path | dict | None, registry=None) -> SchedulerConfig`` reads, defaults
and validates it; ``build_framework`` / ``build_profiles`` turn its profiles into
``Framework`` objects. The in-tree registry and default plugin list come from the plugins
layer and are passed in: this package never imports ``kubesched.plugins``.
"""

from kubesched.config.defaults import merge_plugin_set, merge_plugins
from kubesched.config.errors import (
    ConfigDecodeError, ConfigError, ConfigSyntaxError, ConfigUnsupportedError,
    ConfigValidationError, FieldError,
)
from kubesched.config.load import load_config
from kubesched.config.profile import (
    build_framework, build_profiles, expand_plugins, instantiate_plugins, resolve_plugins,
)
from kubesched.config.types import (
    API_VERSION, KIND, ClientConnectionConfig, LeaderElectionConfig, PluginConfigEntry,
    PluginRef, PluginSet, ProfileConfig, SchedulerConfig,
)
from kubesched.config.validation import validate_config

__all__ = [
    "API_VERSION", "KIND", "ClientConnectionConfig", "ConfigDecodeError", "ConfigError",
    "ConfigSyntaxError", "ConfigUnsupportedError", "ConfigValidationError", "FieldError",
    "LeaderElectionConfig", "PluginConfigEntry", "PluginRef", "PluginSet", "ProfileConfig",
    "SchedulerConfig", "build_framework", "build_profiles", "expand_plugins",
    "instantiate_plugins", "load_config", "merge_plugin_set", "merge_plugins",
    "resolve_plugins", "validate_config",
]
