"""Read this machine's key-encryption key into LAKEHOUSE_KEK when a process starts, and
the running warm engine's token into DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN.

Imported at interpreter start by the ``gdpr_lakehouse_kek.pth`` file that
``python -m python_jobs.kek init`` (run by ``make setup``) puts in the venv, so that
``dbt``, ``python -m python_jobs.<job>`` and ``gdpr-lakehouse``, typed as they are, give
their Spark the key: embedded Spark inherits dbt's environment. It does nothing when
LAKEHOUSE_KEK is already set (an explicit key wins), when LAKEHOUSE_KEK_FILE is set to
an empty string (off), when the file holds no well-formed key, when its group or other
users may read or write it, or when another user owns it (``kek init`` then says so);
it never raises (a failing .pth line would print a traceback at every Python start).

The warm engine (``make up``) admits a Thrift client only with the token it wrote to
``<lakehouse>/engine/token`` (mode 600) when it started; dbt's ``warm`` target sends
DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN (dbt scrubs such variables from its logs). That
file, under the same checks as the key file, is read here whenever it is present: it
is the live engine's, so it wins over an older value the environment inherited. The
loopback cluster's Thrift server (``python -m python_jobs.cluster up``) likewise admits
only the token in ``<lakehouse>/cluster/token``: read the same way into
DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD, which dbt's ``thrift`` target sends.
A token is given only while no other user's process listens on its server's port
(``/proc/net/tcp``): after ``make down`` or a crash any local account may take the port,
and dbt would hand it the token and every statement. Then the variable is removed,
and for the warm engine LAKEHOUSE_ENGINE_REFUSED makes the ``warm`` output's port
invalid, so dbt stops before it connects.
It also names the Spark JVM's class archive (python_jobs.class_archive) to the local
target's JVM, in LAKEHOUSE_JVM_CLASS_ARCHIVE, which profiles.yml reads: only an
archive that is a regular file of this user's, that no other user may write, of the
size recorded when it was made (a JVM dies at start mapping one cut short).
In a ``dbt`` process it makes dbt's own output its owner's only: the log and the
artifacts hold what the command was given (``run-operation gdpr_erase --args
'{subject_ids: [...]}'`` leaves the ids there until a purge redacts them), so the
process's umask gains 077 (every file and folder dbt makes is mode 600 or 700, as are
the embedded Spark JVM's) and the log and target folders dbt will use, when they exist
and are this user's, are narrowed to 700 (an older run's files in them, made under a
wider umask, are then out of other accounts' reach too).
Standard library only: it runs before anything else in every process of the venv.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path

ENV = "LAKEHOUSE_KEK"
TOKEN_ENV = "DBT_ENV_SECRET_LAKEHOUSE_ENGINE_TOKEN"
CLUSTER_TOKEN_ENV = "DBT_ENV_SECRET_SPARK_THRIFT_PASSWORD"
REFUSED_ENV = "LAKEHOUSE_ENGINE_REFUSED"
FILE_ENV = "LAKEHOUSE_KEK_FILE"
_KEY = re.compile(r"[0-9a-fA-F]{64}")


def kek_file() -> Path | None:
    """$LAKEHOUSE_KEK_FILE, else $XDG_CONFIG_HOME (default ~/.config)/gdpr_lakehouse/kek;
    None when LAKEHOUSE_KEK_FILE is set empty."""
    configured = os.environ.get(FILE_ENV)
    if configured is not None:
        return Path(configured).expanduser() if configured.strip() else None
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "gdpr_lakehouse" / "kek"


def open_mode(path: Path) -> int | None:
    """The file's permission bits when its group or other users may use it, else None."""
    mode = path.stat().st_mode & 0o777
    return mode if mode & 0o077 else None


