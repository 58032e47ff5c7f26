"""Delta's JVM jars: fetched once from Maven Central into the local Maven repository.

The dbt profile (the one source of Spark settings) names them by path in the local
Maven repository (~/.m2/repository) in ``spark.jars``: delta-spark, whose version must
match the installed delta-spark Python package, and the dependencies of its POM that
Spark does not ship. This module fetches what is missing and checks that the profile's
list is exactly what the POMs name; a session then starts with no network and no Ivy.

The Spark cluster of ``python -m python_jobs.cluster`` also needs Derby's network
server and client (the metastore the Thrift server and the jobs share), at the
version of the Derby that ships in pyspark's jars. Spark's Thrift servers (the warm
engine's and the cluster's) need Hive's hive-llap-common, which Spark 4 stopped shipping,
at the version of pyspark's Hive.

This project's own jar (jvm/src: Hadoop's local file system without a process per
file, on the local target's driver class path) is compiled here with the JDK's javac
against pyspark's Hadoop and installed beside them; a jar whose recorded hash of the
sources is not jvm/src's is rebuilt, and refused by every session the Python jobs
start until it is (dbt's own session does not ask).

    python -m python_jobs.jars            # fetch what is missing (no-op when present)
    python -m python_jobs.jars --check    # exit 1 if anything is missing, fetch nothing
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from xml.etree import ElementTree

from python_jobs.project import ProjectError, engine_spark_parameters, prog

# Spark's Ivy "local-m2-cache" resolver reads exactly this folder.
M2_REPOSITORY = Path.home() / ".m2" / "repository"


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.name}:{self.version}"

    @property
    def jar(self) -> Path:
        folder = M2_REPOSITORY.joinpath(*self.group.split("."), self.name, self.version)
        return folder / f"{self.name}-{self.version}.jar"


def _profile_settings() -> dict[str, str]:
    return engine_spark_parameters()


# This project's own jar (jvm/src): Hadoop's local file system without a process per
# file (profiles.yml: fs.file.impl, and the jar on spark.driver.extraClassPath). Set-up
# compiles it against pyspark's own Hadoop and installs it into the local Maven
# repository; a hash of the sources inside the jar tells a stale build from a current one.
OWN = Artifact("io.github.gdpr-lakehouse", "gdpr-lakehouse-hadoop", "1")
OWN_SOURCES = Path(__file__).resolve().parent.parent / "jvm" / "src"
OWN_STAMP = "gdpr_lakehouse/hadoop/SOURCES.sha256"


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(OWN_SOURCES.rglob("*.java")):
        digest.update(path.relative_to(OWN_SOURCES).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def own_jar_named() -> bool:
    """True when the profile puts this project's jar on the driver's class path."""
    classpath = _profile_settings().get("spark.driver.extraClassPath") or ""
    return str(OWN.jar) in classpath.split(os.pathsep)


def own_jar_current() -> bool:
    """True when the installed jar records the hash of jvm/src's sources. Where jvm/src
    is absent (an installed package), when the jar is there at all."""
    try:
        with zipfile.ZipFile(OWN.jar) as jar:
            stamp = jar.read(OWN_STAMP).decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    return not OWN_SOURCES.is_dir() or stamp == _sources_digest()


def jdk_tool(name: str) -> str:
    """A JDK tool (java, javac, jar) from $JAVA_HOME, else PATH; a clear error without one."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / name) if home else shutil.which(name)
    if not found or not Path(found).is_file():
        raise ProjectError(
            f"{name} (a JDK's) is needed by the set-up (jvm/src, the class archive); install a JDK 17 "
            "(e.g. apt-get install openjdk-17-jdk-headless) and run `make setup` again"
        )
    return found


