"""Where a webhook may go, how it is signed, and one HTTP POST of it.

Only http(s). Link-local addresses (169.254.0.0/16, fe80::/10) and cloud metadata hosts are
refused always; loopback, private and other non-public addresses unless
settings.WEBHOOK_ALLOW_PRIVATE. The host is resolved once, every address is checked, and the
connection goes to the checked address (no second lookup an attacker's DNS could change).
Redirects are not followed.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

SIGNATURE_HEADER = "X-Fabric-Signature"
USER_AGENT = "FabricAdvisor-Webhooks/1.0"
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeWebhookUrl(ValueError):
    """The URL may not receive webhooks; the message says which rule it breaks."""


def signature(body: bytes, secret: str) -> str:
    """The X-Fabric-Signature value: sha256=<hex HMAC-SHA256 of the raw body>."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encode_payload(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as exc:
        raise UnsafeWebhookUrl("is not a valid URL") from exc
    if parts.scheme not in ("http", "https"):
        raise UnsafeWebhookUrl("must be an http:// or https:// URL")
    if not parts.hostname:
        raise UnsafeWebhookUrl("must name a host")
    if parts.username or parts.password:
        raise UnsafeWebhookUrl("must not carry credentials")
    host = parts.hostname.rstrip(".").lower()
    if host in METADATA_HOSTS:
        raise UnsafeWebhookUrl("must not point at a cloud metadata service")
    return parts


def check_address(address: IpAddress) -> None:
    """Raise UnsafeWebhookUrl when a webhook may not be sent to `address`."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        raise UnsafeWebhookUrl("must not point at a cloud metadata service")
    if address.is_link_local:
        raise UnsafeWebhookUrl("must not point at a link-local address")
    if address.is_multicast or address.is_unspecified:
        raise UnsafeWebhookUrl("must point at a unicast address")
    if not address.is_global and not settings.WEBHOOK_ALLOW_PRIVATE:
        # loopback, private (10/8, 192.168/16, fc00::/7...), shared and reserved ranges
        raise UnsafeWebhookUrl("must not point at a loopback or private address")


def _literal_address(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def check_url_syntax(url: str) -> None:
    """Checks that need no DNS (used when a callback_url is submitted)."""
    parts = _split(url)
    literal = _literal_address(parts.hostname or "")
    if literal is not None:
        check_address(literal)
    elif (parts.hostname or "").rstrip(".").lower() == "localhost":
        check_address(ipaddress.ip_address("127.0.0.1"))


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str


def resolve_target(url: str) -> Target:
    """Resolve the URL's host and check every address it has; raises UnsafeWebhookUrl.

    socket.gaierror (DNS failure) propagates: it may be transient and worth a retry.
    """
    parts = _split(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise socket.gaierror(f"no address for {host}")
    for address in addresses:
        check_address(address)
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme=parts.scheme, host=host, port=port, path=path, address=str(addresses[0]))


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=timeout, context=self._tls)
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # Certificate and SNI are checked against the URL's host name, not the address.
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def post(target: Target, body: bytes, headers: dict[str, str], *, timeout_s: float) -> int:
    """POST `body` to the resolved target; returns the HTTP status. Raises OSError."""
    connection: http.client.HTTPConnection = (
        _PinnedHTTPSConnection(target, timeout_s)
        if target.scheme == "https"
        else _PinnedHTTPConnection(target, timeout_s)
    )
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(65536)  # drain a little; the receiver's body is not ours to keep
        return response.status
    finally:
        connection.close()
