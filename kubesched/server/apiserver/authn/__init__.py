"""Authentication: static tokens, x509 client certificates, ServiceAccount tokens (and the
TokenRequest subresource that issues them), and the certificates serve generates."""