def build_own_jar() -> None:
    """Compile jvm/src against pyspark's jars and install the jar at OWN's path."""
    import pyspark

    classpath = str(Path(pyspark.__file__).parent / "jars" / "*")
    sources = sorted(str(p) for p in OWN_SOURCES.rglob("*.java"))
    if not sources:
        raise ProjectError(f"no Java sources under {OWN_SOURCES}")
    print(f"building {OWN.coordinate} from {OWN_SOURCES} into {M2_REPOSITORY}", flush=True)
    OWN.jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gdpr-lakehouse-jar-") as scratch:
        classes = Path(scratch) / "classes"
        subprocess.run(
            [
                jdk_tool("javac"),
                "--release",
                "17",
                "-nowarn",
                "-cp",
                classpath,
                "-d",
                str(classes),
                *sources,
            ],
            check=True,
        )
        stamp = classes / OWN_STAMP
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(_sources_digest() + "\n")
        built = Path(scratch) / OWN.jar.name
        subprocess.run([jdk_tool("jar"), "cf", str(built), "-C", str(classes), "."], check=True)
        # a temporary name beside the target, then one rename: never half a jar there
        partial = OWN.jar.with_name(f".{OWN.jar.name}.{os.getpid()}.tmp")
        shutil.copyfile(built, partial)
        os.replace(partial, OWN.jar)


# Delta 4.4's POM pulls Delta Kernel, whose dependencies are older copies of jars Spark
# ships (Hadoop, Parquet, Jackson, RoaringBitmap, log4j, slf4j): Spark's own copies
# serve. check_excludes() checks Spark ships every one.
SPARK_SHIPS = frozenset(
    {
        "org.scala-lang:scala-library",
        "org.apache.logging.log4j:log4j-slf4j2-impl",
        "org.apache.logging.log4j:log4j-api",
        "org.apache.logging.log4j:log4j-core",
        "org.slf4j:slf4j-api",
        "org.roaringbitmap:RoaringBitmap",
        "com.fasterxml.jackson.core:jackson-databind",
        "com.fasterxml.jackson.core:jackson-core",
        "com.fasterxml.jackson.core:jackson-annotations",
        "com.google.code.findbugs:jsr305",
        "org.apache.hadoop:hadoop-client-runtime",
        "org.apache.hadoop:hadoop-client-api",
        "org.apache.parquet:parquet-hadoop",
    }
)


def excluded_modules() -> set[str]:
    """``group:name`` of the dependencies of Delta's POMs that Spark ships itself."""
    return set(SPARK_SHIPS)


def declared_artifacts() -> list[Artifact]:
    """The jars the profile's spark.jars names, each a path in the local Maven repository."""
    raw = _profile_settings().get("spark.jars", "")
    artifacts = []
    for entry in filter(None, (item.strip() for item in raw.split(","))):
        path = Path(entry.removeprefix("file:"))
        try:
            parts = path.relative_to(M2_REPOSITORY).parts
        except ValueError:
            parts = ()
        if len(parts) < 4 or parts[-1] != f"{parts[-3]}-{parts[-2]}.jar":
            raise ProjectError(
                f"profiles.yml spark.jars names {entry[:120]}, not a jar in the local Maven "
                f"repository ({M2_REPOSITORY}/<group path>/<name>/<version>/<name>-<version>.jar)"
            )
        artifacts.append(Artifact(".".join(parts[:-3]), parts[-3], parts[-2]))
    return artifacts


def delta_package() -> Artifact:
    """The delta-spark jar of the profile's spark.jars, checked against the pins."""
    delta = next((a for a in declared_artifacts() if a.name.startswith("delta-spark_")), None)
    if delta is None:
        raise ProjectError(
            "profiles.yml spark.jars names no io.delta:delta-spark jar (local target)"
        )
    installed = version("delta-spark")
    if delta.version != installed:
        raise ProjectError(
            f"profiles.yml asks for Delta jars {delta.version} but the installed delta-spark "
            f"Python package is {installed}; set both to the same version"
        )
    # From Delta 4.1 on the artifact names the Spark it is built for
    # (delta-spark_4.2_2.13); a jar built for another Spark fails at the first query.
    spark = ".".join(version("pyspark").split(".")[:2])
    built_for = delta.name.removeprefix("delta-spark_").split("_")
    if len(built_for) == 2 and built_for[0] != spark:
        raise ProjectError(
            f"profiles.yml asks for {delta.name}, built for Spark {built_for[0]}, but the "
            f"installed pyspark is {version('pyspark')}; use io.delta:delta-spark_{spark}_2.13"
        )
    return delta


