"""The engine's macros rendered in plain Jinja, without dbt, a warehouse or a JVM.

One renderer for three readers:
- the jobs, which read the rules the macros declare (request states, the subject id
  rule, retention intervals, the time-travel floor, the row metrics of an operation),
  so a rule is written once, in the macro, and Python and the operations never differ;
- sqlfluff (lint/gdpr_lakehouse.py), whose jinja templater knows dbt's builtins but not
  the `gdpr_lakehouse.<macro>` namespace;
- the unit tests, which give it a fake warehouse and see which statements an operation
  issues, in milliseconds.

It loads the real macro files into a small Jinja environment with just enough of dbt's
context (dispatch, return, var, ref, ...) to render them.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import marshal
import os
import re
import stat
import sys
import types
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2

_CHECKOUT = Path(__file__).resolve().parent.parent
_EXTENSIONS = ["jinja2.ext.do", "jinja2.ext.loopcontrols"]


def _cache_dir() -> Path:
    """Where compiled macro files are kept between processes: $XDG_CACHE_HOME (default
    ~/.cache)/gdpr_lakehouse/jinja, or $GDPR_LAKEHOUSE_JINJA_CACHE."""
    explicit = os.environ.get("GDPR_LAKEHOUSE_JINJA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gdpr_lakehouse" / "jinja"


def _private(status: os.stat_result, kind: int) -> bool:
    """Whether a cache folder or entry is one only this user can have written: of
    that kind, owned by this user, writable by neither group nor others (False where
    the system has no user ids: there every process compiles for itself)."""
    if not hasattr(os, "geteuid"):
        return False
    return (
        stat.S_IFMT(status.st_mode) == kind
        and status.st_uid == os.geteuid()
        and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def _read_entry(folder: Path, entry: Path) -> bytes | None:
    """An entry's bytes, only from a folder and a file this user alone can write (an
    entry is code the jobs run, with the key-encryption key in their environment);
    None for anything else. The file's owner and mode are read from the file opened
    (no symlink followed), so it cannot be swapped between the check and the read."""
    if not _private(os.stat(folder), stat.S_IFDIR):
        return None
    descriptor = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as file:
        if not _private(os.fstat(descriptor), stat.S_IFREG):
            return None
        return file.read()


def _write_entry(folder: Path, entry: Path, data: bytes) -> None:
    """Write an entry atomically (a scratch file of this process, then os.replace),
    the folder made private to this user (0700) and the file readable by it alone;
    nothing is written into a folder others could write."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _private(os.stat(folder), stat.S_IFDIR):
        return
    scratch = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(scratch, flags, 0o600), "wb") as file:
        file.write(data)
    os.replace(scratch, entry)


@cache
def _compiled(source: str, filename: str) -> Any:
    """A macro file compiled to Python code once per process: compiling every file
    (~5 s on 2 cores) dominated each Macros(); the code does not depend on the
    environment's globals, which each Macros sets.

    And kept on disk between processes (_cache_dir): compiling the 149 files took
    1.5 s of every job's start. One entry per file path, holding the hash of the
    source, Jinja's and Python's versions it was compiled from; any other source, a
    version change, or an entry that cannot be read is compiled again and rewritten.
    An entry is loaded only from a folder and a file this user alone can write
    (_read_entry); elsewhere every process compiles for itself.
    """
    stamp = hashlib.sha256(
        "\0".join((jinja2.__version__, sys.version, filename, source)).encode()
    ).digest()
    folder = _cache_dir()
    entry = folder / (hashlib.sha256(filename.encode()).hexdigest()[:32] + ".code")
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        data = _read_entry(folder, entry)
        if data is not None and data[: len(stamp)] == stamp:
            code = marshal.loads(data[len(stamp) :])
            if isinstance(code, types.CodeType):
                return code
    code = jinja2.Environment(extensions=_EXTENSIONS).compile(source, filename=filename)
    with contextlib.suppress(OSError):
        _write_entry(folder, entry, stamp + marshal.dumps(code))
    return code


class _CompilerError(Exception):
    pass


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


def _raise(message: str) -> None:
    raise _CompilerError(message)


class _Relation(str):
    """A relation as models see it: its name in SQL, and its parts."""

    def __new__(cls, schema: str, identifier: str, database: str | None = None) -> _Relation:
        relation = super().__new__(cls, f"{schema}.{identifier}")
        relation.schema, relation.identifier, relation.database = schema, identifier, database
        return relation


def dbt_modules() -> dict[str, Any]:
    """What dbt's Jinja context offers as `modules`: only these names of datetime (no
    `timezone`: a macro that used it rendered here and failed in dbt), and what re and
    pytz export."""
    import pytz

    return {
        "datetime": {
            name: getattr(datetime, name)
            for name in ("date", "datetime", "time", "timedelta", "tzinfo")
        },
        "re": {name: getattr(re, name) for name in re.__all__},
        "pytz": {name: getattr(pytz, name) for name in pytz.__all__},
    }


