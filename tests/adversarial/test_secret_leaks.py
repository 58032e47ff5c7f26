"""Attack class: reading the key-encryption key (KEK) of a lakehouse made with the envelope.

With var key_envelope the vault's data keys are stored wrapped by a KEK that the
engine reads from its environment. The KEK used to reach SQL through Spark's
`${env:NAME}` substitution: substituted into every statement that wraps or unwraps a
key, so stored for good in the masked views' text in the metastore (`SHOW CREATE
TABLE` printed it), and readable by any query of the same session.

Guarantees held here (one lakehouse made with the envelope, in its own process):
- the KEK is in no file the lakehouse, dbt's target/ or its logs hold: not in the
  metastore, not in a view's text, not in a Delta log, not in compiled SQL;
- the masked views' stored text names the environment variable, never its value;
- `${env:...}` in a table user's query (here `dbt show --inline`) is not substituted;
- a PII reader who holds the KEK still reads clear values through the masked views;
- the tombstone key is stored wrapped like the data keys: a reader of
  privacy.system_keys cannot recompute a tombstone hash from a source id (and so
  cannot tell who was erased, find a kept order by the shop's id, or pair a
  tombstone with a pseudonym); a key an older version stored plain is wrapped by the
  next build, and is still the same key;
- gdpr_erase, restore_version and the compliance test for erased subjects run in this
  mode (each hashes ids under the tombstone key, opened inside the engine).
No statement can return the KEK itself or a stored key in clear (the project's SQL
extension reads the KEK inside the JVM, uses a stored key only to encrypt, decrypt or
hash, and refuses reflection: tests/adversarial/test_kek_reach.py); on local and
thrift a session of a process that holds it can still decrypt values
(docs/concepts/README.md, "Who can read what").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbt_harness import ROOT

pytestmark = pytest.mark.functional

OTHER_KEK = "0f" * 32
KEK = "5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee5ec7"


@pytest.fixture(scope="module")
def envelope(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    """(the probe's state folder, what the probe returned)."""
    state = tmp_path_factory.mktemp("envelope")
    env = {
        **os.environ,
        "LAKEHOUSE_DIR": str(state / "lakehouse"),
        "DBT_TARGET_PATH": str(state / "target"),
        "DBT_LOG_PATH": str(state / "logs"),
        "LAKEHOUSE_KEK": KEK,
        "SPARK_USER": "dpo_probe",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.adversarial.envelope_probe"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, f"the probe printed nothing (exit {done.returncode}):\n{done.stderr[-3000:]}"
    result = json.loads(lines[-1][len("PROBE ") :])
    assert "error" not in result, result["error"]
    yield state, result


def _files_holding(root: Path, needles: list[bytes]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if any(needle in data for needle in needles):
                found.append(str(path.relative_to(root)))
    return found


def test_the_kek_is_in_no_file_of_the_lakehouse_target_or_logs(
    envelope: tuple[Path, dict],
) -> None:
    """Attack: read the metastore, the warehouse, target/ or logs/ for the KEK (as hex in
    either case, as UTF-16 text, or as its 32 raw bytes). Guarantee: found nowhere."""
    state, _ = envelope
    needles = [
        KEK.encode(),
        KEK.upper().encode(),
        KEK.encode("utf-16-le"),
        KEK.upper().encode("utf-16-le"),
        bytes.fromhex(KEK),
    ]
    assert (state / "lakehouse" / "metastore_db").is_dir()
    assert _files_holding(state, needles) == []


def test_the_masked_views_name_the_variable_not_the_key(envelope: tuple[Path, dict]) -> None:
    """Attack: `SHOW CREATE TABLE privacy.patients_masked`. Guarantee: the stored text
    reads the KEK from the environment at query time; it holds no key."""
    _, result = envelope
    for view, text in result["view_text"].items():
        assert KEK not in text.lower(), f"{view} stores the KEK"
        assert "LAKEHOUSE_KEK" in text, f"{view} does not read the KEK at query time:\n{text}"


def test_spark_substitution_does_not_reach_the_kek(envelope: tuple[Path, dict]) -> None:
    """Attack: `dbt show --inline "select '${env:LAKEHOUSE_KEK}'"` in the pipeline's own
    session. Guarantee: the text comes back as written, never the KEK."""
    _, result = envelope
    assert result["show"] == [["${env:LAKEHOUSE_KEK}"]]


def test_a_pii_reader_with_the_kek_still_reads_clear_values(envelope: tuple[Path, dict]) -> None:
    """Guarantee kept while closing the leaks: the masked views decrypt for a PII reader
    whose process holds the KEK."""
    _, result = envelope
    assert result["patients"] > 0
    assert result["names_revealed"] == result["patients"]
    assert result["emails_revealed"] == result["patients"]


def test_a_reader_of_the_system_keys_cannot_recompute_a_tombstone_hash(
    envelope: tuple[Path, dict],
) -> None:
    """Attack: read privacy.system_keys and hash an erased subject's source id with what
    it holds, as the pipeline hashes it for a tombstone. Guarantee: the key is stored
    wrapped (60 bytes: IV, key, tag), and the reader's hash matches no tombstone; the
    pipeline's does."""
    _, result = envelope
    key = result["tombstone_key"]
    assert result["pipeline_hash"] in result["tombstones"]
    assert key["bytes"] == 60, f"privacy.system_keys stores the tombstone key plain: {key}"
    assert key["reader_hash"] not in result["tombstones"]


def test_erasure_restore_and_compliance_run_with_the_envelope(
    envelope: tuple[Path, dict],
) -> None:
    """gdpr_erase, restore_version (which re-erases the restored rows by joining them to
    the tombstones) and no_erased_subject_present hash ids under the tombstone key, here
    unwrapped with the key-encryption key inside each statement. Guarantee: each runs
    in this mode, and the restore brings no erased row back."""
    _, result = envelope
    assert result["erasure"] == {
        "erased": True,
        "restored": True,
        "rows_after_restore": 0,
        "compliance": ["pass"],
    }


def test_a_plain_tombstone_key_left_by_an_older_version_is_wrapped_by_the_next_build(
    envelope: tuple[Path, dict],
) -> None:
    """A lakehouse made with the envelope by an older version holds its tombstone key
    plain. Guarantee: `dbt run --select privacy_system_keys` wraps it in place, and it is
    still the same key (every tombstone keeps matching)."""
    _, result = envelope
    plain, after = result["tombstone_key_left_plain"], result["tombstone_key_after_build"]
    assert plain["bytes"] == 32
    assert after["bytes"] == 60, f"the build left the tombstone key plain: {after}"
    assert after["key"] == plain["key"] == result["tombstone_key"]["key"]


def test_right_after_the_erasure_no_delta_file_links_anything_to_the_subject(
    envelope: tuple[Path, dict],
) -> None:
    """Attack: right after gdpr_erase, before any purge, read every file of every Delta
    relation (old versions, change data, rows deletion vectors hide, the logs) with the
    erased patient's id, their encounter ids from the hospital and their PII in hand
    (python -m python_jobs.forensic_scan --witness). Guarantee, with the envelope on:
    no readable residue in any Delta table or log. What history still holds is
    ciphertext whose key is gone, and the pseudonym, which nothing maps back to the
    patient (no id, no source record id, the key shredded, the tombstone key wrapped);
    only the landing zone and dbt's own logs/ name the patient until the purge."""
    _, result = envelope
    scanned = result["scan"]
    assert scanned["witness_records"] > 0, "the witness holds no encounter id to look for"
    assert scanned["key_gone"]
    assert scanned["linked_by"] == []
    assert scanned["readable_in_delta"] == 0, [
        r for r in scanned["residues"] if r[0] in ("relations", "warehouse") and r[3] == "readable"
    ]
    verdicts = {
        (needle, verdict)
        for area, _, needle, verdict in scanned["residues"]
        if area in ("relations", "warehouse")
    }
    assert ("pseudonym", "unlinkable") in verdicts and ("ciphertext", "unreadable") in verdicts
    outside = {area for area, _, _, verdict in scanned["residues"] if verdict == "readable"}
    assert outside <= {"landing", "dbt"}, outside


def test_a_command_given_another_kek_refuses_before_any_write(
    envelope: tuple[Path, dict],
) -> None:
    """Attack: the machine's key file is lost, a new key is made, and the next build
    runs with it. It would wrap new subjects' keys under the new key, leaving a vault
    no single key opens. Here the lakehouse is as an older version left it, its
    tombstone key plain (the probe's last step), so privacy.system_keys holds nothing
    to try the key on: the vault's wrapped keys must show it. Guarantee: `dbt build`,
    typed in a shell holding another well-formed key, stops before any write, saying
    the key is not the lakehouse's."""
    state, _ = envelope
    logs = sorted((state / "lakehouse" / "warehouse").rglob("_delta_log/*.json"))
    done = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "build", "--select", "bronze_patients"],
        cwd=ROOT,
        env={
            **os.environ,
            "LAKEHOUSE_DIR": str(state / "lakehouse"),
            "DBT_TARGET_PATH": str(state / "target-other-kek"),
            "DBT_LOG_PATH": str(state / "logs-other-kek"),
            "LAKEHOUSE_KEK": OTHER_KEK,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0, done.stdout[-3000:]
    assert "not the one this lakehouse's keys were wrapped with" in done.stdout, done.stdout[-3000:]
    assert sorted((state / "lakehouse" / "warehouse").rglob("_delta_log/*.json")) == logs
    assert _files_holding(state, [OTHER_KEK.encode(), bytes.fromhex(OTHER_KEK)]) == []