def _pom_dependencies(artifact: Artifact) -> list[tuple[Artifact, set[str]]]:
    """Compile and runtime dependencies of a POM in the local repository, with exclusions."""
    pom = artifact.jar.with_suffix(".pom")
    if not pom.is_file():
        return []
    root = ElementTree.parse(pom).getroot()
    ns = {"m": root.tag.partition("}")[0].lstrip("{")} if root.tag.startswith("{") else {}
    q = "m:" if ns else ""
    found = []
    for dep in root.findall(f"./{q}dependencies/{q}dependency", ns):

        def text(tag: str, node: ElementTree.Element = dep) -> str:
            return (node.findtext(f"{q}{tag}", default="", namespaces=ns) or "").strip()

        if text("scope") not in ("", "compile", "runtime") or text("optional") == "true":
            continue
        dep_version = text("version")
        if not dep_version or "$" in dep_version:
            raise ProjectError(
                f"{pom.name}: dependency {text('groupId')}:{text('artifactId')} has no literal "
                f"version ({dep_version or 'none'}); cannot list Delta's jars"
            )
        exclusions = {
            f"{text('groupId', e)}:{text('artifactId', e)}"
            for e in dep.findall(f"./{q}exclusions/{q}exclusion", ns)
        }
        found.append((Artifact(text("groupId"), text("artifactId"), dep_version), exclusions))
    return found


def delta_artifacts() -> list[Artifact]:
    """Every jar Delta needs that Spark does not ship: delta-spark and its dependencies.

    Walks the POMs in the local repository from the profile's delta-spark, leaving out
    what Spark ships (SPARK_SHIPS) and each POM's own exclusions. Before `make setup`
    has fetched the POMs, only delta-spark and delta-storage are known.
    """
    delta = delta_package()
    excluded = excluded_modules()
    chosen: dict[str, Artifact] = {}
    queue: list[tuple[Artifact, frozenset[str]]] = [(delta, frozenset())]
    while queue:
        artifact, blocked = queue.pop(0)
        module = f"{artifact.group}:{artifact.name}"
        if (
            module in chosen
            or module in excluded
            or module in blocked
            or f"{artifact.group}:*" in blocked
        ):
            continue
        chosen[module] = artifact
        for child, exclusions in _pom_dependencies(artifact):
            queue.append((child, blocked | exclusions))
    # delta-spark's own dependency: named even before its POM is fetched.
    storage = Artifact("io.delta", "delta-storage", delta.version)
    chosen.setdefault(f"{storage.group}:{storage.name}", storage)
    return list(chosen.values())


def check_declared(walked: list[Artifact]) -> None:
    """The profile's spark.jars must be exactly the jars Delta's POMs need: one missing
    is a class not found at the first query, one extra an old copy beside Spark's."""
    declared = {a.coordinate for a in declared_artifacts()}
    needed = {a.coordinate for a in walked}
    if declared != needed:
        raise ProjectError(
            "profiles.yml spark.jars (local target) is not the set of jars Delta's POMs need: "
            f"missing {', '.join(sorted(needed - declared)) or 'none'}; not needed "
            f"{', '.join(sorted(declared - needed)) or 'none'}"
        )


def check_excludes() -> None:
    """Each module of SPARK_SHIPS must be one Spark ships: else a class goes missing."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    shipped = {p.name for p in jars.glob("*.jar")}
    absent = sorted(
        module
        for module in excluded_modules()
        if not any(name.startswith(module.split(":")[1] + "-") for name in shipped)
    )
    if absent:
        raise ProjectError(
            "python_jobs.jars.SPARK_SHIPS leaves out jars Spark does not ship ("
            + ", ".join(absent)
            + f", not in {jars}); remove them from it"
        )


def cluster_artifacts() -> list[Artifact]:
    """Derby's network server and client, the version pyspark's embedded Derby has."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(jars.glob("derby-*.jar"))
    if not found:
        raise ProjectError(f"no derby-<version>.jar in {jars}: is pyspark installed?")
    derby = found[0].name.removeprefix("derby-").removesuffix(".jar")
    return [Artifact("org.apache.derby", name, derby) for name in ("derbynet", "derbyclient")]


def derby_client_classpath() -> str:
    """The jars a Spark driver needs to reach the Derby network metastore."""
    artifacts = require(cluster_artifacts(), "Derby's network jars")
    client = next(a for a in artifacts if a.name == "derbyclient")
    import pyspark

    shared = sorted((Path(pyspark.__file__).parent / "jars").glob("derbyshared-*.jar"))
    return os.pathsep.join(str(p) for p in [client.jar, *shared])


