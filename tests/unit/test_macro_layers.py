"""The macro layers depend one way: utils -> naming -> delta -> landing -> privacy -> tests,
and inside privacy, its lifecycle: keys -> access -> ledger -> erase -> restore.

A macro may call macros of its own folder or of a folder below it, never above: the
Delta helpers know nothing of erasure, the privacy lifecycle nothing of the compliance
tests; the ledger (requests, holds, tombstones) knows nothing of how rows are erased,
erasure nothing of restore. Read from the macro files themselves (no dbt, no JVM).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.dbt_harness import ROOT

LAYERS = ("utils", "naming", "delta", "landing", "privacy", "tests")
PRIVACY = ("keys", "access", "ledger", "erase", "restore")
DEFINITION = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\(")
CALL = re.compile(r"gdpr_lakehouse\.(\w+)\s*\(")


def _layer(relative: Path) -> tuple[int, int]:
    top = relative.parts[0]
    sub = PRIVACY.index(relative.parts[1]) if top == "privacy" else 0
    return LAYERS.index(top), sub


def _name(relative: Path) -> str:
    return "/".join(relative.parts[:2]) if relative.parts[0] == "privacy" else relative.parts[0]


def calls_upward(macros: Path) -> list[str]:
    layers = {}
    for path in macros.rglob("*.sql"):
        for name in DEFINITION.findall(path.read_text()):
            layers[name] = path.relative_to(macros)
    found = []
    for path in sorted(macros.rglob("*.sql")):
        caller = path.relative_to(macros)
        for name in CALL.findall(path.read_text()):
            callee = layers.get(name)
            if callee and _layer(callee) > _layer(caller):
                found.append(f"{caller} ({_name(caller)}) calls {name} ({_name(callee)})")
    return found


def test_every_macro_folder_is_a_layer() -> None:
    folders = {p.name for p in (ROOT / "macros").iterdir() if p.is_dir()}
    assert folders == set(LAYERS)
    privacy = ROOT / "macros" / "privacy"
    assert {p.name for p in privacy.iterdir()} == set(PRIVACY)


def test_the_check_finds_a_call_up_the_privacy_lifecycle(tmp_path: Path) -> None:
    macros = tmp_path / "macros"
    shutil.copytree(ROOT / "macros", macros)
    (macros / "privacy" / "ledger" / "bad.sql").write_text(
        "{% macro bad() %}{{ gdpr_lakehouse.restore_version() }}{% endmacro %}"
    )
    assert calls_upward(macros) == [
        "privacy/ledger/bad.sql (privacy/ledger) calls restore_version (privacy/restore)"
    ]


def test_no_macro_calls_a_layer_above_its_own() -> None:
    assert calls_upward(ROOT / "macros") == []


def test_the_check_finds_an_upward_call(tmp_path: Path) -> None:
    macros = tmp_path / "macros"
    shutil.copytree(ROOT / "macros", macros)
    (macros / "delta" / "bad.sql").write_text(
        "{% macro bad() %}{{ gdpr_lakehouse.gdpr_erase() }}{% endmacro %}"
    )
    assert calls_upward(macros) == ["delta/bad.sql (delta) calls gdpr_erase (privacy/erase)"]


# dbt's own names, which dbt calls unqualified: they cannot be dispatch stubs.
DBT_OVERRIDES = {"generate_alias_name", "generate_schema_name"}
IMPLEMENTATION = ("spark__", "databricks__")
STUB = re.compile(
    r"\{%-?\s*macro\s+(\w+)\s*\([^)]*\)\s*-?%\}\s*(?:\{%-?\s*do\s+gdpr_lakehouse\._reject_unknown_args\([^%]*%\}\s*)?"
    r"\{\{\s*return\(adapter\.dispatch\('(\w+)',\s*'gdpr_lakehouse'\)\("
)


def shape_problems(macros: Path) -> list[str]:
    """Each file holds at most one public macro; each public macro is a dispatch stub
    with a spark__ implementation beside it (databricks__ only where Databricks differs)."""
    problems = []
    for path in sorted(macros.rglob("*.sql")):
        text = path.read_text()
        names = DEFINITION.findall(text)
        public = [n for n in names if not n.startswith(("_", *IMPLEMENTATION, "default__"))]
        where = path.relative_to(macros)
        if len(public) > 1:
            problems.append(f"{where}: {len(public)} public macros {public}")
        if any(n.startswith("default__") for n in names):
            problems.append(f"{where}: default__ (the engine is Spark's: spark__)")
        stubs = {name: target for name, target in STUB.findall(text) if name == target}
        for name in public:
            if name in DBT_OVERRIDES:
                continue
            if name not in stubs:
                problems.append(f"{where}: {name} is not a dispatch stub")
            elif f"spark__{name}" not in names:
                problems.append(f"{where}: {name} has no spark__{name} beside it")
    return problems


def test_one_public_macro_per_file_each_a_dispatch_stub() -> None:
    assert shape_problems(ROOT / "macros") == []


def test_the_shape_check_finds_a_second_public_macro_and_a_plain_one(tmp_path: Path) -> None:
    macros = tmp_path / "macros"
    shutil.copytree(ROOT / "macros", macros)
    with (macros / "privacy" / "keys" / "pseudonym.sql").open("a") as handle:
        handle.write("\n{% macro plain(x) %}{{ x }}{% endmacro %}\n")
    assert shape_problems(macros) == [
        "privacy/keys/pseudonym.sql: 2 public macros ['pseudonym', 'plain']",
        "privacy/keys/pseudonym.sql: plain is not a dispatch stub",
    ]
