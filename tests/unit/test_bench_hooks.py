"""bench/hooks.py: how it reads the hooks' times from dbt's log and labels them (no dbt,
no JVM). Its refusals are tested with long_jvm's (tests/unit/test_long_jvm.py)."""

from __future__ import annotations

from bench import hooks
from tests.dbt_harness import ROOT

LOG = """\
\x1b[0m19:51:20.1 [info ] [MainThread]: Running with dbt=1.11.16
\x1b[0m19:51:20.5 [debug] [MainThread]: SQL status: OK in 0.021 seconds
\x1b[0m19:51:20.9 [info ] [MainThread]: 1 of 2 OK hook: gdpr_lakehouse.on-run-start.0 ......... [\x1b[32mOK\x1b[0m in 9.99s]
\x1b[0m19:51:22.9 [info ] [MainThread]: Running with dbt=1.11.16
\x1b[0m19:51:22.9 [info ] [MainThread]: 1 of 2 START hook: gdpr_lakehouse.on-run-start.0 ...... [RUN]
\x1b[0m19:51:22.9 [debug] [MainThread]: SQL status: OK in 0.021 seconds
\x1b[0m19:51:22.9 [info ] [MainThread]: 1 of 2 OK hook: gdpr_lakehouse.on-run-start.0 ......... [\x1b[32mOK\x1b[0m in 0.01s]
\x1b[0m19:51:24.2 [info ] [MainThread]: 2 of 2 OK hook: gdpr_lakehouse.on-run-start.1 ......... [\x1b[32mOK\x1b[0m in 0.85s]
\x1b[0m19:51:24.3 [debug] [Thread-47 ]: SQL status: OK in 0.3 seconds
\x1b[0m19:51:24.4 [info ] [Thread-47 ]: 1 of 1 OK created sql view model privacy.patients_masked [\x1b[32mOK\x1b[0m in 0.30s]
"""


def test_the_hooks_of_the_last_command_are_read_and_the_first_round_is_left_out() -> None:
    assert hooks.hook_seconds(LOG) == {
        "gdpr_lakehouse.on-run-start.0": 0.01,
        "gdpr_lakehouse.on-run-start.1": 0.85,
    }
    assert hooks.statements(LOG) == 2  # the last command's, not the one before
    assert hooks.medians([{"a": 9.0}, {"a": 1.0}, {"a": 3.0}, {"a": 2.0}]) == {"a": 2.0}


def test_each_hook_is_labelled_with_the_macro_it_calls() -> None:
    labels = hooks.hook_labels(ROOT)
    assert labels["gdpr_lakehouse.on-run-start.6"] == "gdpr_lakehouse.create_landing_tables"
    assert len(labels) == 8
