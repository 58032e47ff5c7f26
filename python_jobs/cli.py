"""gdpr-lakehouse: the engine's jobs on any dbt project that installs the package.

    gdpr-lakehouse --project-dir ~/crm audit --once     # CDF -> the audit log
    gdpr-lakehouse purge --request-id req-...           # REORG PURGE + VACUUM
    gdpr-lakehouse scan --request-id req-...            # residue in the physical files
    gdpr-lakehouse report                               # the GDPR report
    gdpr-lakehouse certificate                          # a certificate per purged request
    gdpr-lakehouse access --subject-id P0000010         # a subject's data, exported for them
    gdpr-lakehouse rectify --subject-id P0000010 --changes-file c.json  # corrected (Art. 16)
    gdpr-lakehouse kek init                             # this machine's key-encryption key, once
    gdpr-lakehouse <command> --help

The project is the dbt project in --project-dir (default: the current directory when
it holds a dbt_project.yml, else this checkout's demo lakehouse); its
target/manifest.json says which relations hold whose data, and its profile which
warehouse and metastore to open. `python -m python_jobs.<job>` runs the same jobs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from python_jobs import project

# command -> (module, what it does)
COMMANDS = {
    "audit": ("audit_stream", "stream every Change Data Feed into the audit log"),
    "purge": ("purge", "physically erase: REORG ... APPLY (PURGE), then VACUUM"),
    "scan": ("forensic_scan", "look for a subject in every physical file"),
    "report": ("report", "the GDPR report: requests, deadlines, changes"),
    "certificate": ("certificate", "a certificate of erasure per purged request, and its check"),
    "access": ("subject_access", "export a subject's data for them (GDPR Art. 15 and 20)"),
    "rectify": ("rectify", "correct a subject's personal data (GDPR Art. 16)"),
    "kek": ("kek", "this machine's key-encryption key: make it once (init), or where it is"),
    "engine": ("engine", "a warm local Spark engine (up/down) for dbt --target warm and the jobs"),
    "cluster": ("cluster", "a Spark cluster + Thrift server on loopback"),
    "jars": ("jars", "fetch and check Delta's jars in the local Maven repository"),
    "spark": ("spark", "the Spark settings the jobs use, or one SQL statement"),
}


def parser() -> argparse.ArgumentParser:
    described = "\n".join(f"  {name:<8} {what}" for name, (_, what) in COMMANDS.items())
    result = argparse.ArgumentParser(
        prog="gdpr-lakehouse",
        description=__doc__.split("\n\n")[0],
        epilog=f"commands:\n{described}\n\n`gdpr-lakehouse <command> --help` for each.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    result.add_argument(
        "--project-dir",
        type=Path,
        help="the dbt project (default: the current directory, else this checkout)",
    )
    result.add_argument(
        "--profiles-dir",
        type=Path,
        help="where its profiles.yml is (default: $DBT_PROFILES_DIR, the project, ~/.dbt)",
    )
    result.add_argument("command", choices=sorted(COMMANDS), metavar="command")
    result.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return result


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    for folder, variable in (
        (args.project_dir, "LAKEHOUSE_PROJECT_DIR"),
        (args.profiles_dir, "DBT_PROFILES_DIR"),
    ):
        if folder is not None:
            if not folder.is_dir():
                print(f"gdpr-lakehouse: {folder} is not a folder", file=sys.stderr)
                return 2
            os.environ[variable] = str(folder.resolve())
    module = importlib.import_module(f"python_jobs.{COMMANDS[args.command][0]}")
    project._PROG.append(f"gdpr-lakehouse {args.command}")
    try:
        if args.project_dir is not None:
            project.project_root()  # a folder that is no dbt project stops here, before any job
        from python_jobs import engine

        routed = engine.route(module.__name__, args.arguments)
        if routed is not None:
            return routed
        return int(module.main(args.arguments) or 0)
    except project.ProjectError as error:
        print(f"gdpr-lakehouse {args.command}: {error}", file=sys.stderr)
        return 2
    finally:
        project._PROG.pop()


def entry() -> None:
    """The console script."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
