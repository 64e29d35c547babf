"""A process's TCP sockets as its network namespace's kernel lists them
(``/proc/PID/net/tcp`` and ``tcp6``: the table of the namespace the process lives in, read
from anywhere), and which of them the process still holds (``/proc/PID/fd``).

A socket the process has closed can stay in the table a while (FIN_WAIT1 while its FIN is
retransmitted to a peer that is gone; its inode is then 0): "still held" is the process's
descriptors, not the table.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# the kernel's TCP states (include/net/tcp_states.h), as /proc/net/tcp numbers them
STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
          7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING", 12: "NEW_SYN_RECV"}
# the "tr" column: which timer runs (net/ipv4/tcp_ipv4.c get_tcp4_sock)
TIMERS = {0: None, 1: "retransmit", 2: "keepalive", 3: "time_wait", 4: "zero_window_probe"}


@dataclass(frozen=True)
class TcpSocket:
    local_port: int
    remote_port: int
    state: str
    tx_queue: int  # bytes sent and not acknowledged (or, listening, the accept queue)
    rx_queue: int
    timer: str | None
    retransmits: int  # unrecovered timeouts (the "retrnsmt" column)
    inode: int  # 0: no longer anyone's (orphaned)


def _parse(text: str) -> list[TcpSocket]:
    out = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 10:
            continue
        tx, rx = (int(x, 16) for x in f[4].split(":"))
        timer = int(f[5].split(":")[0], 16)
        out.append(TcpSocket(local_port=int(f[1].rsplit(":", 1)[1], 16), remote_port=int(f[2].rsplit(":", 1)[1], 16),
                             state=STATES.get(int(f[3], 16), f[3]), tx_queue=tx, rx_queue=rx,
                             timer=TIMERS.get(timer, str(timer)), retransmits=int(f[6], 16), inode=int(f[9])))
    return out


def sockets(pid: int) -> list[TcpSocket]:
    """Every TCP socket of ``pid``'s network namespace (IPv4 and IPv6); [] if unreadable."""
    found: list[TcpSocket] = []
    for table in ("tcp", "tcp6"):
        try:
            found += _parse(Path(f"/proc/{pid}/net/{table}").read_text())
        except OSError:
            continue
    return found


def connections_to(pid: int, port: int) -> list[TcpSocket]:
    """The established connections on local port ``port`` (a server's accepted ones)."""
    return [s for s in sockets(pid) if s.local_port == port and s.state == "ESTABLISHED"]


def find(pid: int, local_port: int, remote_port: int) -> TcpSocket | None:
    """The socket of one connection, by its two ports, or None once the kernel dropped it."""
    for s in sockets(pid):
        if s.local_port == local_port and s.remote_port == remote_port:
            return s
    return None


def held_inodes(pid: int) -> set[int] | None:
    """The inodes of the sockets ``pid`` holds open; None once it is gone."""
    held = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            held.add(int(target[8:-1]))
    return held
