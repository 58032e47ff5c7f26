"""Attack class: another process on this machine talks to a Spark JVM's own ports.

Every local Spark JVM of the project (dbt's embedded session, a job, the warm engine)
listens on 127.0.0.1 twice: its RPC endpoint and its block manager, which serves the
blocks the JVM holds (cached tables such as gdpr_erase's batch of subject ids and
pseudonyms, broadcast join sides). Any local process can reach both. Guarantee held
here: on a local master, Spark authenticates every connection to them with a secret
it makes at each start (`spark.authenticate`), so a client without it is answered
with a refusal before its first message is read as a request.
"""

from __future__ import annotations

import socket
import struct

import pytest
from pyspark.sql import SparkSession

pytestmark = pytest.mark.functional

RPC_REQUEST, RPC_FAILURE = 3, 5


def _unauthenticated_rpc(port: int) -> str:
    """One RpcRequest frame of Spark's transport protocol, with a body that is no
    authentication message; the text of the RpcFailure it is answered with."""
    body = b"\x01\x02\x03\x04 a client without the secret"
    header = struct.pack(">bqi", RPC_REQUEST, 7, len(body))
    frame = struct.pack(">q", 8 + len(header) + len(body)) + header + body
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(frame)
        received = b""
        while len(received) < 8 or len(received) < struct.unpack(">q", received[:8])[0]:
            chunk = client.recv(65536)
            if not chunk:
                break
            received += chunk
    assert len(received) >= 8 + 1 + 8 + 4, f"no answer from port {port}: {received!r}"
    kind, request_id, length = struct.unpack(">bqi", received[8:21])
    assert (kind, request_id) == (RPC_FAILURE, 7), received[:64]
    return received[21 : 21 + length].decode("utf-8", "replace")


def test_spark_s_own_ports_refuse_a_client_without_the_secret(spark: SparkSession) -> None:
    """Attack: a local process sends the driver's RPC endpoint and its block manager a
    request. Guarantee: both refuse it unread, asking for authentication first."""
    context = spark.sparkContext
    assert context.master.startswith("local")
    assert context.getConf().get("spark.authenticate") == "true"
    ports = {
        "rpc": int(context.getConf().get("spark.driver.port")),
        "block manager": context._jsc.sc().env().blockManager().blockManagerId().port(),
    }
    for name, port in ports.items():
        failure = _unauthenticated_rpc(port)
        assert "Expected SaslMessage" in failure, f"{name} port {port}: {failure[:400]}"


def test_spark_s_scratch_folders_are_this_users_only(spark: SparkSession) -> None:
    """Attack: another local account reads what a Spark JVM of the project writes beside
    its tables while it works: shuffle and spill files in its block manager's folders
    (under /tmp by default), whose rows are what the job read (the subject access job's
    are decrypted). Spark makes those folders with the process's umask (755 under a
    shell's usual 022). Guarantee: a session of the project (python_jobs.spark.
    build_session: every job, the warm engine, this suite) starts its JVM with umask 077,
    so they are 700."""
    import os
    from pathlib import Path

    disk = spark._jsc.sc().env().blockManager().diskBlockManager()
    folders = [Path(folder.getPath()) for folder in disk.localDirs()]
    assert folders
    for folder in folders:
        assert folder.stat().st_mode & 0o777 == 0o700, f"{folder}: {oct(folder.stat().st_mode)}"
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    status = Path(f"/proc/{pid}/status").read_text()
    assert "Umask:\t0077" in status, [line for line in status.splitlines() if "mask" in line]
    assert os.getpid() != pid
