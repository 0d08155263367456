"""What one Kubernetes release of kube-scheduler does: feature gates with their per-release
defaults (:mod:`.gates`) and the release's ungated changes (:mod:`.features`)."""

from kubesched.framework.features.features import (
    RELEASE_CHANGES, FeatureGateError, Features, features_of, parse_feature_gates, step_at,
)
from kubesched.framework.features.gates import GATES

__all__ = ["GATES", "RELEASE_CHANGES", "FeatureGateError", "Features", "features_of", "parse_feature_gates",
           "step_at"]
