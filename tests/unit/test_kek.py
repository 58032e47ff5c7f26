"""This machine's key-encryption key (python -m python_jobs.kek): made once, outside
the lakehouse, readable by its owner only, never replaced; and every process of the
venv (dbt typed in a shell, the jobs) reads it into LAKEHOUSE_KEK when that is unset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_jobs import kek
from tests.dbt_harness import ROOT

READ_BACK = "import os; print(os.environ.get('LAKEHOUSE_KEK', ''))"


def _environment(**changes: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "LAKEHOUSE_KEK"}
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _init(path: Path) -> subprocess.CompletedProcess:
    """`python -m python_jobs.kek init` with its key file at ``path``."""
    return subprocess.run(
        [sys.executable, "-m", "python_jobs.kek", "init"],
        cwd=ROOT,
        env=_environment(LAKEHOUSE_KEK_FILE=str(path)),
        capture_output=True,
        text=True,
    )


def _read_back(cwd: Path, **changes: str | None) -> subprocess.CompletedProcess:
    """A new Python process of the venv, started outside the project (the hook comes
    from the venv), printing the LAKEHOUSE_KEK it was given."""
    return subprocess.run(
        [sys.executable, "-c", READ_BACK],
        cwd=cwd,
        env=_environment(**changes),
        capture_output=True,
        text=True,
        check=True,
    )


def test_init_makes_a_private_key_once_and_never_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "config" / "gdpr_lakehouse" / "kek"
    assert kek.ensure_key_file(path) is True
    key = path.read_text().strip()
    assert len(key) == 64 and int(key, 16) >= 0
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert kek.ensure_key_file(path) is False
    assert path.read_text().strip() == key
    other = tmp_path / "other"
    kek.ensure_key_file(other)
    assert other.read_text() != path.read_text()  # random, not derived


def test_a_file_that_holds_no_key_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    path.write_text("not a key\n")
    with pytest.raises(kek.KekError, match="holds no key-encryption key"):
        kek.ensure_key_file(path)
    assert path.read_text() == "not a key\n"


def test_the_file_is_found_under_the_config_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEHOUSE_KEK_FILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", "/somewhere")
    assert kek.kek_file() == Path("/somewhere/gdpr_lakehouse/kek")
    monkeypatch.setenv("LAKEHOUSE_KEK_FILE", "")
    assert kek.kek_file() is None


def test_a_process_of_the_venv_reads_the_file_unless_a_key_is_given(tmp_path: Path) -> None:
    """`dbt build` typed in a new shell: no LAKEHOUSE_KEK exported, yet its embedded
    Spark gets the machine's key. An exported key wins; LAKEHOUSE_KEK_FILE empty is off."""
    path = tmp_path / "kek"
    done = _init(path)
    assert done.returncode == 0, done.stderr
    assert str(path) in done.stdout and "made now" in done.stdout
    key = path.read_text().strip()
    assert key not in done.stdout  # the command names the file, never the key

    def read_back(**changes: str | None) -> str:
        return _read_back(tmp_path, **changes).stdout.strip()

    assert read_back(LAKEHOUSE_KEK_FILE=str(path)) == key
    assert read_back(LAKEHOUSE_KEK_FILE=str(path), LAKEHOUSE_KEK="ab" * 32) == "ab" * 32
    assert read_back(LAKEHOUSE_KEK_FILE="") == ""
    path.write_text("broken")
    assert read_back(LAKEHOUSE_KEK_FILE=str(path)) == ""  # no key, and no traceback


def test_init_refuses_a_broken_file_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    path.write_text("0123")
    done = _init(path)
    assert done.returncode == 1
    assert "holds no key-encryption key" in done.stderr and "left as it is" in done.stderr
    assert path.read_text() == "0123"


