"""The gdpr_lakehouse.<macro> namespace for sqlfluff's jinja templater (lint only).

sqlfluff lints models without a warehouse, so it cannot use dbt's templater (that
would start Spark); listed in .sqlfluff as library_path, this module hands it the
engine's real macros rendered in plain Jinja (python_jobs.macros), so lint sees the SQL
the macros really produce.
"""

from __future__ import annotations

from typing import Any

from python_jobs.macros import Macros

__all__ = ["Macros"]

_DEFAULT: list[Macros] = []


def __getattr__(name: str) -> Any:
    if not _DEFAULT:
        _DEFAULT.append(Macros())
    return getattr(_DEFAULT[0], name)
