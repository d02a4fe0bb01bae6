"""A self-signed CA and a loopback server certificate, so clients of the local control plane verify TLS.

The CA certificate is written to a file that kubeconfigs point at (``certificate-authority``); the
CA private key lives only in memory (or, with a state directory, in a ``0600`` file) and never
appears in a repr or a log line.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> bundle = make_tls_bundle(d)
    >>> bundle.ca_cert_path.read_text().startswith("-----BEGIN CERTIFICATE-----")
    True
    >>> "PRIVATE" in repr(bundle)
    False
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["TLSBundle", "make_tls_bundle"]

_VALIDITY = _dt.timedelta(days=3650)


@dataclass(frozen=True)
class TLSBundle:
    """Paths of the CA certificate and the server certificate/key, ready for an ``ssl`` context.

    Example:
        >>> import tempfile, pathlib
        >>> ctx = make_tls_bundle(pathlib.Path(tempfile.mkdtemp())).server_context()
        >>> ctx.protocol.name
        'PROTOCOL_TLS_SERVER'
    """

    ca_cert_path: Path
    server_cert_path: Path
    server_key_path: Path = field(repr=False)

    def server_context(self) -> ssl.SSLContext:
        """An ``ssl.SSLContext`` for the server side (TLS 1.2+)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(self.server_cert_path), str(self.server_key_path))
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """An ``ssl.SSLContext`` that trusts only this CA (for benchmarks and raw clients)."""
        return ssl.create_default_context(cafile=str(self.ca_cert_path))


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def make_tls_bundle(directory: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TLSBundle:
    """Create (or reuse, if already present in ``directory``) a CA and a server certificate for ``hosts``.

    Reuse keeps a kubeconfig written by an earlier ``rayqueue local up`` valid across restarts with
    the same state directory. The CA key is written to ``ca.key`` with mode ``0600`` only so that a
    new server certificate can be signed after a restart.
    """
    # lazy: cryptography costs ~65 ms to import and is only needed when no CA exists yet
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    ca_cert_path, ca_key_path = directory / "ca.crt", directory / "ca.key"
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    if all(p.is_file() for p in (ca_cert_path, ca_key_path, cert_path, key_path)):
        return TLSBundle(ca_cert_path, cert_path, key_path)

    now = _dt.datetime.now(_dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rayqueue-local-ca")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rayqueue-local-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )

    pem = serialization.Encoding.PEM
    no_enc = serialization.NoEncryption()
    pkcs8 = serialization.PrivateFormat.PKCS8
    _write_private(ca_key_path, ca_key.private_bytes(pem, pkcs8, no_enc))
    _write_private(key_path, key.private_bytes(pem, pkcs8, no_enc))
    ca_cert_path.write_bytes(ca_cert.public_bytes(pem))
    cert_path.write_bytes(cert.public_bytes(pem))
    return TLSBundle(ca_cert_path, cert_path, key_path)