def test_a_key_file_others_can_read_is_not_used_and_init_says_why(tmp_path: Path) -> None:
    """Attack: the key file was restored from a backup, or copied, readable by every
    user of the machine (mode 644). Any of them could unwrap every key. Guarantee, as
    ssh does with a private key: no process of the venv reads it into LAKEHOUSE_KEK
    (so every command stops, saying the key is missing), and `kek init` says which file
    is open to whom and how to close it, and leaves the file as it is."""
    path = tmp_path / "kek"
    assert _init(path).returncode == 0
    key = path.read_text()
    for mode in (0o644, 0o640, 0o604, 0o660):
        path.chmod(mode)
        done = _read_back(tmp_path, LAKEHOUSE_KEK_FILE=str(path))
        assert done.stdout.strip() == "", oct(mode)
        assert done.stderr == ""  # the hook stays silent at every Python start
        refused = _init(path)
        assert refused.returncode == 1, oct(mode)
        assert f"mode {mode:o}" in refused.stderr and f"chmod 600 {path}" in refused.stderr
        assert path.read_text() == key and path.stat().st_mode & 0o777 == mode
    path.chmod(0o400)  # read-only for its owner is fine
    assert _init(path).returncode == 0


@pytest.mark.skipif(
    os.geteuid() != 0, reason="giving a file to another user needs root (CI runs as root)"
)
def test_a_key_file_another_user_owns_is_not_used_and_init_says_why(tmp_path: Path) -> None:
    """Attack: another user of the machine plants a well-formed key file, readable by its
    owner only, where this user's processes look for theirs (a shared config folder, a
    LAKEHOUSE_KEK_FILE set for a group). A new lakehouse would wrap every data key with a
    key that user holds. Guarantee: no process of the venv reads a key file it does not
    own, and `kek init` says whose it is and leaves it as it is."""
    path = tmp_path / "kek"
    path.write_text("ab" * 32 + "\n")
    path.chmod(0o600)
    os.chown(path, 65534, 65534)
    done = _read_back(tmp_path, LAKEHOUSE_KEK_FILE=str(path))
    assert done.stdout.strip() == "" and done.stderr == ""
    refused = _init(path)
    assert refused.returncode == 1
    assert "owned by another user (uid 65534)" in refused.stderr, refused.stderr
    assert path.read_text() == "ab" * 32 + "\n" and path.stat().st_uid == 65534
    os.chown(path, os.geteuid(), os.getegid())  # the user's own file is used
    assert _init(path).returncode == 0


def _token_back(lakehouse: Path, variable: str, **changes: str | None) -> str:
    """A new process of the venv with LAKEHOUSE_DIR at ``lakehouse``: the token its
    start-up hook gave it in ``variable`` ('' for none)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import os; print(os.environ.get({variable!r}, ''))"],
        cwd=lakehouse.parent,
        env=_environment(LAKEHOUSE_DIR=str(lakehouse), **changes),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("server", "variable"),
    [
        ("engine", "DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN"),
        ("cluster", "DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD"),
    ],
)
def test_a_process_of_the_venv_gets_a_running_servers_token_only_from_a_private_file(
    tmp_path: Path, server: str, variable: str
) -> None:
    """dbt's `warm` target sends DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN, its `thrift` target
    DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD; the hook reads them from <lakehouse>/engine/token
    (`make up`) and <lakehouse>/cluster/token (`make cluster-up`), under the key file's
    checks. The live server's file wins over a value the environment inherited."""
    lakehouse = tmp_path / "lakehouse"
    token_file = lakehouse / server / "token"
    assert _token_back(lakehouse, variable, **{variable: None}) == ""  # no server: nothing
    token_file.parent.mkdir(parents=True)
    token = "5e" * 32
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    assert _token_back(lakehouse, variable, **{variable: None}) == token
    assert _token_back(lakehouse, variable, **{variable: "0" * 64}) == token  # an older one's
    token_file.chmod(0o640)  # others may read it: it is no secret any more
    assert _token_back(lakehouse, variable, **{variable: None}) == ""
    token_file.chmod(0o600)
    token_file.write_text("not a token\n")
    assert _token_back(lakehouse, variable, **{variable: None}) == ""
    if os.geteuid() == 0:  # planted by another user: not ours to send
        token_file.write_text(token + "\n")
        os.chown(token_file, 65534, 65534)
        assert _token_back(lakehouse, variable, **{variable: None}) == ""