def parse_key(path: Path) -> str | None:
    """The key the file holds (64 hex characters, surrounding whitespace ignored)."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _KEY.fullmatch(text) else None


def foreign_owner(path: Path) -> int | None:
    """The user id owning the file when it is not this process's user, else None.
    Whoever owns the file chose the key: a key another user planted where this user's
    processes look (a shared config folder) would wrap every new lakehouse's keys with
    a key that user holds."""
    if not hasattr(os, "geteuid"):
        return None
    owner = path.stat().st_uid
    return owner if owner != os.geteuid() else None


def read_key(path: Path) -> str | None:
    """The key to use: None when the file holds none, when it is open to other users
    (as ssh refuses such a private key), or when another user owns it."""
    try:
        if open_mode(path) is not None or foreign_owner(path) is not None:
            return None
    except OSError:
        return None
    return parse_key(path)


def default_project_root() -> Path:
    """The dbt project, found as python_jobs.project.project_root finds it (without its
    check that the folder is one): $LAKEHOUSE_PROJECT_DIR, else the current directory
    when it holds a dbt_project.yml, else this checkout."""
    configured = os.environ.get("LAKEHOUSE_PROJECT_DIR")
    if configured:
        return Path(configured)
    if (Path.cwd() / "dbt_project.yml").is_file():
        return Path.cwd()
    return Path(__file__).resolve().parent.parent


def lakehouse_folder(root: Path) -> Path:
    """$LAKEHOUSE_DIR, default ``.lakehouse``; a relative value is taken under ``root``."""
    configured = Path(os.environ.get("LAKEHOUSE_DIR", ".lakehouse"))
    return (configured if configured.is_absolute() else root / configured).resolve()


def engine_token_file() -> Path:
    return lakehouse_folder(default_project_root()) / "engine" / "token"


def cluster_token_file() -> Path:
    return lakehouse_folder(default_project_root()) / "cluster" / "token"


def foreign_listeners(port: int) -> list[int]:
    """The user ids, other than this process's, owning a TCP socket that listens on
    ``port`` at any local address (IPv4 or IPv6), from the kernel's tables (Linux;
    elsewhere none is known). A connection to 127.0.0.1:port reaches such a socket."""
    if not hasattr(os, "geteuid"):
        return []
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except (OSError, UnicodeDecodeError):
            continue
        for row in rows:
            fields = row.split()
            # local address (hex ip:port), state (0A: listening), uid
            try:
                if (
                    len(fields) > 7
                    and fields[3] == "0A"
                    and int(fields[1].rsplit(":", 1)[-1], 16) == port
                    and int(fields[7]) != os.geteuid()
                ):
                    found.append(int(fields[7]))
            except ValueError:  # a row this parser does not know: not a listener it can name
                continue
    return sorted(set(found))


def _port(raw: str | None, default: int) -> int:
    return int(raw) if raw and raw.isdigit() and 0 < int(raw) < 65536 else default


def engine_port() -> int:
    """The port the warm engine listens on: its state file's, else
    $LAKEHOUSE_ENGINE_PORT (default 10009), as profiles.yml's warm output reads it."""
    try:
        state = (engine_token_file().parent / "engine.json").read_text(encoding="utf-8")
        found = re.search(r'"port"\s*:\s*([0-9]+)', state)
        if found:
            return _port(found.group(1), 10009)
    except (OSError, RuntimeError, ValueError, UnicodeDecodeError):
        pass
    return _port(os.environ.get("LAKEHOUSE_ENGINE_PORT"), 10009)


def cluster_port() -> int | None:
    """The loopback cluster's Thrift port as the thrift output reads it; None for a
    server on another host (its listener is not this machine's to check)."""
    if os.environ.get("SPARK_THRIFT_HOST", "127.0.0.1") not in ("127.0.0.1", "localhost", "::1"):
        return None
    return _port(os.environ.get("SPARK_THRIFT_PORT"), 10000)


def load_engine_token() -> None:
    """Each server's token, from its file, only while no other user's process listens on
    its port: after `make down` or a crash any local account may take the port, and a
    dbt that connected would hand it the token and the statements, and believe its
    answers (a compliance test that passes). Then the variable is removed, inherited
    value too, and for the engine LAKEHOUSE_ENGINE_REFUSED says why: profiles.yml's warm
    output then has no port, so dbt stops before it connects."""
    os.environ.pop(REFUSED_ENV, None)
    for path, name, port in (
        (engine_token_file, TOKEN_ENV, engine_port),
        (cluster_token_file, CLUSTER_TOKEN_ENV, cluster_port),
    ):
        try:
            token = read_key(path())
            number = port()
        except (OSError, RuntimeError, ValueError):  # no working directory, a path with a NUL
            continue
        foreign = foreign_listeners(number) if number is not None else []
        if foreign:
            held = (
                f"port {number}, where this lakehouse's "
                f"{'warm engine' if name == TOKEN_ENV else 'Thrift server'} listens, is held by "
                f"another user's process (uid {', '.join(map(str, foreign))})"
            )
            if token is not None or name in os.environ:
                print(
                    f"gdpr_lakehouse: {held}; its token is not given to this process, and "
                    "dbt's target for it will not connect. Stop that process, or give the "
                    "server another port, then start it again",
                    file=sys.stderr,
                )
            os.environ.pop(name, None)
            if name == TOKEN_ENV:
                os.environ[REFUSED_ENV] = f"refused: {held}; nothing was sent to it"
        elif token is not None:
            os.environ[name] = token


# The Spark JVM's class archive (python_jobs.class_archive): LAKEHOUSE_CLASS_ARCHIVE
# chooses it (empty: none), by default in this venv; profiles.yml names the one this hook
# found usable in JVM_ARCHIVE_ENV to the local target's JVM.
ARCHIVE_ENV = "LAKEHOUSE_CLASS_ARCHIVE"
JVM_ARCHIVE_ENV = "LAKEHOUSE_JVM_CLASS_ARCHIVE"


