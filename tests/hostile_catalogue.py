"""The hostile input catalogue: malformed or malicious arguments to every operation,
each with a part of the error that must say what was wrong.

Read by tests/unit/test_argument_checks.py (every case, rendered in plain Jinja with a
fake warehouse: refused before any statement is issued) and by
tests/functional/test_hostile_input.py (the cases that need the lakehouse's state,
and one case per operation through real dbt on real Spark: no table changes).
"""

from __future__ import annotations

ID = "P0000001"
CATALOGUE = [
    # request_erasure
    ("request_erasure", {}, "subject_ids must be a list"),
    ("request_erasure", {"subject_ids": "P0000001"}, "must be a list"),
    ("request_erasure", {"subject_ids": {"id": ID}}, "must be a list"),
    ("request_erasure", {"subject_ids": []}, "is empty"),
    ("request_erasure", {"subject_ids": [None]}, "not a string"),
    ("request_erasure", {"subject_ids": [[ID]]}, "not a string"),
    ("request_erasure", {"subject_ids": [""]}, "is not a subject id"),
    ("request_erasure", {"subject_ids": [" P0000001"]}, "is not a subject id"),
    ("request_erasure", {"subject_ids": ["P1' or '1'='1"]}, "is not a subject id"),
    (
        "request_erasure",
        {"subject_ids": ["P1`; drop table privacy.subject_keys; --"]},
        "is not a subject id",
    ),
    ("request_erasure", {"subject_ids": ["P\uff10\uff10\uff10\uff11"]}, "is not a subject id"),
    ("request_erasure", {"subject_ids": ["P1\u202e"]}, "is not a subject id"),
    ("request_erasure", {"subject_ids": ["x" * 65]}, "is not a subject id"),
    ("request_erasure", {"subject_ids": [f"P{i:07d}" for i in range(10_001)]}, "at most 10000"),
    ("request_erasure", {"subject_ids": [ID, "__tombstone__"]}, "is reserved"),
    ("request_erasure", {"subject_ids": [ID], "reason": "two\nlines"}, "reason"),
    ("request_erasure", {"subject_ids": [ID], "reason": "   "}, "reason"),
    ("request_erasure", {"subject_ids": [ID], "reason": "r" * 301}, "1 to 300 characters"),
    ("request_erasure", {"subject_ids": [ID], "reason": 42}, "reason"),
    ("request_erasure", {"subject_ids": [ID], "requested_by": "a\\b"}, "requested_by"),
    ("request_erasure", {"subject_ids": [ID], "requested_by": "d" * 129}, "1 to 128 characters"),
    ("request_erasure", {"subject_ids": [ID], "priority": "high"}, "unknown argument(s) priority"),
    ("request_erasure", {"subject_ids": [ID], "received_at": "2026-02-30"}, "is not a valid date"),
    (
        "request_erasure",
        {"subject_ids": [ID], "received_at": "10/02/2026"},
        "is not a date or a time",
    ),
    ("request_erasure", {"subject_ids": [ID], "received_at": 20260210}, "is not a date or a time"),
    (
        "request_erasure",
        {
            "subject_ids": [ID],
            "received_at": "2026-02-10'; drop table privacy.erasure_requests; --",
        },
        "is not a date or a time",
    ),
    (
        "request_erasure",
        {"subject_ids": [ID], "received_at": "2999-01-01"},
        "is in the future (now",
    ),
    # extend_deadline
    ("extend_deadline", {}, "extend_deadline: request_id null is not a request id"),
    (
        "extend_deadline",
        {
            "request_id": "req-1' or '1'='1",
            "by": 1,
            "reason": "r",
            "subject_informed_on": "2026-01-01",
        },
        "is not a request id",
    ),
    ("extend_deadline", {"request_id": "req-1"}, "give by (further months), reason"),
    (
        "extend_deadline",
        {"request_id": "req-1", "by": 3, "reason": "r", "subject_informed_on": "2026-01-01"},
        "by (further months) must be a whole number from 1 to 2",
    ),
    (
        "extend_deadline",
        {"request_id": "req-1", "by": "two", "reason": "r", "subject_informed_on": "2026-01-01"},
        "must be a whole number from 1 to 2",
    ),
    (
        "extend_deadline",
        {"request_id": "req-1", "by": 1, "reason": "a\nb", "subject_informed_on": "2026-01-01"},
        "reason",
    ),
    (
        "extend_deadline",
        {"request_id": "req-1", "by": 1, "reason": "r", "subject_informed_on": "yesterday"},
        'subject_informed_on "yesterday" is not a date or a time',
    ),
    (
        "extend_deadline",
        {
            "request_id": "req-1",
            "by": 1,
            "reason": "r",
            "subject_informed_on": "2026-01-01",
            "days": 3,
        },
        "unknown argument(s) days",
    ),
    (
        "extend_deadline",
        {
            "request_id": "req-20000101T000000-0000000000",
            "by": 1,
            "reason": "complex request",
            "subject_informed_on": "2026-01-01",
        },
        "no request req-20000101T000000-0000000000",
    ),
    # gdpr_erase
    ("gdpr_erase", {"subject_ids": "P0000001"}, "must be a list"),
    ("gdpr_erase", {"subject_ids": []}, "is empty"),
    ("gdpr_erase", {"subject_ids": [1234]}, "not a string"),
    ("gdpr_erase", {"subject_ids": ["P1; drop table bronze.patients"]}, "is not a subject id"),
    ("gdpr_erase", {"subject_ids": ["Pé0001"]}, "is not a subject id"),
    ("gdpr_erase", {"dry_run": "yes"}, "must be true or false"),
    ("gdpr_erase", {"dry_run": 1}, "must be true or false"),
    ("gdpr_erase", {"subject": [ID]}, "unknown argument"),
    ("gdpr_erase", {"reason": "no ids"}, "give them with subject_ids"),
    # request_access
    ("request_access", {}, "subject_ids must be a list"),
    ("request_access", {"subject_ids": ["P1' or '1'='1"]}, "is not a subject id"),
    ("request_access", {"subject_ids": [ID, "__tombstone__"]}, "is reserved"),
    ("request_access", {"subject_ids": [ID], "requested_by": "a\\b"}, "requested_by"),
    ("request_access", {"subject_ids": [ID], "received_at": "2026-02-30"}, "is not a valid date"),
    (
        "request_access",
        {"subject_ids": [ID], "received_at": "${env:LAKEHOUSE_KEK}"},
        "is not a date or a time",
    ),
    ("request_access", {"subject_ids": [ID], "reason": "why"}, "unknown argument(s) reason"),
    # restrict_processing
    ("restrict_processing", {"subject_ids": [ID]}, "give the reason"),
    ("restrict_processing", {"subject_ids": [ID], "lift": "yes"}, "must be true or false"),
    ("restrict_processing", {"subject_ids": ["' or 1=1 --"], "reason": "r"}, "is not a subject id"),
    ("restrict_processing", {"subject_ids": [ID], "reason": "two\nlines"}, "reason"),
    (
        "restrict_processing",
        {"subject_ids": [ID], "reason": "r", "placed_by": "${env:USER}"},
        "placed_by",
    ),
    (
        "restrict_processing",
        {"subject_ids": [ID], "reason": "r", "until": "2027"},
        "unknown argument(s) until",
    ),
    # legal_hold
    ("legal_hold", {"subject_ids": [ID]}, "give the reason"),
    ("legal_hold", {"subject_ids": [ID], "release": "no"}, "must be true or false"),
    ("legal_hold", {"subject_ids": ["' or 1=1 --"], "reason": "case"}, "is not a subject id"),
    (
        "legal_hold",
        {"subject_ids": [ID], "reason": "c", "review_on": "2000-01-01"},
        "must be after today",
    ),
    ("legal_hold", {"subject_ids": [ID], "reason": "c", "review_on": "next year"}, "is not a date"),
    ("legal_hold", {"subject_ids": [ID], "notified_on": "2999-01-01"}, "is in the future"),
    ("legal_hold", {"subject_ids": [ID], "notified_on": "2026-02-30"}, "not a day of the calendar"),
    ("legal_hold", {"subject_ids": [ID], "notified_on": 20260210}, "is not a date"),
    (
        "legal_hold",
        {"subject_ids": [ID], "release": True, "review_on": "2999-01-01"},
        "a release takes neither",
    ),
    (
        "restrict_processing",
        {"subject_ids": [ID], "reason": "r", "review_on": "1999-12-31"},
        "from the year 2000 on",
    ),
    (
        "restrict_processing",
        {"subject_ids": [ID], "lift": True, "review_on": "2999-01-01"},
        "lifting takes none",
    ),
    # restore_version
    (
        "restore_version",
        {"model": "bronze_patients", "version": 99999},
        "does not exist yet; its versions run from",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "timestamp": "2999-01-01 00:00:00"},
        "is in the future",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "timestamp": "2000-01-01"},
        "is before the first version",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "timestamp": "2026-02-30 10:00:00"},
        "is not a valid date and time",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "timestamp": "yesterday"},
        "is not a timestamp",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "timestamp": "2026-01-01' or '1'='1"},
        "is not a timestamp",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": -1},
        "must be a whole number from 0",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": 2.5},
        "must be a whole number from 0",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": True},
        "must be a whole number from 0",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": "1; vacuum x"},
        "must be a whole number from 0",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": 1, "timestamp": "2026-01-01"},
        "got both",
    ),
    ("restore_version", {"model": "bronze_patients"}, "got neither"),
    (
        "restore_version",
        {"model": "no_such_model", "version": 1},
        "is not a model or snapshot of this project",
    ),
    (
        "restore_version",
        {"model": "privacy_patients_masked", "version": 1},
        "is a view, not a Delta table",
    ),
    ("restore_version", {"model": "privacy_subject_keys", "version": 1}, "is the key vault"),
    (
        "restore_version",
        {"model": "privacy_erasure_tombstones", "version": 1},
        "privacy control table",
    ),
    (
        "restore_version",
        {"model": "bronze_patients; drop table x", "version": 1},
        "must be the name of a dbt",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": 1, "force": True},
        "unknown argument(s) force",
    ),
    (
        "restore_version",
        {"model": "bronze_patients", "version": 1, "dry_run": "yes"},
        "dry_run must be true or false",
    ),
    ("restore_version", {"model": "bronze_patients", "version": 1, "reason": "x\ty"}, "reason"),
    (
        "restore_version",
        {"model": "silver_patients", "savepoint": "Month End"},
        "give a lower-case identifier",
    ),
    (
        "restore_version",
        {"model": "silver_patients", "savepoint": "month_end", "version": 3},
        "give no version, timestamp or cascade with it",
    ),
    ("restore_version", {"model": "privacy_subject_keys", "savepoint": "a"}, "is the key vault"),
    # savepoint
    ("savepoint", {"model": "silver_patients"}, "name is required"),
    (
        "savepoint",
        {"model": "silver_patients", "name": "Month-End"},
        "give a lower-case identifier",
    ),
    (
        "savepoint",
        {"model": "silver_patients", "name": "x; drop table privacy.savepoints"},
        "give a lower-case identifier",
    ),
    ("savepoint", {"model": "silver_patients", "name": "a" * 65}, "give a lower-case identifier"),
    ("savepoint", {"model": "privacy_subject_keys", "name": "keys"}, "is the key vault"),
    ("savepoint", {"model": "privacy_system_keys", "name": "keys"}, "is the system key table"),
    ("savepoint", {"model": "privacy_savepoints", "name": "meta"}, "privacy control table"),
    (
        "savepoint",
        {"model": "privacy_patients_masked", "name": "v"},
        "is a view, not a Delta table",
    ),
    ("savepoint", {"model": "no_such_model", "name": "a"}, "is not a model or snapshot"),
    (
        "savepoint",
        {"model": "silver_patients", "name": "a", "version": 1, "business_date": "2026-01-05"},
        "not both",
    ),
    (
        "savepoint",
        {"model": "silver_patients", "name": "a", "version": -1},
        "version must be a whole number",
    ),
    (
        "savepoint",
        {"model": "silver_patients", "name": "a", "business_date": "2026-02-30"},
        "is not a day of the calendar",
    ),
    (
        "savepoint",
        {"model": "silver_patients", "name": "a", "reason": "${env:LAKEHOUSE_KEK}"},
        "without backslashes, control characters (line breaks, tabs) or ${",
    ),
    (
        "savepoint",
        {"model": "silver_patients", "name": "a", "keep": True},
        "unknown argument(s) keep",
    ),
    # release_savepoint
    ("release_savepoint", {"name": "a"}, "model must be the name of a dbt"),
    (
        "release_savepoint",
        {"model": "x`; drop table y", "name": "a"},
        "model must be the name of a dbt",
    ),
    ("release_savepoint", {"model": "silver_patients"}, "name is required"),
    (
        "release_savepoint",
        {"model": "silver_patients", "name": "A B"},
        "give a lower-case identifier",
    ),
    # table_history
    ("table_history", {}, "must be the name of a dbt"),
    ("table_history", {"model": "no_such_model"}, "is not a model"),
    ("table_history", {"model": "bronze_patients`; drop table x"}, "must be the name of a dbt"),
    ("table_history", {"model": ["bronze_patients"]}, "must be the name of a dbt"),
    ("table_history", {"model": "privacy_patients_masked"}, "is a view, not a Delta table"),
    (
        "table_history",
        {"model": "bronze_patients", "limit": 0},
        "limit must be a whole number from 1 to 1000",
    ),
    (
        "table_history",
        {"model": "bronze_patients", "limit": 1001},
        "limit must be a whole number from 1 to 1000",
    ),
    (
        "table_history",
        {"model": "bronze_patients", "limit": "ten"},
        "limit must be a whole number from 1 to 1000",
    ),
    (
        "table_history",
        {"model": "bronze_patients", "limit": True},
        "limit must be a whole number from 1 to 1000",
    ),
    ("table_history", {"model": "bronze_patients", "since": 3}, "unknown argument(s) since"),
]

# answered from the lakehouse's state (its versions and their times): real Spark only
NEEDS_STATE = [
    case
    for case in CATALOGUE
    if case[2]
    in (
        "does not exist yet; its versions run from",
        "is in the future",
        "is before the first version",
        "no request req-20000101T000000-0000000000",
    )
]