SQUATTER = """
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    connection.settimeout(5)
    try:
        data = connection.recv(65536)
    except OSError:
        data = b""
    print("connected", len(data), flush=True)
    connection.close()
"""


# a Python another user may run (the venv's may live under a home only root enters)
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or not SYSTEM_PYTHON.is_file(),
    reason="needs root, to listen as another user, and /usr/bin/python3",
)
def test_dbt_never_connects_to_another_users_process_on_the_engines_port(tmp_path: Path) -> None:
    """Seam: after `make down` or a crash any local account may listen on the
    warm engine's port; dbt's `warm` target connected to it, sent the token the crashed
    engine left, then every statement, and believed the answers (a compliance test that
    passes). Guarantee: while another user's process holds the port, the venv's hook
    gives no process the token (an inherited one is removed too) and says why, and dbt
    stops before it connects."""
    from tests.dbt_harness import free_port

    port = free_port()
    lakehouse = tmp_path / "lakehouse"
    folder = lakehouse / "engine"
    folder.mkdir(parents=True)
    folder.chmod(0o700)
    token = "5e" * 32
    (folder / "token").write_text(token + "\n")
    (folder / "token").chmod(0o600)
    # what a crashed engine leaves
    (folder / "engine.json").write_text(json.dumps({"pid": 999999, "port": port, "ready": True}))
    squatter = subprocess.Popen(
        [str(SYSTEM_PYTHON), "-I", "-c", SQUATTER, str(port)],
        stdout=subprocess.PIPE,
        text=True,
        user=65534,
        group=65534,
    )
    try:
        assert squatter.stdout.readline().strip() == "listening"
        variable = "DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN"
        assert _token_back(lakehouse, variable, **{variable: None}) == ""
        assert _token_back(lakehouse, variable, **{variable: "0" * 64}) == ""
        done = subprocess.run(
            [
                str(Path(sys.executable).with_name("dbt")),
                "run-operation",
                "gdpr_erase",
                "--target",
                "warm",
            ],
            cwd=ROOT,
            env=_environment(
                LAKEHOUSE_DIR=str(lakehouse),
                LAKEHOUSE_ENGINE_PORT=str(port),
                DBT_LOG_PATH=str(tmp_path / "logs"),
                DBT_TARGET_PATH=str(tmp_path / "target"),
                **{variable: None},
            ),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0
        assert f"port {port}" in done.stderr and "another user's process (uid 65534)" in done.stderr
        assert f"refused: port {port}" in done.stdout, done.stdout[-2000:]
    finally:
        squatter.kill()
        output = squatter.communicate()[0]
    assert "connected" not in output, "dbt connected to the squatter"


def test_the_dbt_output_folders_are_found_as_dbt_finds_them(tmp_path: Path) -> None:
    from python_jobs.kek_hook import dbt_output_folders

    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: p\n")
    # the nearest folder up holding a dbt_project.yml; dbt's defaults under it
    assert dbt_output_folders([], {}, project / "models") == [
        project / "logs",
        project / "target",
    ]
    # a relative log path is the current folder's, a relative target path the project's
    env = {"DBT_LOG_PATH": "l", "DBT_TARGET_PATH": "t", "DBT_PROJECT_DIR": str(project)}
    assert dbt_output_folders([], env, tmp_path) == [tmp_path / "l", project / "t"]
    # flags over the environment, in either form; the last one wins
    args = ["run", "--log-path=a", "--target-path", "b", "--log-path", "c", "--project-dir", "x"]
    assert dbt_output_folders(args, env, tmp_path) == [tmp_path / "c", tmp_path / "x" / "b"]
