"""Where the project lives, its local state folder, and its dbt profile and manifest.

The dbt profile is the single source of Spark settings; this module renders it the
way dbt does (``env_var`` with dbt's semantics) so Python never keeps a second copy.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import jinja2
import yaml

PROFILE_NAME = "gdpr_lakehouse"


class ProjectError(RuntimeError):
    """A problem with the project's own files or environment, stated for a user."""


def commit_tag(tool: str, purpose: str, **extra: str) -> str:
    """The userMetadata JSON a job's Delta commits carry: who (LAKEHOUSE_ACTOR, else the
    OS user), which tool, why, and any ids (the same keys dbt's set_commit_metadata uses)."""
    actor = os.environ.get("LAKEHOUSE_ACTOR") or os.environ.get("USER") or "unknown"
    tag = {"actor": actor, "tool": tool, "purpose": purpose}
    tag.update({key: value for key, value in extra.items() if value})
    return json.dumps(tag, sort_keys=True)


_PROG: list[str] = []


def prog(default: str) -> str:
    """A job's name in its --help: ``gdpr-lakehouse <command>`` when the CLI runs it."""
    return _PROG[-1] if _PROG else default


def run_job(main: Callable[[], int], name: str) -> NoReturn:
    """A job's `python -m` entry: its exit status, or 2 and one line for a ProjectError.

    While the warm engine is up (python -m python_jobs.engine up), a job that runs
    there is sent to it instead of starting a JVM of its own."""
    try:
        from python_jobs import engine

        routed = engine.route(f"python_jobs.{name}", sys.argv[1:])
        if routed is not None:
            sys.exit(routed)
        sys.exit(main())
    except ProjectError as error:
        print(f"{name}: {error}", file=sys.stderr)
        sys.exit(2)


def package_root() -> Path:
    """The gdpr_lakehouse checkout or installed package: its macros, conf and profile."""
    return Path(__file__).resolve().parent.parent


def engine_root() -> Path:
    """Where the engine's dbt package is: this checkout (an editable install), else the
    copy `dbt deps` put in the project's packages folder (a plain ``pip install``)."""
    if (package_root() / "profiles.yml").is_file():
        return package_root()
    with (project_root() / "dbt_project.yml").open() as handle:
        folder = (yaml.safe_load(handle) or {}).get("packages-install-path") or "dbt_packages"
    installed = project_root() / folder / PROFILE_NAME
    if not (installed / "profiles.yml").is_file():
        raise ProjectError(
            f"the gdpr_lakehouse dbt package is not in {installed}: add it to packages.yml "
            "and run `dbt deps`"
        )
    return installed.resolve()


def project_root() -> Path:
    """The dbt project the jobs work on, as dbt finds it.

    $LAKEHOUSE_PROJECT_DIR (what ``gdpr-lakehouse --project-dir`` sets), else the current
    directory when it holds a dbt_project.yml, else this checkout (the demo lakehouse).
    """
    from python_jobs.kek_hook import default_project_root

    root = default_project_root()
    if not (root / "dbt_project.yml").is_file():
        raise ProjectError(
            f"{root} is not a dbt project (no dbt_project.yml); give --project-dir (or set "
            "LAKEHOUSE_PROJECT_DIR) to the folder of the dbt project that installs gdpr_lakehouse"
        )
    return root.resolve()


def state_dir() -> Path:
    """The one ignored folder holding warehouse, metastore, checkpoints and output.

    $LAKEHOUSE_DIR, default ``.lakehouse`` under the project root; a relative value is
    taken relative to the project root, where dbt runs.
    """
    from python_jobs.kek_hook import lakehouse_folder

    return lakehouse_folder(project_root())


def project_vars() -> dict[str, Any]:
    """The vars dbt_project.yml sets (what a run without --vars sees), as the engine's
    macros see them: an adopter's ``vars: {gdpr_lakehouse: {...}}`` over its global ones."""
    with (project_root() / "dbt_project.yml").open() as handle:
        declared = (yaml.safe_load(handle) or {}).get("vars") or {}
    scoped = declared.get(PROFILE_NAME)
    merged = {key: value for key, value in declared.items() if key != PROFILE_NAME}
    if isinstance(scoped, dict):
        merged.update(scoped)
    return merged


