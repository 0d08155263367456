"""A self-signed certificate authority and a serving certificate for ``--tls``.

Generated once into ``DATA_DIR/pki/`` (``ca.crt``, ``ca.key``, ``server.crt``,
``server.key``; keys mode 0600) and reused on restart, so a kubeconfig written earlier
keeps working. The serving certificate is regenerated when the host it must name is not
among its subject alternative names, or it is about to expire. The kubeconfig carries the
CA certificate (``certificate-authority-data``), which is how kubectl verifies the server.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

log = logging.getLogger(__name__)

_VALID_DAYS = 365
_RENEW_BEFORE = dt.timedelta(days=30)


@dataclass(frozen=True, slots=True)
class TlsFiles:
    ca_cert: Path
    cert: Path
    key: Path


def _write(path: Path, data: bytes, private: bool) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _san_names(host: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                     x509.IPAddress(ipaddress.ip_address("::1"))]
    try:
        ip = ipaddress.ip_address(host)
        if not ip.is_unspecified and x509.IPAddress(ip) not in names:
            names.append(x509.IPAddress(ip))
    except ValueError:
        if host and x509.DNSName(host) not in names:
            names.append(x509.DNSName(host))
    return names


def _make_ca(pki: Path, now: dt.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-ca")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=10 * _VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    _write(pki / "ca.key", _pem_key(key), True)
    _write(pki / "ca.crt", cert.public_bytes(serialization.Encoding.PEM), False)
    return cert, key


def _serving_ok(path: Path, host: str, now: dt.datetime) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return False
    if cert.not_valid_after_utc - now < _RENEW_BEFORE:
        return False
    return all(n in list(sans) for n in _san_names(host))


def ensure_certificates(pki: Path, host: str) -> TlsFiles:
    """The CA and a serving certificate valid for ``host`` (and localhost), made if needed."""
    pki.mkdir(parents=True, exist_ok=True)
    os.chmod(pki, 0o700)
    now = dt.datetime.now(dt.timezone.utc)
    files = TlsFiles(pki / "ca.crt", pki / "server.crt", pki / "server.key")
    try:
        ca_cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
        ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
            raise ValueError("unexpected CA key type")
    except (OSError, ValueError):
        ca_cert, ca_key = _make_ca(pki, now)
        (pki / "server.crt").unlink(missing_ok=True)
    if _serving_ok(files.cert, host, now):
        return files
    key = _key()
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-apiserver")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=_VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(_san_names(host)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write(files.key, _pem_key(key), True)
    _write(files.cert, cert.public_bytes(serialization.Encoding.PEM), False)
    log.info("generated a serving certificate for %s in %s", host, pki)
    return files
