"""The erasure request's states, read from the one place they are declared.

macros/utils/request_states.sql declares them for the dbt operations; the jobs render
the same macro here (plain Jinja: it needs no dbt context), so the report, purge and
the operations never disagree on which requests are open.
"""

from __future__ import annotations

import json
from functools import cache

import jinja2

from python_jobs.project import engine_root


@cache
def request_states() -> dict[str, tuple[str, ...]]:
    """{"states": (...), "open": (...), "unfinished": (...), "fulfilled": (...)}."""
    source = (engine_root() / "macros" / "utils" / "request_states.sql").read_text()
    module = jinja2.Environment(extensions=["jinja2.ext.do"]).from_string(source).module
    return {
        group: tuple(states)
        for group, states in json.loads(str(module.request_states_json())).items()
    }


def status_in(group: str) -> str:
    """A group of states as a SQL list, as request_status_in() renders it."""
    return "('" + "', '".join(request_states()[group]) + "')"