def thrift_server_artifacts() -> list[Artifact]:
    """Hive's hive-llap-common, at the version of pyspark's Hive jars. Spark 4 no longer
    ships it (apache/spark#49736), yet closing a Thrift session can initialize Hive's
    FunctionRegistry (SessionState.close -> Hive.get), whose static initializer needs
    its LlapSigner: without the jar CloseSession fails with NoClassDefFoundError."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(jars.glob("hive-exec-*-core.jar"))
    if not found:
        raise ProjectError(f"no hive-exec-<version>-core.jar in {jars}: is pyspark installed?")
    hive = found[0].name.removeprefix("hive-exec-").removesuffix("-core.jar")
    return [Artifact("org.apache.hive", "hive-llap-common", hive)]


def thrift_server_classpath() -> list[str]:
    """The jars a Spark Thrift server's driver needs beyond Spark's own and Delta's."""
    return [
        str(a.jar) for a in require(thrift_server_artifacts(), "Hive's jars for the Thrift server")
    ]


def missing(artifacts: list[Artifact]) -> list[Artifact]:
    return [artifact for artifact in artifacts if not artifact.jar.is_file()]


def require(artifacts: list[Artifact], what: str) -> list[Artifact]:
    """The artifacts, once each is in the local Maven repository; else stop with what to do."""
    absent = missing(artifacts)
    if absent:
        raise ProjectError(
            f"{what} are not in the local Maven repository ("
            + ", ".join(a.coordinate for a in absent)
            + "); run `make setup` once with network access"
        )
    return artifacts


def require_delta_jars() -> None:
    """Stop with what to do when a jar of Delta's (the POMs' or the profile's) is not in
    the local Maven repository."""
    needed = {a.coordinate: a for a in [*delta_artifacts(), *declared_artifacts()]}
    require(list(needed.values()), "Delta's jars")
    if own_jar_named() and not own_jar_current():
        raise ProjectError(
            f"{OWN.jar} (profiles.yml spark.driver.extraClassPath, built from jvm/src) is "
            "missing or older than its sources; run `make setup`"
        )


def fetch(artifacts: list[Artifact], *, transitive: bool = True) -> None:
    """Download with Maven (and, when transitive, the artifacts' dependencies) into
    ~/.m2/repository."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ProjectError(
            "Maven (mvn) is needed once to fetch Delta's jars from Maven Central; "
            "install it (e.g. apt-get install maven) and run `make setup` again"
        )
    for artifact in artifacts:
        print(f"fetching {artifact.coordinate} into {M2_REPOSITORY}", flush=True)
        subprocess.run(
            [
                mvn,
                "--batch-mode",
                "--quiet",
                f"-Dmaven.repo.local={M2_REPOSITORY}",
                "dependency:get",
                f"-Dartifact={artifact.coordinate}",
                f"-Dtransitive={str(transitive).lower()}",
            ],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.jars"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", action="store_true", help="report only; fetch nothing")
    args = parser.parse_args(argv)
    try:
        check_excludes()
        if own_jar_named() and not own_jar_current():
            if args.check:
                print(f"missing or older than jvm/src: {OWN.coordinate}", file=sys.stderr)
                return 1
            build_own_jar()
        delta = delta_artifacts()
        # the Thrift server's Hive jar alone: its dependencies are Spark's own jars
        alone = thrift_server_artifacts()
        artifacts = [*delta, *cluster_artifacts()]
        absent = missing(artifacts) + missing(alone)
        if not absent:
            check_declared(delta)
            print("Delta jars present: " + ", ".join(a.coordinate for a in delta))
            return 0
        if args.check:
            print("missing: " + ", ".join(a.coordinate for a in absent), file=sys.stderr)
            return 1
        if missing(alone):
            fetch(missing(alone), transitive=False)
        if missing(artifacts):
            fetch(missing(artifacts))
        # the POMs are here now: the whole closure, fetching any dependency still missing
        delta = delta_artifacts()
        artifacts = [*delta, *cluster_artifacts()]
        if missing(artifacts):
            fetch(missing(artifacts))
        artifacts += alone
        still = missing(artifacts)
        if still:
            raise ProjectError(
                "Maven ran but these jars are still missing: "
                + ", ".join(str(a.jar) for a in still)
            )
        check_declared(delta)
        print("Delta jars present: " + ", ".join(a.coordinate for a in delta))
        return 0
    except (ProjectError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
