"""Every var the engine reads is declared once in dbt_project.yml's `vars:` block, with
the default each macro and job carries where it reads it (dbt renders the project's
configs before vars exist, so the point of use keeps a default too: the two must agree).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from python_jobs import purge, subject_access
from tests.dbt_harness import ROOT

# var('name', <default>) in Jinja; project_vars().get("name", <default>) in the jobs
JINJA_VAR = re.compile(r"""\bvar\(\s*'(\w+)'\s*(?:,\s*((?:[^()]|\([^()]*\))*?))?\s*\)""")
FLAG_VAR = re.compile(r"""_flag_var\(\s*'(\w+)'\s*(?:,\s*([^)]*))?\)""")
JOB_VAR = re.compile(r"""project_vars\(\)\.get\(\s*"(\w+)"\s*(?:,\s*([^)]*))?\)""")
# python_jobs.project.whole_days_var("name", default, most, ...)
DAYS_VAR = re.compile(r"""whole_days_var\(\s*"(\w+)",\s*([^,]+),""")
# computed where they are read (from the environment or a macro): listed, not declared
COMPUTED = {"landing_path", "subject_id_pattern"}
# read only to stop a run that still sets them (macros/privacy/ledger/request_deadline.sql)
RETIRED = {"erasure_deadline_days"}
JINJA_LITERALS = {"true": "True", "false": "False", "none": "None"}
# a job's default named by a module constant: its value, read from the module
PYTHON_CONSTANTS = {
    "RECORD_RETENTION_DAYS": repr(purge.RECORD_RETENTION_DAYS),
    "EXPORT_RETENTION_DAYS": repr(subject_access.EXPORT_RETENTION_DAYS),
}


def _declared() -> dict:
    return yaml.safe_load((ROOT / "dbt_project.yml").read_text())["vars"]


def _literal(text: str | None):
    """The default as a value; `...` when it is computed (an env_var, a macro)."""
    if text is None:
        return ...
    text = PYTHON_CONSTANTS.get(text.strip(), text.strip())
    text = re.sub(r"\b(true|false|none)\b", lambda m: JINJA_LITERALS[m.group(1)], text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return ...


def read_vars(root: Path) -> dict[str, set]:
    """{var: {defaults at its points of use}} over the engine's macros, models, tests,
    project configs and jobs."""
    found: dict[str, set] = {}
    sources = [
        *(root / "macros").rglob("*.sql"),
        *(root / "models").rglob("*.sql"),
        *(root / "snapshots").rglob("*.sql"),
        *(root / "tests" / "compliance").rglob("*.sql"),
        *root.glob("dbt_project.yml"),
    ]
    for path in sources:
        text = path.read_text()
        for pattern in (JINJA_VAR, FLAG_VAR):
            for name, default in pattern.findall(text):
                found.setdefault(name, set()).add(repr(_literal(default or None)))
    for path in (root / "python_jobs").glob("*.py"):
        for pattern in (JOB_VAR, DAYS_VAR):
            for name, default in pattern.findall(path.read_text()):
                found.setdefault(name, set()).add(repr(_literal(default or None)))
    return found


def test_every_var_read_is_declared() -> None:
    undeclared = sorted(set(read_vars(ROOT)) - set(_declared()) - COMPUTED - RETIRED)
    assert not undeclared, f"read but not in dbt_project.yml vars: {undeclared}"


def test_nothing_declared_is_unused() -> None:
    assert sorted(set(_declared()) - set(read_vars(ROOT))) == []


def test_computed_defaults_are_not_declared() -> None:
    """Declaring landing_path (even as null) would replace the default computed from
    $LAKEHOUSE_DIR: var() returns a declared value, whatever it is."""
    assert not (COMPUTED | RETIRED) & set(_declared())


def test_each_default_at_its_point_of_use_is_the_declared_one() -> None:
    declared = _declared()
    differing = {
        name: (declared[name], sorted(defaults))
        for name, defaults in read_vars(ROOT).items()
        if name in declared
        for default in defaults
        # `...`: read without a default (only where it is guarded by a default too)
        if default != "Ellipsis" and default != repr(declared[name])
    }
    assert not differing, f"(declared, at point of use): {differing}"


def test_the_check_sees_a_default_that_differs(tmp_path: Path) -> None:
    root = tmp_path
    (root / "macros").mkdir()
    (root / "macros" / "x.sql").write_text(
        "{{ var('erasure_max_subjects', 500) }} {{ var('new_one', true) }}"
    )
    found = read_vars(root)
    assert found == {"erasure_max_subjects": {"500"}, "new_one": {"True"}}
