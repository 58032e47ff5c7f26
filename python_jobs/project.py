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


def run_job(main: Callable[[], int], name: str) -> NoReturn:
    """A job's `python -m` entry: its exit status, or 2 and one line for a ProjectError."""
    try:
        sys.exit(main())
    except ProjectError as error:
        print(f"{name}: {error}", file=sys.stderr)
        sys.exit(2)


def project_root() -> Path:
    """The dbt project root: $LAKEHOUSE_PROJECT_DIR, else the checkout this package is in."""
    configured = os.environ.get("LAKEHOUSE_PROJECT_DIR")
    root = Path(configured) if configured else Path(__file__).resolve().parent.parent
    if not (root / "dbt_project.yml").is_file():
        raise ProjectError(
            f"{root} is not the gdpr_lakehouse dbt project (no dbt_project.yml); "
            "set LAKEHOUSE_PROJECT_DIR to the project root"
        )
    return root.resolve()


def state_dir() -> Path:
    """The one ignored folder holding warehouse, metastore, checkpoints and output.

    $LAKEHOUSE_DIR, default ``.lakehouse`` under the project root; a relative value is
    taken relative to the project root, where dbt runs.
    """
    configured = Path(os.environ.get("LAKEHOUSE_DIR", ".lakehouse"))
    path = configured if configured.is_absolute() else project_root() / configured
    return path.resolve()


def project_vars() -> dict[str, Any]:
    """The vars dbt_project.yml sets (what a run without --vars sees)."""
    with (project_root() / "dbt_project.yml").open() as handle:
        return (yaml.safe_load(handle) or {}).get("vars") or {}


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


def profile_target(target: str = "local") -> dict[str, Any]:
    """One output of profiles.yml, rendered against the environment.

    Paths default to this project's state folder whatever the current directory, so a
    job started from elsewhere still finds dbt's warehouse.
    """
    path = project_root() / "profiles.yml"
    with path.open() as handle:
        profiles = yaml.safe_load(handle)
    outputs = profiles[PROFILE_NAME]["outputs"]
    if target not in outputs:
        raise ProjectError(
            f"profiles.yml has no target {target!r}; targets are: {', '.join(sorted(outputs))}"
        )
    env = dict(os.environ)
    env["LAKEHOUSE_DIR"] = str(state_dir())
    env["LAKEHOUSE_PROJECT_DIR"] = str(project_root())
    return _render(outputs[target], env)


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


_INTERVAL = re.compile(
    r"^\s*(?:interval\s+)?(\d+)\s+(second|minute|hour|day|week)s?\s*$", re.IGNORECASE
)
_UNIT_HOURS = {"second": 1 / 3600, "minute": 1 / 60, "hour": 1, "day": 24, "week": 168}


def interval_hours(text: str) -> float:
    """Hours of a Delta interval property ('interval 7 days', '1 hours')."""
    match = _INTERVAL.match(text or "")
    if not match:
        raise ProjectError(f"cannot read the retention interval {text!r}")
    return int(match.group(1)) * _UNIT_HOURS[match.group(2).lower()]
