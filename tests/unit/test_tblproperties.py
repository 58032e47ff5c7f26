"""tblproperties_of on a fake warehouse (no JVM): a value Spark's SHOW TBLPROPERTIES
redacts is read again from DESCRIBE DETAIL, and one it cannot read stops the caller.

Spark masks a property value matching spark.sql.redaction.options.regex (default
`(?i)url`) as `*********(redacted)`: bronze.clicks' delta.dataSkippingStatsColumns,
which names `url`, read as the mask, so the statistics check compared the mask
and the build re-altered the table on every run. On real Spark,
tests/functional/test_build.py checks that the second build alters nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from python_jobs import macros as engine_macros
from tests.unit.test_vacuum_macros import _Row, _Table

MASK = "*********(redacted)"
STATS = "delta.dataSkippingStatsColumns"


def _macros(shown: dict[str, str], detail: Any) -> tuple[engine_macros.Macros, list[str]]:
    statements: list[str] = []

    def run_query(sql: str) -> _Table:
        statements.append(sql)
        if sql.startswith("show tblproperties"):
            return _Table([_Row(key=k, value=v) for k, v in shown.items()])
        assert sql.startswith("describe detail"), sql
        return _Table([_Row(properties=detail)])

    return engine_macros.Macros({"execute": True, "run_query": run_query}), statements


def test_an_unredacted_table_is_read_with_one_statement() -> None:
    macros, statements = _macros({STATS: "event_at,url_enc"}, None)
    assert macros.tblproperties_of("bronze.clicks") == {STATS: "event_at,url_enc"}
    assert statements == ["show tblproperties bronze.clicks"]


@pytest.mark.parametrize(
    "detail",
    [
        json.dumps({STATS: "event_at,url", "delta.enableChangeDataFeed": "true"}),
        json.dumps([[STATS, "event_at,url"]]),  # Arrow drivers: a list of pairs
    ],
)
def test_a_redacted_value_is_read_from_describe_detail(detail: str) -> None:
    shown = {STATS: MASK, "delta.enableChangeDataFeed": "true"}
    macros, statements = _macros(shown, detail)
    properties = macros.tblproperties_of("bronze.clicks")
    assert properties == {STATS: "event_at,url", "delta.enableChangeDataFeed": "true"}
    assert statements[-1] == "describe detail bronze.clicks"


@pytest.mark.parametrize("detail", [json.dumps({STATS: MASK}), json.dumps({}), None])
def test_a_value_no_statement_shows_stops_the_caller(detail: Any) -> None:
    macros, _ = _macros({STATS: MASK}, detail)
    with pytest.raises(Exception, match=r"redacted|no readable properties"):
        macros.tblproperties_of("bronze.clicks")