def class_archive_file() -> Path | None:
    """$LAKEHOUSE_CLASS_ARCHIVE, else gdpr_lakehouse/spark-classes.jsa in this venv (the
    venv whose pyspark it is made for); None when the setting is empty, or by default
    outside a venv."""
    configured = os.environ.get(ARCHIVE_ENV)
    if configured is not None:
        return Path(configured).expanduser() if configured.strip() else None
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sys.prefix) / "gdpr_lakehouse" / "spark-classes.jsa"


def usable_class_archive(path: Path) -> bool:
    """True when a JVM may map the archive: a regular file (not a link), this user's, that
    no other user may write (the JVM runs what it holds), of the size its stamp recorded
    when it was made. A JVM maps an archive cut short past its end and dies of SIGBUS at
    start, whatever -Xshare says: the size is what keeps a damaged one from stopping
    every command."""
    try:
        facts = path.lstat()
        recorded = path.with_name(path.name + ".stamp").read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return (
        stat.S_ISREG(facts.st_mode)
        and not facts.st_mode & 0o022
        and (not hasattr(os, "geteuid") or facts.st_uid == os.geteuid())
        and len(recorded) == 2
        and recorded[1] == str(facts.st_size)
    )


def load_class_archive() -> None:
    os.environ.pop(JVM_ARCHIVE_ENV, None)
    try:
        path = class_archive_file()
        # Spark splits the driver's Java options at whitespace: such a path would reach
        # the JVM as two options, and it would not start
        spaced = path is not None and any(char.isspace() for char in str(path))
        if path is not None and not spaced and usable_class_archive(path):
            os.environ[JVM_ARCHIVE_ENV] = str(path)
    except (OSError, RuntimeError, ValueError):  # no home directory, a path with a NUL
        return


def private_umask() -> None:
    """This process's umask gains 077: every file and folder it makes from here on, and
    every child process's (a Spark JVM's scratch files), is its owner's only."""
    os.umask(os.umask(0o077) | 0o077)


def _flag(args: list[str], name: str) -> str | None:
    """The value of ``name`` in dbt's arguments (``--name value`` or ``--name=value``);
    the last one wins, as with click."""
    value = None
    for position, arg in enumerate(args):
        if arg == name and position + 1 < len(args):
            value = args[position + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1 :]
    return value


def dbt_output_folders(args: list[str], env: dict[str, str] | os._Environ, cwd: Path) -> list[Path]:
    """The folders a dbt command given ``args`` writes its log and its artifacts to, found
    as dbt finds them: ``--log-path`` or $DBT_LOG_PATH (relative to the current folder),
    else the project's ``logs``; ``--target-path`` or $DBT_TARGET_PATH (relative to the
    project), else the project's ``target``. The project: ``--project-dir`` or
    $DBT_PROJECT_DIR, else the nearest folder up from the current one holding a
    dbt_project.yml, else the current one. (``log-path`` and ``target-path`` set in
    dbt_project.yml, which dbt deprecates, are not read here: the umask still covers
    what dbt makes there.)"""
    project_dir = _flag(args, "--project-dir") or env.get("DBT_PROJECT_DIR")
    if project_dir:
        project = cwd / project_dir
    else:
        project = next(
            (folder for folder in (cwd, *cwd.parents) if (folder / "dbt_project.yml").is_file()),
            cwd,
        )
    logs = _flag(args, "--log-path") or env.get("DBT_LOG_PATH")
    target = _flag(args, "--target-path") or env.get("DBT_TARGET_PATH")
    return [
        cwd / logs if logs else project / "logs",
        project / target if target else project / "target",
    ]


def private_dbt_output(args: list[str]) -> None:
    """Make this process's new files and folders its owner's only, and narrow the dbt
    output folders ``args`` name to 700 where they exist and are this user's (another
    user's folder is theirs to set)."""
    private_umask()
    try:
        folders = dbt_output_folders(args, os.environ, Path.cwd())
    except (OSError, RuntimeError, ValueError):  # no working directory, a path with a NUL
        return
    for folder in folders:
        try:
            facts = folder.stat()
            if stat.S_ISDIR(facts.st_mode) and facts.st_uid == os.geteuid():
                folder.chmod(0o700)
        except (OSError, ValueError):  # not there yet: dbt makes it under the umask
            continue


def load() -> None:
    if hasattr(os, "geteuid") and Path(sys.argv[0] if sys.argv else "").name == "dbt":
        private_dbt_output(sys.argv[1:])
    load_engine_token()
    load_class_archive()
    if os.environ.get(ENV):
        return
    try:
        path = kek_file()
        key = read_key(path) if path is not None else None
    except (OSError, RuntimeError):  # no home directory to find it in
        return
    if key is not None:
        os.environ[ENV] = key


load()
