"""bench/build_cost.py's breakdown: which nodes the difference between two revisions
comes from, on hand-made dbt timings (no dbt, no JVM)."""

from __future__ import annotations

from bench.build_cost import node_differences


def test_the_nodes_that_changed_most_come_first_and_a_missing_node_counts_as_zero() -> None:
    nodes = {
        "base": [
            {"model.p.bronze_clicks": 10.0, "model.p.silver_users": 5.0, "model.p.gone": 3.0},
            {"model.p.bronze_clicks": 12.0, "model.p.silver_users": 5.0, "model.p.gone": 3.0},
        ],
        "head": [
            {"model.p.bronze_clicks": 20.0, "model.p.silver_users": 5.5, "model.p.new": 1.0},
            {"model.p.bronze_clicks": 22.0, "model.p.silver_users": 4.5, "model.p.new": 1.0},
        ],
    }
    assert node_differences(nodes, top=3) == [
        ("model.p.bronze_clicks", 11.0, 21.0),
        ("model.p.gone", 3.0, 0.0),
        ("model.p.new", 0.0, 1.0),
    ]
