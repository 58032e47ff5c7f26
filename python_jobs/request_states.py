"""The request states, the subject id rule and the request id rule, read from where they
are declared.

macros/utils/request_states/ declares them for the dbt operations; the jobs render
the same macro here (python_jobs.macros: plain Jinja, no dbt context), so the report,
purge and the operations never disagree on which requests are open.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from functools import cache

from python_jobs.macros import engine_macros
from python_jobs.project import project_vars


@cache
def request_states() -> dict[str, tuple[str, ...]]:
    """{"states": (...), "open": (...), "unfinished": (...), "fulfilled": (...)}."""
    declared = json.loads(str(engine_macros().request_states_json()))
    return {group: tuple(states) for group, states in declared.items()}


def status_in(group: str) -> str:
    """A group of states as a SQL list, as request_status_in() renders it."""
    return "('" + "', '".join(request_states()[group]) + "')"


def subject_id_pattern() -> re.Pattern[str]:
    """What a subject id may look like: var subject_id_pattern of the project, else the
    default the operations use (macro default_subject_id_pattern); never `__...`."""
    configured = project_vars().get("subject_id_pattern")
    return re.compile(
        str(configured) if configured else str(engine_macros().default_subject_id_pattern()).strip()
    )


def is_subject_id(value: object) -> bool:
    """The check the operations make of a subject id, in Python."""
    return (
        isinstance(value, str)
        and not value.startswith("__")
        and value == value.strip()
        and subject_id_pattern().match(value) is not None
    )


@cache
def request_id_pattern(kind: str) -> re.Pattern[str]:
    """What a request id of a kind (erasure, access, rectification, restore) looks like:
    the macro request_id_pattern, the one rule."""
    return re.compile(str(engine_macros().request_id_pattern(kind)).strip())


def is_request_id(value: object, kind: str) -> bool:
    return isinstance(value, str) and request_id_pattern(kind).match(value) is not None


def new_request_id(kind: str, moment: datetime) -> str:
    """A new id of a kind for a request a job records (rectify, subject_access), by the
    macro request_id, as the operations make theirs; unique by a random salt."""
    return str(engine_macros().request_id(kind, moment, uuid.uuid4().hex)).strip()
