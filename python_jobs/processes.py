"""Small helpers for the long-lived local processes (the cluster's and the warm engine)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

HOST = "127.0.0.1"


def alive(pid: int) -> bool:
    """The process exists (a zombie too: reap it to tell)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def listening(port: int) -> bool:
    """Something accepts connections on 127.0.0.1:port."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((HOST, port)) == 0


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log, for an error message."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log)"
