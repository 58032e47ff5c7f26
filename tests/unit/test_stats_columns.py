"""Which columns a relation's Delta statistics leave out (plain Jinja, no JVM): the
property tblproperties_clause sets when a table is made and apply_tblproperties sets on
one that exists. tests/functional/test_build.py reads it back from every built table."""

from __future__ import annotations

from types import SimpleNamespace

from python_jobs.macros import Macros


def _columns(*names: str, data_type: str | None = None) -> dict:
    return {name: SimpleNamespace(data_type=data_type) for name in names}


def test_pii_the_subject_key_and_pseudonyms_are_left_out() -> None:
    macros = Macros()
    bronze = {"subject_key": "patient_id", "pii_columns": []}
    assert macros._stats_columns_property(
        bronze, _columns("encounter_id", "patient_id", "cost"), {}
    ) == {"delta.dataSkippingStatsColumns": "encounter_id,cost"}
    silver = {"subject_key": "patient_pseudonym", "pii_columns": ["email_enc"]}
    assert macros._stats_columns_property(
        silver, _columns("patient_pseudonym", "email_enc", "city"), {}
    ) == {"delta.dataSkippingStatsColumns": "city"}
    # a control table without a subject key still keeps a pseudonym column out
    control = {"role": "control", "pii_columns": []}
    assert macros._stats_columns_property(
        control, _columns("request_id", "subject_pseudonym"), {}
    ) == {"delta.dataSkippingStatsColumns": "request_id"}


def test_direct_identifiers_and_special_category_values_are_left_out() -> None:
    """The contract's classes: a source record id (direct_identifier) and a diagnosis or
    a cost (special_category) stay out; a quasi-identifier (an event time, which data
    skipping needs) and a non-personal column stay in."""
    bronze = {
        "subject_key": "patient_id",
        "pii_columns": [],
        "classes": {
            "direct_identifier": ["encounter_id", "patient_id"],
            "quasi_identifier": ["admitted_at"],
            "special_category": ["Diagnosis_Code", "cost"],
            "non_personal": ["source_op"],
        },
    }
    assert Macros()._stats_columns_property(
        bronze,
        _columns(
            "encounter_id", "patient_id", "admitted_at", "diagnosis_code", "cost", "source_op"
        ),
        {},
    ) == {"delta.dataSkippingStatsColumns": "admitted_at,source_op"}


def test_nothing_to_leave_out_or_an_explicit_list_sets_nothing() -> None:
    macros = Macros()
    assert macros._stats_columns_property({}, _columns("city", "patient_count"), {}) == {}
    explicit = {"delta.dataSkippingStatsColumns": "city"}
    keyed = {"subject_key": "patient_id"}
    assert macros._stats_columns_property(keyed, _columns("patient_id", "city"), explicit) == {}
    # maps, arrays and structs have no statistics in Delta: never listed
    assert macros._stats_columns_property(
        keyed, {**_columns("patient_id", "city"), **_columns("tags", data_type="array<string>")}, {}
    ) == {"delta.dataSkippingStatsColumns": "city"}


def test_a_relation_documenting_only_its_key_keeps_no_statistics() -> None:
    """An adopter's yml may document only the key: no column can be named safely, so
    the table keeps no statistics at all rather than Delta's first 32 columns."""
    keyed = {"subject_key": "customer_id", "pii_columns": ["email_enc"]}
    assert Macros()._stats_columns_property(keyed, _columns("customer_id"), {}) == {
        "delta.dataSkippingNumIndexedCols": "0"
    }


def test_a_pseudonym_key_keeps_statistics_cut_to_the_pruning_prefix() -> None:
    """Erasure by pruning (issue 23): a relation keyed by pseudonym keeps its key's
    statistics, cut to erasure_pruning_prefix_chars characters for every string column
    of the table; its other pseudonyms and PII stay out. Off (max prefixes 0) or on
    Databricks: the key stays out, as before."""
    silver = {
        "subject_key": "patient_pseudonym",
        "subject_key_kind": "pseudonym",
        "pii_columns": ["email_enc"],
    }
    columns = _columns("patient_pseudonym", "email_enc", "city", "other_pseudonym")
    assert Macros()._stats_columns_property(silver, columns, {}) == {
        "delta.dataSkippingStatsColumns": "patient_pseudonym,city",
        "delta.dataSkippingStringPrefixLength": "4",
    }
    eight = Macros(
        {"var": lambda name, default=None: 8 if name == "erasure_pruning_prefix_chars" else default}
    )
    assert eight._stats_columns_property(silver, columns, {}) == {
        "delta.dataSkippingStatsColumns": "patient_pseudonym,city",
        "delta.dataSkippingStringPrefixLength": "8",
    }
    off = Macros(
        {"var": lambda name, default=None: 0 if name == "erasure_pruning_max_prefixes" else default}
    )
    databricks = Macros({"target": SimpleNamespace(type="databricks", name="databricks")})
    # a raw id as the key, the key also a PII column: out
    raw = {**silver, "subject_key_kind": "id"}
    listed = {**silver, "pii_columns": ["email_enc", "patient_pseudonym"]}
    for macros, privacy in (
        (off, silver),
        (databricks, silver),
        (Macros(), raw),
        (Macros(), listed),
    ):
        assert macros._stats_columns_property(privacy, columns, {}) == {
            "delta.dataSkippingStatsColumns": "city"
        }
