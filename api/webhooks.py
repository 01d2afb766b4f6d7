"""Where a webhook may go, how it is signed, and one HTTP POST of it.

Only http(s). Link-local addresses (169.254.0.0/16, fe80::/10) and cloud metadata hosts are
refused always; loopback, private and other non-public addresses unless
settings.WEBHOOK_ALLOW_PRIVATE. The host is resolved once, every address is checked, and the
connection goes to the checked address (no second lookup an attacker's DNS could change).
Redirects are not followed. IPv6 addresses that carry an IPv4 address (IPv4-mapped and
-compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo) are judged by that IPv4
address too. Signatures carry a timestamp (``t=...,v1=...``): see api/README.md.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import socket
import ssl
import time
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


# A receiver should refuse a signature whose timestamp is further than this from its clock
# (api/README.md): a captured request cannot be replayed later. Stripe uses the same 5 min.
SIGNATURE_TOLERANCE_S = 300


def signature(body: bytes, secret: str, *, timestamp: int | None = None) -> str:
    """The X-Fabric-Signature value: ``t=<unix seconds>,v1=<hex HMAC-SHA256>``.

    The HMAC covers ``f"{t}.".encode() + body``, so the time cannot be changed without the
    secret, and a receiver can refuse an old signature (as Stripe's webhooks do).
    """
    t = int(time.time()) if timestamp is None else int(timestamp)
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def signature_valid(
    header: str,
    body: bytes,
    secret: str,
    *,
    tolerance_s: int = SIGNATURE_TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """What a receiver does (api/README.md has the same code): check the MAC and the age."""
    fields: dict[str, list[str]] = {}
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        fields.setdefault(key, []).append(value)
    try:
        t = int(fields["t"][0])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - t) > tolerance_s:
        return False
    expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, given) for given in fields.get("v1", []))


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


NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052
NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # RFC 4291 2.5.5.1 (deprecated)
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT, RFC 2765 / RFC 7915


def _rfc6052_ipv4(address: ipaddress.IPv6Address, prefix_len: int) -> ipaddress.IPv4Address:
    """The IPv4 address embedded after a NAT64 prefix of `prefix_len` bits (RFC 6052 2.2):
    bits 64-71 (the "u" octet) are skipped."""
    packed = address.packed
    if prefix_len == 96:
        return ipaddress.IPv4Address(packed[12:16])
    start = prefix_len // 8
    octets = [packed[i] for i in range(start, 16) if i != 8][:4]
    return ipaddress.IPv4Address(bytes(octets))


def embedded_ipv4(address: IpAddress) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries to (mapped, compatible, SIIT-translated, NAT64,
    6to4, Teredo).

    A packet to any of them ends up at that IPv4 address, so the IPv4 rules apply to it:
    64:ff9b::7f00:1 is 127.0.0.1 and 2002:a9fe:a9fe:: is 169.254.169.254.
    """
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in IPV4_COMPATIBLE and int(address) > 1:  # :: and ::1 are not IPv4
        found.append(ipaddress.IPv4Address(address.packed[12:16]))
    if address in IPV4_TRANSLATED:
        found.append(ipaddress.IPv4Address(address.packed[12:16]))
    if address in NAT64_WELL_KNOWN:
        found.append(_rfc6052_ipv4(address, 96))
    if address in NAT64_LOCAL_USE:
        # The operator picks the prefix length (48..96); every reading must be safe.
        found += [_rfc6052_ipv4(address, n) for n in (48, 56, 64, 96)]
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found += list(address.teredo)
    return found


def check_address(address: IpAddress) -> None:
    """Raise UnsafeWebhookUrl when a webhook may not be sent to `address`."""
    for inner in embedded_ipv4(address):
        check_address(inner)
    if isinstance(address, ipaddress.IPv6Address):
        if (
            address.ipv4_mapped is not None
            or address in IPV4_TRANSLATED
            or (address in IPV4_COMPATIBLE and int(address) > 1)
        ):
            return  # judged by the IPv4 address it carries (above)
        if address in NAT64_LOCAL_USE and not settings.WEBHOOK_ALLOW_PRIVATE:
            raise UnsafeWebhookUrl("must not point at a loopback or private address")
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