def private_folder(folder: Path, narrow: bool = True) -> Path:
    """`folder` made with every missing level mode 700 (its owner's only), and narrowed to
    700 if it already exists and is this user's (unless `narrow` is false: a folder an
    operator set up is left as it is): personal data is written there."""
    missing = []
    for level in (folder, *folder.parents):
        if level.exists():
            break
        missing.append(level)
    for level in reversed(missing):
        level.mkdir(mode=0o700, exist_ok=True)
        level.chmod(0o700)  # mkdir's mode passes through the process umask
    if narrow and folder.stat().st_uid == os.getuid():  # another user's folder: theirs to set
        folder.chmod(0o700)
    return folder


def open_private(path: Path, mode: str = "wb") -> Any:
    """`path` opened for writing, created mode 600, and narrowed to 600 if an older file
    was wider (the mode stays with a file truncated in place): personal data or a key."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
        return os.fdopen(descriptor, mode)
    except BaseException:
        os.close(descriptor)
        raise


# What a request id may be where it names a file or a folder: the ids the project writes
# (req-, acc-, rec-, rst-... then digits, T and hex) all fit; `..`, `/` never do.
FILE_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def id_path(folder: Path, request_id: object, suffix: str = "") -> Path:
    """``folder/<request_id><suffix>`` for a request id, which is often read back from a
    request log (a table any writer of the lakehouse can insert into): an id that is not
    one the project writes names no file."""
    if not isinstance(request_id, str) or not FILE_SAFE_ID.match(request_id):
        raise ProjectError(
            f"request id {str(request_id)[:80]!r} is not one this project writes (a letter or "
            "digit, then letters, digits, _ and -; 128 at most), so it names no file; nothing "
            "was written. Fix that row of the request log by hand"
        )
    return folder / f"{request_id}{suffix}"


def write_private(path: Path, text: str) -> None:
    """`text` in `path`, mode 600 (a secret), written whole under a scratch name made
    anew (never one planted before, nor a link), then renamed into place: a reader finds
    the old file or the new one, never part of one."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    scratch.unlink(missing_ok=True)
    descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.replace(scratch, path)


def landing_dir() -> Path:
    """The landing zone: var landing_path, else <state>/landing (as dbt's landing_path())."""
    configured = project_vars().get("landing_path")
    return Path(str(configured)) if configured else state_dir() / "landing"


def dbt_output_dirs() -> dict[str, Path]:
    """dbt's own output folders: target/ ($DBT_TARGET_PATH) and logs/ ($DBT_LOG_PATH)."""
    root = project_root()
    return {
        "target": root / os.environ.get("DBT_TARGET_PATH", "target"),
        "logs": root / os.environ.get("DBT_LOG_PATH", "logs"),
    }


def _env_var(env: Mapping[str, str], name: str, default: str | None = None) -> str:
    """dbt's env_var(): the variable's value, else the default, else an error."""
    if name in env:
        return env[name]
    if default is not None:
        return str(default)
    raise ProjectError(f"profiles.yml needs the environment variable {name}, which is not set")


