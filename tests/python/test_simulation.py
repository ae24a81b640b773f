"""The sim:PLATFORM regime: platforms of sim/, host files, smpirun launch
lines, and what a suite of sim regimes is refused for before anything runs.
Needs no SimGrid: nothing here is run."""

import textwrap
from pathlib import Path

import pytest

from asyncsolve_lab import runner, simulation
from asyncsolve_lab.capabilities import Capabilities
from asyncsolve_lab.suite import SuiteError, parse_suite

ROOT = Path(__file__).resolve().parents[2]
SUITE_PATH = ROOT / "suites" / "s.toml"  # platforms are looked up in suites/../sim

SIM = textwrap.dedent("""\
    [suite]
    name = "s"
    regimes = ["sim:torus"]

    [[experiment]]
    name = "a"
    program = "solve"
    ranks = [4, 256]
    [experiment.options]
    local = "8,8,8"
    [experiment.matrix]
    variant = ["sync", "async"]
    """)


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as err:
        parse_suite(text, SUITE_PATH)
    return str(err.value)


def test_every_platform_of_sim_has_1024_hosts():
    for name in ("torus", "ib-fattree", "gige"):
        p = simulation.find_platform(f"sim:{name}", simulation.search_dirs(SUITE_PATH))
        assert len(p.hosts) == 1024
        assert p.hosts[:2] == ("node-0", "node-1")


def test_a_sim_suite_launches_smpirun_on_its_platform(tmp_path):
    suite = parse_suite(SIM, SUITE_PATH)
    assert suite.simulated
    run = suite.runs()[-1]
    assert run.regime == "sim:torus"
    assert run.platform is not None
    launch = runner.build_launch(run, Capabilities(Path("/bin/asyncsolve")),
                                 tmp_path / "runs" / "x.json")
    argv = launch.argv
    assert argv[:3] == ["smpirun", "-np", str(run.ranks)]
    assert argv[argv.index("-platform") + 1] == str(ROOT / "sim" / "torus.xml")
    assert argv[argv.index("-hostfile") + 1] == str(tmp_path / "hosts" / "torus.hosts")
    assert "/bin/asyncsolve" in argv
    assert not launch.oversubscribed
    hosts = simulation.write_hostfile(run.platform, tmp_path / "hosts")
    assert hosts.read_text().splitlines()[255] == "node-255"


def test_a_missing_platform_is_refused_with_its_line():
    msg = error_of(SIM.replace("sim:torus", "sim:nowhere"))
    assert "s.toml:3:" in msg
    assert "sim:nowhere" in msg
    assert "known: " in msg
    assert "sim:torus" in msg


def test_more_ranks_than_hosts_are_refused():
    msg = error_of(SIM.replace("[4, 256]", "[4, 2048]"))
    assert "s.toml:8:" in msg
    assert "2048 ranks" in msg
    assert "1024 hosts" in msg


@pytest.mark.parametrize(("option", "value"), [("transport", "omp"), ("transport", "shmem"),
                                           ("hybrid", "funneled"), ("progress", "thread"),
                                           ("halo", "neighbor")])
def test_what_the_simulation_lacks_is_refused(option, value):
    msg = error_of(SIM + f'{option} = ["{value}"]\n')
    assert "s.toml:13:" in msg
    assert f"--{option} {value}" in msg
    assert "simulation" in msg


def test_sim_and_real_regimes_do_not_mix():
    msg = error_of(SIM.replace('program = "solve"', 'program = "solve"\nregimes = ["shm", '
                               '"sim:torus"]'))
    assert "shm" in msg
    assert "suite of their own" in msg


def test_a_platform_with_clusters_and_hosts(tmp_path):
    path = tmp_path / "two.xml"
    path.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">'
                    '<host id="a" speed="1Gf"/><cluster id="c" prefix="n" suffix=".x" '
                    'radical="0-2;7" speed="1Gf" bw="1GBps" lat="1us"/></zone></platform>')
    assert simulation.platform_hosts(path) == ("a", "n0.x", "n1.x", "n2.x", "n7.x")
    p = simulation.find_platform(f"sim:{path}", [])
    assert p.name == str(path)
    (tmp_path / "bad.xml").write_text("<platform version='4.1'></platform>")
    with pytest.raises(ValueError, match="no host"):
        simulation.find_platform(f"sim:{tmp_path / 'bad.xml'}", [])


@pytest.mark.parametrize("launcher", ["oshrun", "cafrun"])
def test_launchers_other_than_mpi_are_refused(launcher):
    msg = error_of(SIM.replace('program = "solve"', f'program = "solve"\nlauncher = "{launcher}"'))
    assert f"launcher {launcher}" in msg
    assert "MPI only" in msg


def test_a_suite_kept_elsewhere_and_run_from_elsewhere_finds_the_platforms(tmp_path,
                                                                          monkeypatch):
    """Neither the suite's folder nor the current folder has a sim/: the
    lab's own project's platforms are found."""
    from asyncsolve_lab.suite import load_suite

    suite = tmp_path / "mine" / "suites" / "s.toml"
    suite.parent.mkdir(parents=True)
    suite.write_text(SIM)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loaded = load_suite(str(suite))
    assert loaded.platforms["sim:torus"].path == ROOT / "sim" / "torus.xml"
    assert len(loaded.platforms["sim:torus"].hosts) == 1024


def test_a_host_file_that_is_a_fifo_is_replaced(tmp_path):
    import os

    platform = simulation.find_platform("sim:torus", simulation.search_dirs(SUITE_PATH))
    (tmp_path / "hosts").mkdir()
    os.mkfifo(tmp_path / "hosts" / "torus.hosts")
    path = simulation.write_hostfile(platform, tmp_path / "hosts")
    assert path.is_file()
    assert len(path.read_text().split()) == 1024
