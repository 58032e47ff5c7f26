"""Every public macro and each of its arguments is documented in macros/_macros.yml
(and nothing there names an argument the macro does not take). Public: not `_`-private
and not an adapter's implementation (`default__`, `spark__`, `databricks__`)."""

from __future__ import annotations

import re

import yaml

from tests.dbt_harness import ROOT

_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\s*\(([^)]*)\)")


def _public_macros() -> dict[str, list[str]]:
    macros = {}
    for path in sorted((ROOT / "macros").rglob("*.sql")):
        for name, signature in _MACRO.findall(path.read_text()):
            if name.startswith(("_", "default__", "spark__", "databricks__")):
                continue
            arguments = [part.split("=")[0].strip() for part in signature.split(",")]
            macros[name] = [argument for argument in arguments if argument]
    return macros


def _documented() -> dict[str, list[str]]:
    entries = yaml.safe_load((ROOT / "macros" / "_macros.yml").read_text())["macros"]
    return {
        entry["name"]: [argument["name"] for argument in entry.get("arguments") or []]
        for entry in entries
        if entry.get("description")
    }


def test_every_public_macro_is_documented_with_its_arguments() -> None:
    public, documented = _public_macros(), _documented()
    assert len(public) > 90
    missing = sorted(set(public) - set(documented))
    assert not missing, f"not in macros/_macros.yml: {missing}"
    wrong = {
        name: (documented[name], arguments)
        for name, arguments in public.items()
        if sorted(documented[name]) != sorted(arguments)
    }
    assert not wrong, f"documented arguments differ from the macro's (documented, actual): {wrong}"


def test_each_argument_is_a_name_a_type_and_a_description() -> None:
    """A comma in an unquoted flow-style description splits it into a key dbt refuses."""
    entries = yaml.safe_load((ROOT / "macros" / "_macros.yml").read_text())["macros"]
    odd = [
        (entry["name"], argument)
        for entry in entries
        for argument in entry.get("arguments") or []
        if set(argument) != {"name", "type", "description"}
    ]
    assert not odd