class Macros:
    """The gdpr_lakehouse namespace: every macro of macros/, rendered in plain Jinja.

    `context` replaces or adds to dbt's context (var, run_query, adapter, graph,
    execute, ...); without it, what lint needs (no warehouse, execute false). Tests
    give a fake warehouse to render an operation's SQL in milliseconds and to see
    which statements it issued.
    """

    CompilerError = _CompilerError

    def __init__(self, context: dict[str, Any] | None = None, root: Path | None = None) -> None:
        self._macros: dict[str, Any] = {}
        env = jinja2.Environment(extensions=_EXTENSIONS)
        env.globals.update(
            {
                # dbt-spark's quoting: backticks
                "adapter": SimpleNamespace(dispatch=self._dispatch, quote=lambda name: f"`{name}`"),
                "api": SimpleNamespace(Relation=SimpleNamespace(create=self._create)),
                "invocation_id": "00000000-0000-0000-0000-000000000000",
                "return": _return,
                "modules": dbt_modules(),
                "exceptions": SimpleNamespace(raise_compiler_error=_raise),
                "var": lambda name, default=None: default,
                "env_var": lambda name, default="": default,
                "ref": lambda *parts, **kwargs: parts[-1],
                "source": _Relation,
                "this": "this_relation",
                "target": SimpleNamespace(type="spark", name="local", schema="default"),
                "execute": False,
                "is_incremental": lambda: False,
                "fromjson": json.loads,
                "local_md5": lambda text: hashlib.md5(str(text).encode()).hexdigest(),
                "gdpr_lakehouse": self,
            }
        )
        env.globals.update(context or {})
        self._env = env
        for path in sorted(((root or _CHECKOUT) / "macros").rglob("*.sql")):
            # every macro of the file, the private `_name` ones too (a template module
            # exports only public names)
            code = _compiled(path.read_text(), str(path))
            template = env.template_class.from_code(env, code, env.make_globals(None))
            rendered = template.new_context()
            for _ in template.root_render_func(rendered):
                pass
            for name, value in rendered.vars.items():
                if not name.startswith("__"):
                    self._macros[name] = _returning(value) if callable(value) else value

    @staticmethod
    def _create(**parts: Any) -> _Relation:
        return _Relation(parts.get("schema"), parts.get("identifier"), parts.get("database"))

    def _dispatch(self, name: str, namespace: str | None = None) -> Any:
        # dbt's search order: the target's adapter, then its parent (dbt-databricks
        # inherits dbt-spark's macros), then default
        kind = getattr(self._env.globals["target"], "type", "spark")
        for candidate in (f"{kind}__{name}", f"spark__{name}", f"default__{name}"):
            if candidate in self._macros:
                return self._macros[candidate]
        return self._macros[name]

    def render(self, source: str) -> str:
        """Jinja text rendered in this namespace's context, as `dbt compile --inline`
        renders it (stripped); a compiler error raises Macros.CompilerError."""
        try:
            return self._env.from_string(source).render().strip()
        except _Return as returned:  # a top-level return(), as dbt allows
            return str(returned.value)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_macros"][name]
        except KeyError:
            raise AttributeError(name) from None


@cache
def engine_macros() -> Macros:
    """The engine's own macros (this checkout, or the installed dbt package), rendered
    as a job needs them: no warehouse (`execute` false) and the project's vars."""
    from python_jobs.project import engine_root, project_vars

    declared = project_vars()
    return Macros({"var": lambda name, default=None: declared.get(name, default)}, engine_root())


class _Column(list):
    def values(self) -> list[Any]:
        return list(self)


class _Table:
    """A query's answer as dbt's run_query gives it to a macro (agate's shape): rows by
    position or column name, columns by position with values(), column_names."""

    def __init__(self, names: list[str], rows: list[Any]) -> None:
        self.column_names = names
        self.rows = rows
        self.columns = [_Column(row[i] for row in rows) for i in range(len(names))]

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


class OperationError(Exception):
    """An operation the macros own refused or failed: their message, as dbt prints it."""


def on_session(spark: Any, **overrides: Any) -> Macros:
    """The engine's macros executing on a job's Spark session: how Python runs an
    operation the macros own (VACUUM, ...) instead of carrying a copy of its SQL.

    `execute` is true and run_query runs each statement on `spark`; the vars are the
    project's, with `overrides` over them (a job's flag standing for a var, as
    `purge --allow-short-retention` for vacuum_allow_short_retention). A macro that
    raises a compiler error raises OperationError with its message."""
    from python_jobs.project import engine_root, project_vars

    declared = {**project_vars(), **overrides}

    def run_query(sql: str) -> _Table:
        frame = spark.sql(sql)
        return _Table(list(frame.columns), frame.collect())

    def fail(message: str) -> None:
        raise OperationError(message)

    return Macros(
        {
            "var": lambda name, default=None: declared.get(name, default),
            "execute": True,
            "run_query": run_query,
            "log": lambda message, info=False: "",
            "exceptions": SimpleNamespace(raise_compiler_error=fail),
        },
        engine_root(),
    )
