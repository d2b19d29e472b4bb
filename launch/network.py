"""Which network interfaces a run's servers are reachable on.

A single-machine run must be reachable from this machine only. Ray binds its
servers to its node address, so a local Ray instance started on a loopback
address stays on loopback. dm-reverb 0.14 offers no bind address: its C++
server always listens on ``[::]:<port>`` (every interface). ``restrict_to_loopback``
closes that from outside reverb: it finds the server's listening socket among
this process's file descriptors and binds it to the loopback device
(``SO_BINDTODEVICE``), after which the kernel only hands it connections that
arrive over ``lo``; ``ss -ltn`` then shows it as ``*%lo:<port>``. Between the
server's start and that call (the next statement after the server is built)
the socket listens on every interface: a known window, which only a bind
address in reverb itself would close.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys

logger = logging.getLogger("launch")

_LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp*.
_LOOPBACK_DEVICE = b"lo"


class ExposureError(OSError):
    """A server could not be confined to loopback, so it was not left running."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and for loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _listening_inodes(port: int) -> set[int]:
    """Inodes of the sockets in this network namespace listening on TCP ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            fields = row.split()
            local, state, inode = fields[1], fields[3], int(fields[9])
            if state == _LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    return inodes


def _own_socket_fds() -> dict[int, int]:
    """This process's socket file descriptors, by socket inode."""
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # Closed since listing.
        if target.startswith("socket:["):
            fds[int(target[len("socket:[") : -1])] = int(name)
    return fds


def restrict_to_loopback(port: int) -> int:
    """Makes this process's TCP listener(s) on ``port`` accept loopback connections only.

    Returns how many listening sockets were restricted. Raises
    ``ExposureError`` if none was found or one could not be restricted.
    Outside Linux this is not possible from here: it logs a warning and
    returns 0.
    """
    if not sys.platform.startswith("linux"):
        logger.warning(
            "cannot confine the server on port %d to loopback on %s: it listens on every interface", port, sys.platform
        )
        return 0
    fds = _own_socket_fds()
    listening = [fds[inode] for inode in _listening_inodes(port) if inode in fds]
    if not listening:
        raise ExposureError(f"found no socket of this process listening on port {port} to confine to loopback")
    for fd in listening:
        # A socket object on a duplicate of the descriptor: closing it leaves the server's own open.
        with socket.socket(fileno=os.dup(fd)) as sock:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, _LOOPBACK_DEVICE)
            except OSError as e:
                raise ExposureError(
                    f"could not confine the server on port {port} to loopback (SO_BINDTODEVICE lo: {e}); "
                    "Linux 5.7 or later allows it without privileges"
                ) from None
    return len(listening)


def confine_server(server: object) -> None:
    """``restrict_to_loopback(server.port)``; on failure stops ``server`` before raising."""
    try:
        restrict_to_loopback(server.port)  # type: ignore[attr-defined]
    except BaseException:
        server.stop()  # type: ignore[attr-defined]
        raise


def check_bind_address(bind_address: str) -> None:
    """Raises ValueError unless ``bind_address`` is an IP address of this machine (not 0.0.0.0 or ::)."""
    try:
        ip = ipaddress.ip_address(bind_address.strip("[]"))
    except ValueError:
        raise ValueError(
            f"bind address must be an IP address of this machine (e.g. 10.0.0.5 or 127.0.0.1), got {bind_address!r}"
        ) from None
    if ip.is_unspecified:
        raise ValueError(
            f"bind address {bind_address!r} means every interface, which Ray cannot give other "
            "machines as its address; give this machine's address on the network they share "
            "(e.g. 10.0.0.5)"
        )
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((str(ip), 0))
        except OSError as e:
            raise ValueError(
                f"bind address {bind_address!r} is not an address of this machine "
                f"({e.strerror or e}); give one of its own IP addresses"
            ) from None
