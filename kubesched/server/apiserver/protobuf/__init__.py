"""``application/vnd.kubernetes.protobuf``: the field tables, decoding request bodies and
encoding responses."""
