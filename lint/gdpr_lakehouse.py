"""The project's macros, rendered for sqlfluff's jinja templater (lint only).

sqlfluff lints models without a warehouse, so it cannot use dbt's templater (that
would start Spark). Its jinja templater knows dbt's builtins but not this project's
`gdpr_lakehouse.<macro>` namespace: this module is that namespace. It loads the real
macro files from macros/ into a small Jinja environment with just enough of dbt's
context (dispatch, return, var, ref, ...) to render them as SQL, so lint sees the SQL
the macros really produce. Listed in .sqlfluff as library_path.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2

_ROOT = Path(__file__).resolve().parent.parent
_MACROS: dict[str, Any] = {}


class _CompilerError(Exception):
    pass


def _dispatch(name: str, namespace: str | None = None) -> Any:
    for candidate in (f"spark__{name}", f"default__{name}"):
        if candidate in _MACROS:
            return _MACROS[candidate]
    return _MACROS[name]


def _raise(message: str) -> None:
    raise _CompilerError(message)


class _Return(Exception):
    """dbt's return(): the macro's value is the object, not its rendered text."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _returning(macro: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return macro(*args, **kwargs)
        except _Return as returned:
            return returned.value

    return call


class _Relation(str):
    """A relation as models see it: its name in SQL, and its parts."""

    def __new__(cls, schema: str, identifier: str) -> _Relation:
        relation = super().__new__(cls, f"{schema}.{identifier}")
        relation.schema, relation.identifier = schema, identifier
        return relation


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
    env.globals.update(
        {
            "adapter": SimpleNamespace(dispatch=_dispatch),
            "api": SimpleNamespace(
                Relation=SimpleNamespace(
                    create=lambda **parts: f"{parts.get('schema')}.{parts.get('identifier')}"
                )
            ),
            "invocation_id": "00000000-0000-0000-0000-000000000000",
            "return": _return,
            "modules": SimpleNamespace(re=re),
            "exceptions": SimpleNamespace(raise_compiler_error=_raise),
            "var": lambda name, default=None: default,
            "env_var": lambda name, default="": default,
            "ref": lambda *parts, **kwargs: parts[-1],
            "source": _Relation,
            "this": "this_relation",
            "target": SimpleNamespace(type="spark", name="local", schema="default"),
            "execute": False,
            "is_incremental": lambda: False,
            "gdpr_lakehouse": __import__(__name__),
        }
    )
    return env


def _load() -> None:
    env = _environment()
    for path in sorted((_ROOT / "macros").rglob("*.sql")):
        # every macro of the file, the private `_name` ones too (a template module
        # exports only public names)
        template = env.from_string(path.read_text())
        context = template.new_context()
        for _ in template.root_render_func(context):
            pass
        for name, value in context.vars.items():
            if not name.startswith("__"):
                _MACROS[name] = _returning(value) if callable(value) else value


def __getattr__(name: str) -> Any:
    if not _MACROS:
        _load()
    try:
        return _MACROS[name]
    except KeyError:
        raise AttributeError(name) from None