def _render(value: Any, env: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: _render(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [_render(item, env) for item in value]
    if isinstance(value, str) and ("{{" in value or "{%" in value):
        environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
        environment.filters["as_number"] = lambda v: v
        environment.filters["as_bool"] = lambda v: v
        environment.filters["as_text"] = lambda v: v
        template = environment.from_string(value)
        return template.render(env_var=lambda name, default=None: _env_var(env, name, default))
    return value


def profile_name() -> str:
    """The profile the project's dbt_project.yml names."""
    with (project_root() / "dbt_project.yml").open() as handle:
        name = (yaml.safe_load(handle) or {}).get("profile")
    if not isinstance(name, str) or not name:
        raise ProjectError(f"{project_root() / 'dbt_project.yml'} names no profile")
    return name


def profiles_file() -> Path:
    """Where dbt reads profiles.yml: $DBT_PROFILES_DIR, else the project folder, the
    current directory or ~/.dbt, the first that holds one."""
    configured = os.environ.get("DBT_PROFILES_DIR")
    folders = (
        [Path(configured)] if configured else [project_root(), Path.cwd(), Path.home() / ".dbt"]
    )
    for folder in folders:
        if (folder / "profiles.yml").is_file():
            return folder / "profiles.yml"
    raise ProjectError(
        "no profiles.yml in " + ", ".join(str(f) for f in folders) + " (set DBT_PROFILES_DIR)"
    )


def _outputs(path: Path, name: str) -> dict[str, Any]:
    with path.open() as handle:
        profiles = yaml.safe_load(handle) or {}
    if name not in profiles or not isinstance(profiles[name], dict):
        raise ProjectError(f"{path} has no profile {name!r}")
    return profiles[name]


def profile_outputs() -> tuple[Path, str, dict[str, Any]]:
    """The project's profile: (the profiles.yml profiles_file finds, the profile's name,
    its outputs unrendered)."""
    path = profiles_file()
    name = profile_name()
    outputs = _outputs(path, name).get("outputs")
    return path, name, outputs if isinstance(outputs, dict) else {}


def _render_env(project_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["LAKEHOUSE_DIR"] = str(state_dir())
    env["LAKEHOUSE_PROJECT_DIR"] = str(project_dir)
    return env


def profile_target(target: str = "local") -> dict[str, Any]:
    """One output of the project's dbt profile, rendered against the environment.

    Paths default to the project's state folder whatever the current directory, so a
    job started from elsewhere still finds dbt's warehouse.
    """
    _, _, outputs = profile_outputs()
    if target not in outputs:
        raise ProjectError(
            f"profiles.yml has no target {target!r}; targets are: {', '.join(sorted(outputs))}"
        )
    return _render(outputs[target], _render_env(project_root()))


def engine_spark_parameters() -> dict[str, str]:
    """The Spark settings of the engine's own ``local`` target (Delta, jars, metastore,
    small-machine tuning), rendered for the project's state folder."""
    path = engine_root() / "profiles.yml"
    local = _outputs(path, PROFILE_NAME)["outputs"]["local"]
    rendered = _render(local["server_side_parameters"], _render_env(engine_root()))
    return {str(key): str(value) for key, value in rendered.items()}


def spark_parameters() -> dict[str, str]:
    """The Spark settings a job's session uses: the engine's, overlaid by the project's
    own session target (its default target, else one named ``local``) when it has one.

    So a job and the adopter's ``dbt`` share warehouse and metastore, and an adopter
    whose target is a cluster or Databricks still gets a working local session."""
    settings = engine_spark_parameters()
    if project_root() == engine_root():
        return settings
    profile = _outputs(profiles_file(), profile_name())
    outputs = profile.get("outputs") or {}
    env = _render_env(project_root())
    default = _render(str(profile.get("target", "")), env)
    for name in (os.environ.get("DBT_TARGET") or default, "local"):
        output = outputs.get(name)
        if isinstance(output, dict) and output.get("method") == "session":
            own = _render(output.get("server_side_parameters") or {}, env)
            settings.update({str(key): str(value) for key, value in own.items()})
            break
    return settings


@cache
def _read_manifest(path: Path, mtime_ns: int) -> dict[str, Any]:
    with path.open() as handle:
        return json.load(handle)


def manifest(target_path: Path | None = None) -> dict[str, Any]:
    """dbt's target/manifest.json: the graph, including each node's privacy meta.

    The target folder is dbt's: --target-path here, else DBT_TARGET_PATH (the
    environment variable dbt itself reads), else <project>/target.
    """
    if target_path is None:
        configured = os.environ.get("DBT_TARGET_PATH")
        target_path = Path(configured) if configured else project_root() / "target"
        if not target_path.is_absolute():
            target_path = project_root() / target_path
    path = target_path / "manifest.json"
    if not path.is_file():
        raise ProjectError(f"{path} is missing: run `dbt parse` (or `make run`) first")
    return _read_manifest(path, path.stat().st_mtime_ns)


def whole_days_var(
    name: str, default: int, most: int, meaning: str, configured: object = None
) -> int:
    """A var of the project (dbt_project.yml) that is whole days from 1 to `most`:
    `configured` when given, else the project's value, else `default`; a clear error
    naming the var and what it means otherwise."""
    value = project_vars().get(name, default) if configured is None else configured
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ProjectError(
            f"var {name} is {str(value)[:40]!r}: allowed is a whole number of days from 1 "
            f"to {most} ({meaning})"
        )
    return value


def interval_hours(text: str) -> float:
    """Hours of a Delta interval property ('interval 7 days', '1 hours'): the rule of the
    macro _retention_hours, which the operations and the post-hook read."""
    from python_jobs.macros import engine_macros

    hours = engine_macros()._retention_hours(text)
    if hours is None:
        raise ProjectError(f"cannot read the retention interval {text!r}")
    return float(hours)
