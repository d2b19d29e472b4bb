"""Which TCP sockets a process tree listens on, and whether other machines could reach them.

Read from /proc (Linux): the tree's socket inodes from /proc/<pid>/fd, the
listening sockets from /proc/net/tcp and /proc/net/tcp6, and the device a
socket is bound to (``SO_BINDTODEVICE``, which /proc/net does not show) from
``ss -ltnHe``. A listener is exposed if its address is not loopback and it is
not bound to the loopback device.
"""

from __future__ import annotations

import dataclasses
import fcntl
import ipaddress
import os
import re
import shutil
import socket
import struct
import subprocess
import time

_LISTEN = "0A"


@dataclasses.dataclass(frozen=True)
class Listener:
    pid: int
    command: str
    address: str
    port: int
    device: str | None  # "lo" when bound to the loopback device

    @property
    def exposed(self) -> bool:
        return not ipaddress.ip_address(self.address).is_loopback and self.device != "lo"

    def __str__(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        device = f"%{self.device}" if self.device else ""
        return f"{self.command} (pid {self.pid}) on {host}{device}:{self.port}"


def process_tree(root: int) -> set[int]:
    """``root`` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(name))
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree.add(pid)
            todo.extend(children.get(pid, []))
    return tree


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _decode(hex_address: str) -> str:
    """An address of /proc/net/tcp* (32-bit words in host byte order, little-endian here)."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(words)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _listening_table() -> dict[int, tuple[str, int]]:
    """inode -> (address, port) of every listening TCP socket in this network namespace."""
    table = {}
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            for row in f.read().splitlines()[1:]:
                fields = row.split()
                if fields[3] != _LISTEN:
                    continue
                address, port = fields[1].rsplit(":", 1)
                table[int(fields[9])] = (_decode(address), int(port, 16))
    return table


def _devices() -> dict[int, str]:
    """inode -> device, for listening sockets bound to a device (``ss`` shows ``addr%dev:port``)."""
    if shutil.which("ss") is None:
        return {}
    out = subprocess.run(["ss", "-ltnHe"], capture_output=True, text=True, check=False).stdout
    devices = {}
    for line in out.splitlines():
        fields = line.split()
        inode = re.search(r"\bino:(\d+)", line)
        if len(fields) > 3 and inode and "%" in fields[3]:
            devices[int(inode.group(1))] = fields[3].rsplit(":", 1)[0].split("%", 1)[1]
    return devices


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def listeners(root: int) -> list[Listener]:
    """The listening TCP sockets held by ``root``'s process tree."""
    table, devices = _listening_table(), _devices()
    found = []
    for pid in process_tree(root):
        for inode in _socket_inodes(pid) & table.keys():
            address, port = table[inode]
            found.append(Listener(pid, _command(pid), address, port, devices.get(inode)))
    return found


_SIOCGIFADDR = 0x8915


def _ipv4_address(interface: str) -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            packed = fcntl.ioctl(sock.fileno(), _SIOCGIFADDR, struct.pack("256s", interface.encode()[:15]))
        except OSError:
            return None  # No IPv4 address on this interface.
    return socket.inet_ntoa(packed[20:24])


def network_addresses() -> list[str]:
    """This machine's addresses other than loopback and link-local: where others would connect."""
    found = [_ipv4_address(name) for _, name in socket.if_nameindex()]
    try:
        with open("/proc/net/if_inet6") as f:
            found += [str(ipaddress.ip_address(bytes.fromhex(row.split()[0]))) for row in f]
    except FileNotFoundError:
        pass
    addresses = [ipaddress.ip_address(a) for a in found if a]
    return sorted({str(a) for a in addresses if not (a.is_loopback or a.is_link_local)})


def accepts(address: str, port: int) -> bool:
    """Whether a TCP connection to ``address:port`` opens."""
    try:
        with socket.create_connection((address, port), timeout=1.0):
            return True
    except OSError:
        return False


@dataclasses.dataclass
class Observation:
    """What ``watch`` saw: every listener, and which network addresses reached which of them."""

    listeners: set[Listener] = dataclasses.field(default_factory=set)
    reached: dict[Listener, list[str]] = dataclasses.field(default_factory=dict)

    def problems(self) -> list[str]:
        """One line per exposed listener, and per listener that a network address reached.

        A reverb server listens on every interface for the moment between its start and its confinement to the
        loopback device (launch/network.py: reverb 0.14 takes no bind address). A listener seen in that moment
        and then seen confined is not a problem of its own; a connection a network address made to it is.
        """
        confined = {(x.pid, x.address, x.port) for x in self.listeners if x.device == "lo"}
        lines = [
            f"{listener} is bound to a non-loopback address"
            for listener in self.listeners
            if listener.exposed and (listener.pid, listener.address, listener.port) not in confined
        ]
        lines += [
            f"{listener} accepted a connection on {', '.join(addresses)}"
            for listener, addresses in self.reached.items()
            if addresses
        ]
        return sorted(lines)


def watch(process: subprocess.Popen, timeout: float, every: float = 0.25) -> Observation:
    """Every listener in ``process``'s tree until it exits (or ``timeout`` passes).

    Each new listener that is not on a loopback address is also tried from
    this machine's network addresses, as another machine would reach it.
    """
    seen = Observation()
    addresses = network_addresses()
    end = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < end:
        for listener in listeners(process.pid):
            if listener in seen.listeners:
                continue
            seen.listeners.add(listener)
            if not ipaddress.ip_address(listener.address).is_loopback:
                seen.reached[listener] = [a for a in addresses if accepts(a, listener.port)]
        time.sleep(every)
    return seen
