"""The pieces of ``serve``'s credentials, without a server: the token file, the user of a
client certificate, the generated certificates, the kubeconfig, and the modes of the
files that carry secrets.

Upstream facts: the static token file is CSV ``token,user,uid[,"group1,group2"]`` with the
groups split on commas (staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/
tokenfile.go); the x509 authenticator's CommonNameUserConversion makes the certificate's
CN the user name and its O entries the groups, and refuses a certificate without a CN
(.../authentication/request/x509/x509.go); kube-apiserver adds ``system:authenticated``
to every authenticated user (group.AuthenticatedGroupAdder), once.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubesched.server.apiserver.authn.authenticator import UserInfo, ensure_token_file, peer_user, read_tokens
from kubesched.server.apiserver.kubeconfig import write_kubeconfig
from kubesched.server.apiserver.authn.tls import ensure_certificates
from kubesched.server.store import Store

AUTH = "system:authenticated"


@pytest.mark.parametrize(("line", "token", "user"), [
    ('abc,alice,42,"dev,ops"', "abc", UserInfo("alice", "42", ("dev", "ops", AUTH))),
    ("abc,alice,42", "abc", UserInfo("alice", "42", (AUTH,))),
    (f'abc,root,1,"system:masters,{AUTH}"', "abc", UserInfo("root", "1", ("system:masters", AUTH))),
    ("abc", "abc", UserInfo("token-user-1", "", (AUTH,))),  # kubesched's one-token-per-line form
], ids=["groups", "no-groups", "authenticated-once", "bare-token"])
def test_token_file_lines(tmp_path: Path, line: str, token: str, user: UserInfo) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"# a comment\n\n{line}\n")
    assert read_tokens(path) == {token: user}


def test_token_file_created_private_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "new" / "tokens"
    tokens = ensure_token_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    [(token, user)] = tokens.items()
    assert len(token) >= 32 and user == UserInfo("admin", "admin", ("system:masters", AUTH))
    assert ensure_token_file(path) == tokens  # read again, not replaced
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no token in the token file"):
        ensure_token_file(empty)
    with pytest.raises(ValueError, match="cannot read the token file"):
        ensure_token_file(tmp_path)  # a directory


@pytest.mark.parametrize(("subject", "user"), [
    (((("commonName", "alice"),), (("organizationName", "dev"),), (("organizationName", "ops"),)),
     UserInfo("alice", "", ("dev", "ops", AUTH))),
    (((("commonName", "bob"),),), UserInfo("bob", "", (AUTH,))),
    (((("organizationName", "dev"),),), None),  # no CN: not a user
    ((), None),
], ids=["cn-and-orgs", "cn-only", "no-cn", "empty"])
def test_peer_user(subject: tuple[object, ...], user: UserInfo | None) -> None:
    assert peer_user({"subject": subject} if subject else {}) == user


def test_certificates(tmp_path: Path) -> None:
    pki = tmp_path / "pki"
    files = ensure_certificates(pki, "127.0.0.1")
    ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
    client = x509.load_pem_x509_certificate(files.client_cert.read_bytes())
    client.verify_directly_issued_by(ca)
    assert client.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kubesched-admin"
    assert [a.value for a in client.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["system:masters"]
    eku = client.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    for key in ("ca.key", "server.key", "client.key"):
        assert stat.S_IMODE((pki / key).stat().st_mode) == 0o600
    assert stat.S_IMODE(pki.stat().st_mode) == 0o700
    before = {p.name: p.read_bytes() for p in pki.iterdir()}
    ensure_certificates(pki, "127.0.0.1")  # a restart reuses everything
    assert {p.name: p.read_bytes() for p in pki.iterdir()} == before
    (pki / "ca.key").unlink()  # a new CA: the client certificate is issued again
    files = ensure_certificates(pki, "127.0.0.1")
    assert files.client_cert.read_bytes() != before["client.crt"]
    x509.load_pem_x509_certificate(files.client_cert.read_bytes()).verify_directly_issued_by(
        x509.load_pem_x509_certificate(files.ca_cert.read_bytes()))


def test_kubeconfig_users(tmp_path: Path) -> None:
    files = ensure_certificates(tmp_path / "pki", "127.0.0.1")

    def user(**kw: object) -> dict[str, str]:
        path = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:1", **kw)  # type: ignore[arg-type]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        return dict(yaml.safe_load(path.read_text())["users"][0]["user"])

    cert = (files.client_cert, files.client_key)
    assert set(user(ca_file=files.ca_cert, client_cert=cert)) == {"client-certificate-data", "client-key-data"}
    assert user(ca_file=files.ca_cert, token="t", client_cert=cert) == {"token": "t"}
    assert user() == {}


def test_store_files_are_private(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.db")
    with store.txn() as tx:
        tx.create("core/configmaps", "default", "x", {"metadata": {"name": "x", "namespace": "default"}})
    for name in ("store.db", "store.db-wal", "store.db-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    store.close()
    os.chmod(tmp_path / "store.db", 0o644)  # made by an older kubesched: tightened on open
    Store(tmp_path / "store.db").close()
    assert stat.S_IMODE((tmp_path / "store.db").stat().st_mode) == 0o600
