"""The unit layer's renderer: the engine's macros in plain Jinja (python_jobs.macros),
with the parts of dbt's compile context they read, and no dbt, warehouse or JVM.

`Jinja.compile_inline` and `compile_errors` answer what `DbtProject`'s methods of the
same name answer through `dbt compile --inline`, in milliseconds instead of seconds: a
dbt compile pays a partial parse (~3-5 s under CI's load), and every new `--vars` or
target a full parse (~10-40 s). What needs dbt itself (parsing the project, a package's
dispatch config, the Databricks adapter's own macros) stays on `DbtProject`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import yaml

from python_jobs.macros import Macros, dbt_modules
from python_jobs.project import project_vars

_UNSET = object()


@dataclass
class Jinja:
    """Render as `dbt compile --inline` would, with these vars and this target type
    (`spark` for the local, warm and thrift targets; `databricks`)."""

    vars: dict[str, Any] | str | None = None
    target: str = "spark"
    graph: dict[str, Any] | None = None

    def with_vars(self, vars_: dict[str, Any] | str | None, target: str | None = None) -> Jinja:
        """This renderer with other vars (a dict, or YAML as `--vars` takes it) and,
        when given, another target type."""
        return Jinja(vars_, target or self.target, self.graph)

    def macros(self, warehouse: dict[str, Any] | None = None) -> Macros:
        """The namespace; `warehouse` adds to or replaces dbt's context (a fake
        run_query, an invocation_id) for a test that watches an operation's statements."""
        declared = dict(project_vars())
        given = yaml.safe_load(self.vars) if isinstance(self.vars, str) else self.vars
        declared.update(given or {})

        def var(name: str, default: Any = _UNSET) -> Any:
            if name in declared:
                return declared[name]
            if default is _UNSET:
                raise Macros.CompilerError(f"Required var '{name}' not found in config")
            return default

        def env_var(name: str, default: Any = _UNSET) -> Any:
            if name in os.environ:
                return os.environ[name]
            if default is _UNSET:
                raise Macros.CompilerError(f"Env var required but not provided: '{name}'")
            return default

        def show(message: Any, info: bool = False) -> str:
            return ""  # dbt's log() and print() render nothing into the SQL

        import pytz

        context = {
            "var": var,
            "env_var": env_var,
            "target": SimpleNamespace(
                type=self.target,
                name="databricks" if self.target == "databricks" else "local",
                schema="default",
            ),
            "modules": dbt_modules(),
            "log": show,
            "print": show,
            "tojson": json.dumps,
            "local_md5": lambda text: hashlib.md5(text.encode()).hexdigest(),
            "flags": SimpleNamespace(WHICH="compile"),
            "run_started_at": datetime.datetime.now(pytz.utc),
            "execute": True,
        }
        if self.graph is not None:
            context["graph"] = self.graph
        context.update(warehouse or {})
        return Macros(context)

    def compile_inline(self, sql: str) -> str:
        return self.macros().render(sql)

    def compile_errors(self, sql: str) -> tuple[bool, str]:
        try:
            self.macros().render(sql)
        except Macros.CompilerError as error:
            return False, str(error)
        return True, ""
