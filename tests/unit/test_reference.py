"""docs/reference/ is what `python -m lint.reference` writes from the project's own
declarations (each job's --help, macros/_macros.yml, dbt_project.yml's vars block): a
command, macro or var changed without the page fails here."""

from __future__ import annotations

from lint import reference


def test_every_reference_page_is_current() -> None:
    assert reference.main(["--check"]) == 0, "run `python -m lint.reference`"


def test_every_declared_var_has_a_row() -> None:
    page = reference.vars_page()
    for name in ("gdpr_lakehouse_demo", "vacuum_retain_hours", "gdpr_lakehouse_fault"):
        assert f"| `{name}` |" in page
