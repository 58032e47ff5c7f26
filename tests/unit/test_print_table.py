"""The operations' printed tables (macro print_table): aligned, and capped where a
request can name thousands of subjects, saying how many rows were left out and where
they all are. Rendered in plain Jinja, no dbt run, no JVM."""

from __future__ import annotations

from python_jobs.macros import Macros
from tests.jinja_harness import Jinja


def _printed(jinja: Jinja, call: str) -> list[str]:
    lines: list[str] = []
    context = dict(jinja.macros()._env.globals)
    for own in ("gdpr_lakehouse", "adapter"):  # the new namespace's own
        context.pop(own)
    macros = Macros({**context, "print": lambda message, *_: lines.append(str(message)) or ""})
    macros.render("{% do " + call + " %}")
    return lines


def test_a_short_table_is_printed_whole_and_aligned(jinja: Jinja) -> None:
    lines = _printed(
        jinja, "gdpr_lakehouse.print_table('T:', ['id', 'n'], [['a', 1], ['bbb', none]])"
    )
    assert lines == ["", "T:", "  id   n", "  a    1", "  bbb"]


def test_a_long_table_stops_at_its_limit_and_says_what_was_left_out(jinja: Jinja) -> None:
    rows = "[" + ", ".join(f"['r{n:04d}']" for n in range(1000)) + "]"
    lines = _printed(
        jinja, f"gdpr_lakehouse.print_table('T:', ['id'], {rows}, limit=20, rest='all in x.y')"
    )
    assert lines[2:4] == ["  id", "  r0000"] and lines[22] == "  r0019"
    assert lines[23:] == ["  ... and 980 more (all in x.y)"]
    exactly = "[" + ", ".join(f"['r{n}']" for n in range(20)) + "]"
    assert (
        len(_printed(jinja, f"gdpr_lakehouse.print_table('T:', ['id'], {exactly}, limit=20)")) == 23
    )
