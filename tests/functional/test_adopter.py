"""Another team's dbt project adopts the engine: tests/adopter (a CRM), none of the
demo's models, the package installed by `local:` path.

Its whole lifecycle runs in a process of its own (tests/adopter/lifecycle.py: its own
JVM, warehouse and metastore, the commands a user types in the project folder, the
project found from the current directory): build, request_erasure, gdpr_erase,
restore_version, purge, forensic scan, a rebuild that must not bring the customer
back, audit, and the compliance tests. Then, in a lakehouse of its own, the same team on
the warm engine: `gdpr-lakehouse engine up` in its folder, dbt through its profile's
`warm` output, the audit through the engine's socket.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dbt_harness import ROOT, free_port

pytestmark = pytest.mark.functional

FIXTURE = ROOT / "tests" / "adopter"
ERASED = "C0002"


def _adopter(work: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the CRM project in `work`, and the environment its team runs it in
    (none of this checkout's LAKEHOUSE_ or DBT_ settings; its lakehouse in `work`)."""
    project = work / "crm"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("lifecycle.py"))
    # as the adopter would write it: the package where it is on this machine
    (project / "packages.yml").write_text(f"packages:\n  - local: {ROOT}\n")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LAKEHOUSE_", "DBT_"))
    }
    env.update(
        LAKEHOUSE_DIR=str(work / "lakehouse"),
        LAKEHOUSE_ACTOR="crm-team",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        SPARK_LOCAL_IP="127.0.0.1",
    )
    return project, env


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("adopter")
    project, env = _adopter(work)
    output = work / "facts.json"
    run = subprocess.run(
        [sys.executable, str(FIXTURE / "lifecycle.py"), str(project), str(output)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-6000:]
    return json.loads(output.read_text())


def test_build_encrypts_under_the_customers_own_keys(facts: dict) -> None:
    built = facts["built"]
    assert built["customers"] == built["vault_keys"] == 4
    assert facts["decrypts"] == 4
    assert built["tickets"] == built["by_channel_tickets"] == 12
    assert built["per_customer"] == 4


def test_erasure_reaches_every_relation_the_contracts_name(facts: dict) -> None:
    erased = facts["erased"]
    assert facts["status_after_erase"] == "erased"
    assert erased["erased_customer_rows"] == 0
    assert (erased["customers"], erased["tickets"], erased["per_customer"]) == (3, 9, 3)
    assert erased["vault_keys"] == 3
    # retained by contract (anonymous aggregate)
    assert erased["by_channel_tickets"] == 12
    assert facts["evidence_relations"] == [
        "crm.crm_customers",
        "crm.crm_tickets",
        "crm.crm_tickets_per_customer",
        "crm_privacy.subject_keys",
    ]


def test_restore_never_brings_the_customer_back(facts: dict) -> None:
    assert facts["restored"]["erased_customer_rows"] == 0
    assert facts["restore_log"] == [
        {"relation": "crm.crm_customers", "status": "reapplied", "rows_reerased": 1}
    ]


def test_purge_and_scan_prove_the_files_are_clean(facts: dict) -> None:
    assert facts["witness"] == 0
    assert facts["purge"] == 0
    assert facts["status_after_purge"] == "purged"
    assert facts["scan"] == 0


def test_a_resent_customer_stays_erased_and_a_late_export_is_not_skipped(facts: dict) -> None:
    rebuilt = facts["rebuilt"]
    assert rebuilt["erased_customer_rows"] == 0
    # C0005 from batch 2, C0006 from a file dated before it
    assert rebuilt["customers"] == 5
    # C0007's ticket came before any customer export listed C0007: keyed and kept
    assert rebuilt["vault_keys"] == 6
    assert rebuilt["tickets"] == 12 - 3 + 15 - 3 + 1
    # the newest state wins, whatever order the files came in
    assert facts["countries"] == {
        "C0001": "GB",
        "C0003": "GB",
        "C0004": "NL",
        "C0005": "US",
        "C0006": "US",
    }


def test_audit_and_compliance_pass(facts: dict) -> None:
    assert facts["audit"] == 0
    assert facts["audited_relations"] == 4
    assert facts["tested"] is True


def test_the_adopter_runs_on_the_warm_engine_through_its_own_warm_output(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The CRM's team starts the warm engine in its project (`gdpr-lakehouse engine
    up`), builds and erases through its profile's `warm` output (docs/guides/adopt.md, "The
    warm engine") and audits through the engine's socket; nothing opens a JVM of its
    own (while the engine holds the embedded metastore, one could not)."""
    work = tmp_path_factory.mktemp("adopter-warm")
    project, env = _adopter(work)
    env["LAKEHOUSE_ENGINE_PORT"] = str(free_port())
    bin_dir = Path(sys.executable).parent

    def run(*argv: str) -> str:
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
        return done.stdout

    run(
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(FIXTURE)!r}); import lifecycle; "
        f"from pathlib import Path; lifecycle.land(Path({str(work / 'lakehouse' / 'landing')!r}), "
        "1, lifecycle.CUSTOMERS)",
    )
    dbt, cli = str(bin_dir / "dbt"), str(bin_dir / "gdpr-lakehouse")
    run(dbt, "deps", "-q")
    started = run(cli, "engine", "up")
    try:
        assert "engine up" in started and "no `warm` output" not in started, started
        assert "note:" not in started, started  # its parse of the project, for warm, passed
        run(dbt, "build", "--target", "warm")
        request = json.dumps({"subject_ids": [ERASED], "reason": "customer asked"})
        run(dbt, "run-operation", "request_erasure", "--args", request, "--target", "warm")
        erased = run(dbt, "run-operation", "gdpr_erase", "--target", "warm")
        assert "Erased 1 request(s)" in erased and "erased" in erased, erased
        # in the engine (a JVM of its own could not open the metastore the engine holds)
        audited = run(cli, "audit", "--once")
        assert "crm.crm_customers" in audited, audited
        shown = run(
            dbt,
            "show",
            "--target",
            "warm",
            "--inline",
            "select requests.status, count(audit.relation) as audited "
            "from crm_privacy.erasure_requests as requests "
            "left join crm_audit.change_log as audit on audit.relation = 'crm.crm_customers' "
            f"where requests.subject_id = '{ERASED}' group by requests.status",
        )
        assert re.search(r"\|\s*erased\s*\|\s*[1-9]", shown), shown
    finally:
        run(cli, "engine", "down")
