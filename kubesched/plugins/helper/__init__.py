"""Helpers the in-tree plugins share, as upstream's ``framework/plugins/helper`` holds them:
Go's integer arithmetic (:mod:`.gomath`) and ``DefaultNormalizeScore`` (:mod:`.normalize`).
Plugins import these instead of writing their own copy."""
