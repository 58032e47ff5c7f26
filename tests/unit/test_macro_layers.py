"""The macro layers depend one way: utils -> naming -> delta -> landing -> privacy -> tests.

A macro may call macros of its own folder or of a folder below it, never above: the
Delta helpers know nothing of erasure, the privacy lifecycle nothing of the compliance
tests. Read from the macro files themselves (no dbt, no JVM).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.dbt_harness import ROOT

LAYERS = ("utils", "naming", "delta", "landing", "privacy", "tests")
DEFINITION = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\(")
CALL = re.compile(r"gdpr_lakehouse\.(\w+)\s*\(")


def calls_upward(macros: Path) -> list[str]:
    layers = {}
    for path in macros.rglob("*.sql"):
        for name in DEFINITION.findall(path.read_text()):
            layers[name] = path.relative_to(macros).parts[0]
    found = []
    for path in sorted(macros.rglob("*.sql")):
        caller = path.relative_to(macros).parts[0]
        for name in CALL.findall(path.read_text()):
            callee = layers.get(name)
            if callee and LAYERS.index(callee) > LAYERS.index(caller):
                found.append(f"{path.relative_to(macros)} ({caller}) calls {name} ({callee})")
    return found


def test_every_macro_folder_is_a_layer() -> None:
    folders = {p.name for p in (ROOT / "macros").iterdir() if p.is_dir()}
    assert folders == set(LAYERS)


def test_no_macro_calls_a_layer_above_its_own() -> None:
    assert calls_upward(ROOT / "macros") == []


def test_the_check_finds_an_upward_call(tmp_path: Path) -> None:
    macros = tmp_path / "macros"
    shutil.copytree(ROOT / "macros", macros)
    (macros / "delta" / "bad.sql").write_text(
        "{% macro bad() %}{{ gdpr_lakehouse.gdpr_erase() }}{% endmacro %}"
    )
    assert calls_upward(macros) == ["delta/bad.sql (delta) calls gdpr_erase (privacy)"]


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
    with (macros / "privacy" / "crypto" / "pseudonym.sql").open("a") as handle:
        handle.write("\n{% macro plain(x) %}{{ x }}{% endmacro %}\n")
    assert shape_problems(macros) == [
        "privacy/crypto/pseudonym.sql: 2 public macros ['pseudonym', 'plain']",
        "privacy/crypto/pseudonym.sql: plain is not a dispatch stub",
    ]
