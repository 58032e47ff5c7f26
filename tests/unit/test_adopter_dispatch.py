"""An adopter overrides an engine macro the dbt way: a `dispatch` entry for the
gdpr_lakehouse namespace and its own `spark__<macro>` (no JVM: `dbt compile --inline`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.dbt_harness import ROOT

ADOPTER = ROOT / "tests" / "adopter"
DBT = str(Path(sys.executable).with_name("dbt"))


def _compile(project: Path, jinja: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKEHOUSE_", "DBT_"))}
    env.update(
        DBT_PROFILES_DIR=str(project),
        LAKEHOUSE_DIR=str(project / "lakehouse"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    subprocess.run([DBT, "deps", "-q"], cwd=project, env=env, check=True, timeout=300)
    done = subprocess.run(
        [DBT, "compile", "-q", "--no-populate-cache", "--inline", jinja],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def test_an_adopter_overrides_an_engine_macro_by_dispatch(tmp_path: Path) -> None:
    project = tmp_path / "crm"
    shutil.copytree(ADOPTER, project, ignore=shutil.ignore_patterns("lifecycle.py"))
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    call = "{{ gdpr_lakehouse.pseudonym('k', 'id') }}"
    # the engine's own implementation first
    assert _compile(project, call) == "sha2(concat(k, encode(id, 'utf-8')), 256)"
    config = yaml.safe_load((project / "dbt_project.yml").read_text())
    config["dispatch"].append(
        {"macro_namespace": "gdpr_lakehouse", "search_order": ["crm", "gdpr_lakehouse"]}
    )
    (project / "dbt_project.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "macros").mkdir(exist_ok=True)
    (project / "macros" / "pseudonym.sql").write_text(
        "{% macro spark__pseudonym(key_expr, id_expr) -%}"
        "sha2(concat({{ key_expr }}, 'crm', {{ id_expr }}), 512)"
        "{%- endmacro %}"
    )
    assert _compile(project, call) == "sha2(concat(k, 'crm', id), 512)"
