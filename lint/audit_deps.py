"""Known vulnerabilities in the installed Python packages (run by `make lint`).

    python -m lint.audit_deps                      # the check (exit 1 on a finding)
    python -m lint.audit_deps --refresh <dir>      # rebuild lint/advisories.json from a
                                                   # checkout of pypa/advisory-database

1. pip-audit --strict, against PyPI's advisory service, for every installed package.
2. Where that service cannot answer (a package index or mirror that serves no
   per-release JSON, as on the build machines here: pip-audit then audits nothing),
   the same question is answered offline from lint/advisories.json, the PyPA advisory
   database's entries for the packages this project installs. Its date is printed:
   an offline answer is only as new as its snapshot.

Never passes because nothing was checked: a package neither source could judge fails
the run. Accepted findings are listed in lint/audit-exceptions.txt, one per line:
`<id> <package> <reason>`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import distributions
from pathlib import Path

from packaging.version import InvalidVersion, Version

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "advisories.json"
EXCEPTIONS = HERE / "audit-exceptions.txt"
OWN = {"gdpr-lakehouse"}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> dict[str, str]:
    found = {}
    for dist in distributions():
        name = normalize(dist.metadata["Name"] or "")
        if name and name not in OWN:
            found[name] = dist.version
    return found


def exceptions() -> dict[tuple[str, str], str]:
    """(id, package) -> reason, from lint/audit-exceptions.txt."""
    accepted = {}
    if EXCEPTIONS.is_file():
        for raw in EXCEPTIONS.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                ident, package, reason = [*line.split(None, 2), "", ""][:3]
                if not reason:
                    raise SystemExit(f"{EXCEPTIONS.name}: {raw!r} needs a reason")
                accepted[(ident, normalize(package))] = reason
    return accepted


def online(packages: dict[str, str]) -> list[tuple[str, str, str]] | None:
    """pip-audit's findings [(package, version, id)], or None when it could not audit."""
    done = subprocess.run(
        [sys.executable, "-m", "pip_audit", "--strict", "--progress-spinner", "off", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return None
    deps = [d for d in report.get("dependencies", []) if normalize(d["name"]) in packages]
    if not deps or any("skip_reason" in d for d in deps):
        return None
    return [(normalize(d["name"]), d["version"], v["id"]) for d in deps for v in d.get("vulns", [])]


def _affected(version: Version, entry: dict) -> bool:
    if str(version) in entry.get("versions", []):
        return True
    for span in entry.get("ranges", []):
        if span.get("type") != "ECOSYSTEM":
            continue
        inside = False
        for event in span.get("events", []):
            try:
                if "introduced" in event:
                    at = event["introduced"]
                    if at == "0" or version >= Version(at):
                        inside = True
                elif ("fixed" in event and version >= Version(event["fixed"])) or (
                    "last_affected" in event and version > Version(event["last_affected"])
                ):
                    inside = False
            except InvalidVersion:
                continue
        if inside:
            return True
    return False


def offline(packages: dict[str, str]) -> tuple[list[tuple[str, str, str]], str]:
    snapshot = json.loads(SNAPSHOT.read_text())
    findings = []
    for name, text in sorted(packages.items()):
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        for advisory in snapshot["advisories"].get(name, []):
            if any(_affected(version, entry) for entry in advisory["affected"]):
                findings.append((name, text, advisory["id"]))
    return findings, f"{snapshot['source']} at {snapshot['commit'][:12]} ({snapshot['date']})"


def refresh(checkout: Path) -> int:
    """lint/advisories.json from a pypa/advisory-database checkout (a folder or git dir)."""
    import yaml

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", f"--git-dir={checkout}", *args], capture_output=True, text=True, check=True
        ).stdout

    packages = installed()
    commit = git("rev-parse", "HEAD").strip()
    date = git("log", "-1", "--format=%cI").strip()
    advisories: dict[str, list[dict]] = {}
    for path in git("ls-tree", "-r", "--name-only", "HEAD", "vulns").splitlines():
        folder = normalize(path.split("/")[1])
        if folder not in packages or not path.endswith(".yaml"):
            continue
        record = yaml.safe_load(git("show", f"HEAD:{path}"))
        affected = [
            {k: a[k] for k in ("ranges", "versions") if k in a}
            for a in record.get("affected", [])
            if normalize(a.get("package", {}).get("name", "")) == folder
        ]
        advisories.setdefault(folder, []).append(
            {"id": record["id"], "aliases": record.get("aliases", []), "affected": affected}
        )
    SNAPSHOT.write_text(
        json.dumps(
            {
                "source": "pypa/advisory-database",
                "commit": commit,
                "date": date,
                "written": datetime.now(UTC).strftime("%Y-%m-%d"),
                "advisories": dict(sorted(advisories.items())),
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    total = sum(map(len, advisories.values()))
    print(f"{SNAPSHOT.name}: {total} advisories for {len(advisories)} installed packages")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lint.audit_deps", description=__doc__)
    parser.add_argument("--refresh", type=Path, help="a pypa/advisory-database git directory")
    parser.add_argument("--offline", action="store_true", help="skip pip-audit's service")
    args = parser.parse_args(argv)
    if args.refresh:
        return refresh(args.refresh)
    packages = installed()
    accepted = exceptions()
    findings = None if args.offline else online(packages)
    if findings is not None:
        source = "pip-audit (PyPI advisory service)"
    else:
        if not SNAPSHOT.is_file():
            print(
                "audit: pip-audit could not reach an advisory service and there is no "
                f"{SNAPSHOT.name}; nothing was checked",
                file=sys.stderr,
            )
            return 1
        findings, snapshot = offline(packages)
        source = f"offline advisories: {snapshot}; pip-audit could not reach a service"
    open_findings = [f for f in findings if (f[2], f[0]) not in accepted]
    for name, version, ident in findings:
        reason = accepted.get((ident, name))
        state = f"accepted: {reason}" if reason else "VULNERABLE"
        print(f"  {name} {version}: {ident} ({state})")
    print(
        f"audit: {len(packages)} installed packages, {len(open_findings)} open finding(s), "
        f"{len(findings) - len(open_findings)} accepted; {source}"
    )
    return 1 if open_findings else 0


if __name__ == "__main__":
    sys.exit(main())
