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

import json
import os
import socket
import struct
from pathlib import Path

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


def listening_sockets(pids: list[int]) -> dict[tuple[str, int], int]:
    """{(address, port): pid} of every TCP socket the processes listen on, read from
    their open files and the kernel's socket tables."""
    owner = {}
    for pid in pids:
        try:
            entries = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                target = os.readlink(entry)
            except OSError:
                continue
            if target.startswith("socket:["):
                owner[target[len("socket:[") : -1]] = pid
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in owner:  # 0A: LISTEN
                continue
            raw, port = local.split(":")
            if len(raw) == 8:
                address = socket.inet_ntop(socket.AF_INET, bytes.fromhex(raw)[::-1])
            else:
                words = bytes.fromhex(raw)
                packed = b"".join(words[i : i + 4][::-1] for i in range(0, 16, 4))
                address = socket.inet_ntop(socket.AF_INET6, packed)
                address = address.removeprefix("::ffff:")
            found[(address, int(port, 16))] = owner[inode]
    return found


def http_status(
    port: int, method: str, path: str, body: bytes = b"", auth: tuple[str, str] | None = None
) -> int:
    """The status of one HTTP request, without credentials unless `auth` (basic) is given."""
    import base64
    import http.client

    headers = {"Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = "Basic " + base64.b64encode(":".join(auth).encode()).decode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def _answer(port: int, payload: bytes) -> bytes | None:
    """What a port answers `payload` with in 10 s (b"": it closed), None when it waits."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
        client.sendall(payload)
        client.settimeout(10)
        try:
            return client.recv(65536)
        except TimeoutError:
            return None


def _refuses_token_first(port: int) -> str:
    """A server that reads a secret before anything else: a Py4J gateway (a PySpark
    JVM's) answers a call without its auth command with an error; PySpark's accumulator
    server (the driver's Python) reads as many bytes as its token, then closes on a
    wrong one."""
    answer = _answer(port, b"c\nt\ngetClass\ne\n")
    if answer is not None and answer.startswith(b"!x"):
        return "refused: Py4J asks for its auth token first"
    answer = _answer(port, b"not-the-secret-" * 100)
    if answer == b"":
        return "refused: closed the connection on a wrong token, unanswered"
    return f"no refusal recognised: {answer!r:.120}"


def refuses_without_secret(port: int, token: str) -> str:
    """What a port does with a client without the secret: 'refused ...' or what it let
    through. A Spark RPC port answers an unauthenticated frame with a request for
    authentication; an HTTP server (a web UI, the REST submission server) must answer
    every request, a job submission and an application's kill included, with 401/403."""
    body = b"\x01\x02\x03\x04 a client without the secret"
    header = struct.pack(">bqi", RPC_REQUEST, 7, len(body))
    frame = struct.pack(">q", 8 + len(header) + len(body)) + header + body
    answer = _answer(port, frame)
    if answer is None:  # waits for more: closed first (PySpark's servers take one at a time)
        return _refuses_token_first(port)
    if answer.startswith(b"HTTP/"):
        submission = json.dumps(
            {
                "action": "CreateSubmissionRequest",
                "appResource": "file:/nonexistent.jar",
                "mainClass": "Mallory",
                "appArgs": [],
                "clientSparkVersion": "4.2.0",
                "environmentVariables": {},
                "sparkProperties": {"spark.app.name": "mallory"},
            }
        ).encode()
        statuses = {
            "GET /": http_status(port, "GET", "/"),
            "GET /json/": http_status(port, "GET", "/json/"),
            "POST /app/kill/": http_status(port, "POST", "/app/kill/?id=x&terminate=true"),
            "POST /v1/submissions/create": http_status(
                port, "POST", "/v1/submissions/create", submission
            ),
        }
        if all(status in (401, 403) for status in statuses.values()):
            return f"refused: HTTP {statuses}"
        return f"HTTP served without the secret: {statuses}"
    if len(answer) >= 21 and answer[8] == RPC_FAILURE and b"Expected SaslMessage" in answer:
        return "refused: Spark RPC asks for authentication first"
    assert token.encode() not in answer
    return f"unknown answer {answer[:80]!r}"


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
