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
