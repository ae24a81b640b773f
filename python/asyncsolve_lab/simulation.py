"""The `sim:PLATFORM` regime: runs under SimGrid's smpirun on a simulated cluster.

A regime `sim:NAME` names the platform file NAME.xml in a sim/ folder (beside
the suite's folder, in the current folder, or the project's own, which the
lab is installed from), or a path to a platform file (ending in .xml). The lab reads the
hosts the platform declares (plain <host> elements and the nodes of each
<cluster>), writes a host file with one host per line beside the results, and
launches

    smpirun -np N -platform PLATFORM.xml -hostfile HOSTS -no-privatize \
            --cfg=smpi/display-timing:yes --log=...thres:warning BINARY ...

so rank i runs on the platform's i-th host. The binary must be the
simulation build (make sim: build-sim/asyncsolve). Everything a suite
cannot run in simulation is refused when the suite is read, with its line.
See sim/README.md.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from .files import write_atomic

PREFIX = "sim:"
NAME = re.compile(r"^[A-Za-z0-9_.-]+$")

#: Option values the simulation build refuses (no threads, no OpenSHMEM, no
#: neighbourhood collectives in SMPI 3.32): option -> predicate, expectation.
UNSIMULATED = {
    "transport": (lambda v: v in ("omp", "shmem"), "mpi or rma"),
    "hybrid": (lambda v: v != "none", "none"),
    "progress": (lambda v: str(v).startswith("thread"), "none or poll:K"),
    "halo": (lambda v: v == "neighbor", "waitall, alltoallv, ialltoallv or persistent"),
}


def is_sim(regime: str) -> bool:
    return regime.startswith(PREFIX)


@dataclass(frozen=True)
class Platform:
    name: str  # the regime's NAME
    path: Path
    hosts: tuple[str, ...]


#: The source tree this lab is installed from (make venv installs it
#: editable): its sim/ holds the platforms of the project.
SOURCE_TREE = Path(__file__).resolve().parents[2]


def search_dirs(suite_path: Path) -> list[Path]:
    """Where platform names are looked up: sim/ beside the suite's folder
    (suites/../sim), sim/ in the current folder, then the platforms of the
    lab's own source tree (so a suite kept anywhere, run from any folder,
    finds sim:torus)."""
    dirs = [Path(suite_path).resolve().parent.parent / "sim", Path.cwd() / "sim",
            SOURCE_TREE / "sim"]
    return list(dict.fromkeys(d for d in dirs))


def known_platforms(dirs: list[Path]) -> list[str]:
    names: set[str] = set()
    for d in dirs:
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.xml"))
    return sorted(names)


def _radical_numbers(radical: str) -> list[int]:
    """SimGrid's radical: comma- or semicolon-separated numbers and ranges A-B."""
    out: list[int] = []
    for raw in re.split(r"[,;]", radical):
        part = raw.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def platform_hosts(path: Path) -> tuple[str, ...]:
    """The host names a platform file declares, in document order. Raises
    ValueError when the file is not a platform SimGrid could read."""
    try:
        root = ElementTree.parse(path).getroot()
    except (ElementTree.ParseError, OSError) as err:
        raise ValueError(f"not a readable platform file: {err}") from None
    if root.tag != "platform":
        raise ValueError(f"the root element is <{root.tag}>, expected <platform>")
    hosts: list[str] = []
    for el in root.iter():
        if el.tag == "host" and el.get("id"):
            hosts.append(el.get("id"))
        elif el.tag == "cluster":
            try:
                numbers = _radical_numbers(el.get("radical", ""))
            except ValueError:
                raise ValueError(f"cluster {el.get('id')!r}: radical "
                                 f"{el.get('radical')!r} is not numbers and ranges") from None
            hosts += [f"{el.get('prefix', '')}{n}{el.get('suffix', '')}" for n in numbers]
    if not hosts:
        raise ValueError("it declares no host")
    return tuple(hosts)


def find_platform(regime: str, dirs: list[Path]) -> Platform:
    """The platform of regime `sim:NAME`; ValueError with a one-line reason."""
    name = regime[len(PREFIX):]
    if name.endswith(".xml"):
        candidates = [Path(name)] + [d / name for d in dirs]
    elif NAME.match(name):
        candidates = [d / f"{name}.xml" for d in dirs]
    else:
        raise ValueError(f"regime {regime!r}: expected sim:NAME (a platform of sim/) or "
                         "sim:PATH.xml")
    for c in candidates:
        if c.is_file():
            try:
                return Platform(name=name, path=c.resolve(), hosts=platform_hosts(c))
            except ValueError as err:
                raise ValueError(f"regime {regime!r}: {c}: {err}") from None
    known = known_platforms(dirs)
    file = name if name.endswith(".xml") else f"{name}.xml"
    raise ValueError(f"regime {regime!r}: no platform file {file} in "
                     f"{', '.join(str(d) for d in dirs)}"
                     + (f" (known: {', '.join('sim:' + k for k in known)})" if known else ""))


def refusal(key: str, value: object) -> str | None:
    """Why the simulation build cannot run option --key value, or None."""
    rule = UNSIMULATED.get(key)
    if rule is None or not isinstance(value, str) or not rule[0](value):
        return None
    return (f"--{key} {value} cannot run in simulation (SimGrid SMPI runs no threads or "
            f"OpenSHMEM and has no neighbourhood collectives): expected {rule[1]}")


def write_hostfile(platform: Platform, folder: Path) -> Path:
    """The host file of `platform` (one host per line) under `folder`;
    rewritten only when its content changes."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{platform.path.stem}.hosts"
    text = "\n".join(platform.hosts) + "\n"
    if not path.is_file() or path.read_text() != text:
        write_atomic(path, text)
    return path


def launch_prefix(platform: Platform, ranks: int, hostfile: Path) -> list[str]:
    """smpirun's part of the command line, before the binary."""
    return ["smpirun", "-np", str(ranks), "-platform", str(platform.path), "-hostfile",
            str(hostfile), "-no-privatize", "--cfg=smpi/display-timing:yes",
            "--log=xbt_cfg.thres:warning", "--log=smpi_config.thres:warning"]
