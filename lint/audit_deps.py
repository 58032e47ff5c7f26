"""The installed Python packages, checked against what the package index can answer
(run by `make lint`).

    python -m lint.audit_deps             # the check
    python -m lint.audit_deps --require   # also exit 1 when no advisory service answered

1. Known vulnerabilities: `pip-audit --strict` against PyPI's advisory service. An
   index or mirror that serves no per-release JSON (as on the build machines here)
   cannot answer; the audit then says so plainly, `vulnerabilities: NOT AUDITED`, and
   passes only without `--require`. It never answers from an old copy of an advisory
   database: a stale file passing as an audit is worse than no audit.
2. Yanked releases: the index's own simple API (PEP 691 JSON, with PEP 592's `yanked`)
   answers whether an installed release was withdrawn. Any index serves it; a package
   the index does not know, or an index that cannot be reached, is named as unchecked.

A finding (a vulnerability or a yanked release) fails the run unless it is accepted in
lint/audit-exceptions.txt, one per line: `<id> <package> <reason>`, where the id of a
yanked release is `yanked`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import distributions
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

HERE = Path(__file__).resolve().parent
EXCEPTIONS = HERE / "audit-exceptions.txt"
OWN = {"gdpr-lakehouse"}
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


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


def vulnerabilities(packages: dict[str, str]) -> tuple[list[tuple[str, str, str]] | None, str]:
    """(pip-audit's findings [(package, version, id)], or None when it could not audit;
    the first error it printed)."""
    done = subprocess.run(
        [sys.executable, "-m", "pip_audit", "--strict", "--progress-spinner", "off", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    said = next((line for line in done.stderr.splitlines() if "ERROR" in line), "no answer")
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return None, said
    deps = [d for d in report.get("dependencies", []) if normalize(d["name"]) in packages]
    if not deps or any("skip_reason" in d for d in deps):
        return None, said
    found = [
        (normalize(d["name"]), d["version"], v["id"]) for d in deps for v in d.get("vulns", [])
    ]
    return found, ""


def index_url() -> str:
    """The index pip installs from: PIP_INDEX_URL, pip's configuration, else PyPI."""
    url = os.environ.get("PIP_INDEX_URL", "")
    if not url:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True,
            text=True,
        )
        url = done.stdout.strip() if done.returncode == 0 else ""
    return (url or "https://pypi.org/simple").rstrip("/")


def release_version(filename: str) -> Version | None:
    """The version a wheel or an sdist file name carries, None for anything else."""
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        if filename.endswith((".tar.gz", ".zip")):
            return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


def release_yanked(project: dict, version: str) -> bool | None:
    """From a PEP 691 project page: True when every file of the release is yanked, False
    when one is not, None when the page lists no file of that release."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    files = [
        f for f in project.get("files", []) if release_version(f.get("filename", "")) == wanted
    ]
    if not files:
        return None
    return all(bool(f.get("yanked")) for f in files)


def project_page(index: str, name: str) -> dict | None:
    request = urllib.request.Request(f"{index}/{name}/", headers={"Accept": SIMPLE_JSON})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            if SIMPLE_JSON not in answer.headers.get("Content-Type", ""):
                return None
            return json.load(answer)
    except (urllib.error.URLError, TimeoutError, ValueError, OSError):
        return None


def yanked(packages: dict[str, str], index: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    """([(package, version, 'yanked')], [packages the index could not answer for])."""
    names = sorted(packages)
    with ThreadPoolExecutor(8) as pool:
        pages = dict(zip(names, pool.map(lambda n: project_page(index, n), names), strict=True))
    findings, unchecked = [], []
    for name in names:
        answer = None if pages[name] is None else release_yanked(pages[name], packages[name])
        if answer is None:
            unchecked.append(name)
        elif answer:
            findings.append((name, packages[name], "yanked"))
    return findings, unchecked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lint.audit_deps", description=__doc__)
    parser.add_argument(
        "--require", action="store_true", help="exit 1 when no advisory service answered"
    )
    args = parser.parse_args(argv)
    packages = installed()
    accepted = exceptions()
    index = index_url()
    found, said = vulnerabilities(packages)
    withdrawn, unchecked = yanked(packages, index)
    findings = [*(found or []), *withdrawn]
    for name, version, ident in findings:
        reason = accepted.get((ident, name))
        print(f"  {name} {version}: {ident} ({f'accepted: {reason}' if reason else 'FINDING'})")
    open_findings = [f for f in findings if (f[2], f[0]) not in accepted]
    if found is None:
        print(
            "audit: vulnerabilities: NOT AUDITED: pip-audit got no answer from an advisory "
            f"service ({said[:160]}); nothing here says these packages are free of known "
            "vulnerabilities"
        )
    else:
        print(f"audit: vulnerabilities: {len(found)} found by pip-audit (PyPI advisory service)")
    print(
        f"audit: yanked releases: {len(withdrawn)} of {len(packages) - len(unchecked)} "
        f"checked on {index}"
        + (f"; not answered for {len(unchecked)}: {', '.join(unchecked[:8])}" if unchecked else "")
    )
    print(f"audit: {len(packages)} installed packages, {len(open_findings)} open finding(s)")
    if open_findings:
        return 1
    return 1 if args.require and found is None else 0


if __name__ == "__main__":
    sys.exit(main())
