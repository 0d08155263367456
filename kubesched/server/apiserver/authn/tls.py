"""A self-signed certificate authority, a serving certificate and a client certificate for
``--tls`` (and ``--token-file``, which implies TLS).

Generated once into ``DATA_DIR/pki/`` (``ca.crt``, ``ca.key``, ``server.crt``,
``server.key``, ``client.crt``, ``client.key``; keys mode 0600, the directory 0700) and
reused on restart, so a kubeconfig written earlier keeps working. The serving certificate
is regenerated when the host it must name is not among its subject alternative names, or
it is about to expire; the client certificate when it is about to expire or was not
signed by the current CA. The kubeconfig carries the CA certificate
(``certificate-authority-data``), which is how kubectl verifies the server, and, without
a token, the client certificate and key, which is how the server knows the client: the
CA is also the server's client CA, and, as kube-apiserver's x509 authenticator, the
certificate's CN is the user name and its O entries are the groups (:mod:`.auth`).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

log = logging.getLogger(__name__)

_VALID_DAYS = 365
_RENEW_BEFORE = dt.timedelta(days=30)


# the identity of the generated client certificate: kubeadm's admin.conf is the model
# (CN the user, O the group that the default RBAC binds to cluster-admin)
CLIENT_USER = "kubesched-admin"
CLIENT_GROUPS = ("system:masters",)


@dataclass(frozen=True, slots=True)
class TlsFiles:
    ca_cert: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path


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


def _valid(path: Path, now: dt.datetime) -> x509.Certificate | None:
    """The certificate at ``path`` if it can be read and does not expire soon."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None
    return cert if cert.not_valid_after_utc - now >= _RENEW_BEFORE else None


def _serving_ok(path: Path, host: str, now: dt.datetime) -> bool:
    cert = _valid(path, now)
    if cert is None:
        return False
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return all(n in list(sans) for n in _san_names(host))


def _client_ok(path: Path, ca_cert: x509.Certificate, now: dt.datetime) -> bool:
    cert = _valid(path, now)
    if cert is None or cert.issuer != ca_cert.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _load_ca(pki: Path, now: dt.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey, bool]:
    """The CA (cert, key, whether it was just made)."""
    try:
        ca_cert = x509.load_pem_x509_certificate((pki / "ca.crt").read_bytes())
        ca_key = serialization.load_pem_private_key((pki / "ca.key").read_bytes(), None)
        if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
            raise ValueError("unexpected CA key type")
        return ca_cert, ca_key, False
    except (OSError, ValueError):
        ca_cert, ca_key = _make_ca(pki, now)
        return ca_cert, ca_key, True


def _issue(ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], subject: x509.Name, now: dt.datetime,
           usage: x509.ObjectIdentifier, extra: x509.ExtensionType | None = None,
           ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    ca_cert, ca_key = ca
    key = _key()
    builder = (x509.CertificateBuilder().subject_name(subject)
               .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=_VALID_DAYS))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
    if extra is not None:
        builder = builder.add_extension(extra, critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def ensure_certificates(pki: Path, host: str) -> TlsFiles:
    """The CA, a serving certificate valid for ``host`` (and localhost) and the admin's
    client certificate, made if needed."""
    pki.mkdir(parents=True, exist_ok=True)
    os.chmod(pki, 0o700)
    now = dt.datetime.now(dt.timezone.utc)
    files = TlsFiles(pki / "ca.crt", pki / "server.crt", pki / "server.key", pki / "client.crt", pki / "client.key")
    ca_cert, ca_key, new_ca = _load_ca(pki, now)
    if new_ca or not _serving_ok(files.cert, host, now):
        cert, key = _issue((ca_cert, ca_key), x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-apiserver")]),
                           now, x509.oid.ExtendedKeyUsageOID.SERVER_AUTH, x509.SubjectAlternativeName(_san_names(host)))
        _write(files.key, _pem_key(key), True)
        _write(files.cert, cert.public_bytes(serialization.Encoding.PEM), False)
        log.info("generated a serving certificate for %s in %s", host, pki)
    if new_ca or not _client_ok(files.client_cert, ca_cert, now) or not files.client_key.exists():
        subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in CLIENT_GROUPS]
                            + [x509.NameAttribute(NameOID.COMMON_NAME, CLIENT_USER)])
        cert, key = _issue((ca_cert, ca_key), subject, now, x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH)
        _write(files.client_key, _pem_key(key), True)
        _write(files.client_cert, cert.public_bytes(serialization.Encoding.PEM), True)
        log.info("generated a client certificate for %s in %s", CLIENT_USER, pki)
    return files
