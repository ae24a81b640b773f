"""Suite files: parsing, validation errors with their line numbers, expansion."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from asyncsolve_lab.suite import KeyLocator, SuiteError, load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[2]

GOOD = textwrap.dedent("""\
    # a comment
    [suite]
    name = "t"
    repeats = 2
    regimes = ["shm", "tcp"]

    [[experiment]]
    name = "a"
    program = "solve"
    ranks = [1, 2]
    exclude = [{ ranks = 1, slow-rank = 1 }]
    [experiment.options]
    local = "8,8,8"
    [experiment.matrix]
    variant = ["sync", "async"]
    slow-rank = [-1, 1]

    [[experiment]]
    name = "b"
    program = "model hybrid"
    repeats = 1
    regimes = ["shm"]
    plots = [{ kind = "model" }]
    [experiment.options]
    threads = 8
    f-comm = 0.43
    f-comp-non = 0.2
    """)


def error_of(text: str) -> str:
    with pytest.raises(SuiteError) as err:
        parse_suite(text, Path("s.toml"))
    return str(err.value)


def test_good_suite_expands_into_interleaved_runs():
    suite = parse_suite(GOOD, Path("s.toml"))
    assert [e.name for e in suite.experiments] == ["a", "b"]
    runs = suite.runs()
    # a: 2 regimes x (1 rank: 2 variants; 2 ranks: 2 variants x 2 slow-ranks) x 2 repeats
    a = [r for r in runs if r.experiment == "a"]
    assert len(a) == 2 * (2 + 4) * 2
    assert not any(r.ranks == 1 and r.config["slow-rank"] == 1 for r in a)
    assert len([r for r in runs if r.experiment == "b"]) == 1
    # repeats interleaved: every configuration once, then again (A B A B)
    repeats = [r.repeat for r in runs]
    assert repeats == sorted(repeats)
    first = [(r.experiment, r.regime, r.ranks, tuple(r.config.items())) for r in runs
             if r.repeat == 0 and r.experiment == "a"]
    second = [(r.experiment, r.regime, r.ranks, tuple(r.config.items())) for r in runs
              if r.repeat == 1]
    assert first == second
    ids = [r.run_id for r in runs]
    assert len(set(ids)) == len(ids)
    assert ids == [r.run_id for r in parse_suite(GOOD, Path("s.toml")).runs()]  # stable
    assert runs[0].options == {"local": "8,8,8", "variant": "sync", "slow-rank": -1}
    assert suite.experiments[1].launcher == "none"


def test_changing_a_fixed_option_changes_the_run_ids():
    ids = {r.run_id for r in parse_suite(GOOD).runs()}
    other = {r.run_id for r in parse_suite(GOOD.replace('"8,8,8"', '"9,9,9"')).runs()}
    assert ids.isdisjoint({i for i in other if i.startswith("a-")})


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    ('repeats = 2\n', 'repeats = 2\nrepeat = 3\n', 5, "unknown key 'repeat' in [suite]"),
    ('repeats = 2\n', 'repeats = "two"\n', 4, "'repeats' must be an integer, not a string"),
    ('repeats = 2\n', 'repeats = 0\n', 4, "'repeats' must be positive"),
    ('regimes = ["shm", "tcp"]', 'regimes = ["shm", "ib"]', 5, "expected one of shm, tcp"),
    ('name = "b"\n', 'name = "b"\nprogramme = "solve"\n', 20,
     "unknown key 'programme' in [[experiment]] #2"),
    ('ranks = [1, 2]', 'ranks = [1, "2"]', 10, "'ranks' must be an integer"),
    ('variant = ["sync", "async"]', 'variant = "sync"', 15,
     "'matrix.variant' must be a non-empty array"),
    ('f-comm = 0.43', 'f-comm = [0.43]', 26, "'options.f-comm' must be"),
    ('plots = [{ kind = "model" }]', 'plots = [{ kind = "model", colour = "red" }]', 23,
     "unknown key 'colour' in a plot"),
    ('plots = [{ kind = "model" }]', 'plots = ["pie"]', 23, "'kind' is 'pie'"),
    ('exclude = [{ ranks = 1, slow-rank = 1 }]', 'exclude = [{ rank = 1 }]', 11,
     "exclude key 'rank' is not a matrix key"),
    ('program = "model hybrid"', 'program = "model hybrid"\nranks = [2]', 21,
     "ranks must be 1"),
    ('name = "b"', 'name = "a"', 19, "experiment name 'a' is used twice"),
    ('local = "8,8,8"', 'local = "8,8,8"\njson = "x.json"', 14, "'json' is set by the lab"),
    ('program = "solve"', 'program = "sovle now"', 9, "program 'sovle now'"),
    ('plots = [{ kind = "model" }]', 'plots = [{ kind = "bars", x = "ranks", y = "speedup" }]',
     23, "needs a line plot against ranks"),
])
def test_errors_name_the_key_and_its_line(old, new, line, words):
    assert old in GOOD
    msg = error_of(GOOD.replace(old, new, 1))
    assert msg.startswith(f"s.toml:{line}: "), msg
    assert words in msg, msg


@pytest.mark.parametrize(("exclude", "words"), [
    ('{ variant = "racy" }',
     "exclude variant = 'racy': experiment 'a' does not run it (its variant values: sync, async)"),
    ('{ ranks = 3 }', "exclude ranks = 3: experiment 'a' does not run it (its ranks values: 1, 2)"),
    ('{ regime = "ib" }', "exclude regime = 'ib'"),
    ('{ ranks = 1, slow-rank = 2 }', "exclude slow-rank = 2"),
    ('{ ranks = 1 }, { slow-rank = "1" }', "exclude slow-rank = '1'"),
])
def test_an_exclusion_that_leaves_nothing_out_is_refused_with_its_line(exclude, words):
    """As a claim naming a value the experiment does not run is refused."""
    msg = error_of(GOOD.replace("exclude = [{ ranks = 1, slow-rank = 1 }]",
                                f"exclude = [{exclude}]"))
    assert msg.startswith("s.toml:11: "), msg
    assert words in msg, msg
    assert "leaves nothing out" in msg, msg


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    # an environment variable name the process could not be given
    ('program = "solve"', 'program = "solve"\nenv = { "A=B" = "c" }', 10,
     "environment variable name 'A=B': expected a non-empty name without '=' or NUL"),
    ('program = "solve"', 'program = "solve"\nenv = { "" = "x" }', 10,
     "environment variable name '': expected a non-empty name"),
    ('program = "solve"', 'program = "solve"\nenv = { A = "x\\u0000y" }', 10,
     "env.A value 'x\\x00y' holds a NUL character"),
    ('local = "8,8,8"', 'local = "8,8\\u0000,8"', 13, "options.local '8,8\\x00,8' holds a NUL"),
    ('name = "t"', 'name = "t"\nresults = "r\\u0000s"', 4, "results folder 'r\\x00s' holds a NUL"),
    # a value listed twice in a list that defines runs: the same run twice, into one file
    ('ranks = [1, 2]', 'ranks = [1, 2, 1]', 10, "'ranks' lists 1 twice; expected each value once"),
    ('variant = ["sync", "async"]', 'variant = ["sync", "sync"]', 15,
     "'matrix.variant' lists 'sync' twice"),
    ('slow-rank = [-1, 1]', 'slow-rank = [-1, 1, -1]', 16, "'matrix.slow-rank' lists -1 twice"),
    ('regimes = ["shm", "tcp"]', 'regimes = ["shm", "shm"]', 5, "'regimes' lists 'shm' twice"),
    ('regimes = ["shm"]', 'regimes = ["tcp", "tcp"]', 22, "'regimes' lists 'tcp' twice"),
    # exclusions that leave no run of the experiment
    ('exclude = [{ ranks = 1, slow-rank = 1 }]',
     'exclude = [{ variant = "sync" }, { variant = "async" }]', 11,
     "'exclude' excludes every run of experiment 'a'"),
    ('exclude = [{ ranks = 1, slow-rank = 1 }]',
     'exclude = [{ regime = "shm" }, { regime = "tcp" }]', 11,
     "excludes every run of experiment 'a'"),
    # messages that name the mistake made
    ('variant = ["sync", "async"]', 'variant = []', 15,
     "'matrix.variant' must be a non-empty array of values, not an empty array"),
    ('local = "8,8,8"', 'local = "8,8,8"\nmax_iters = 10', 14,
     ("option name 'max_iters': expected 'max-iters' (options are spelled as on the command "
      "line, with '-' between words")),
    ('local = "8,8,8"', 'local = "8,8,8"\n"--tol" = 1e-3', 14,
     "option name '--tol': expected 'tol'"),
    ('local = "8,8,8"', 'local = "8,8,8"\n"max iters" = 10', 14,
     "option name 'max iters': expected letters, digits and '-'"),
])
def test_suites_that_cannot_run_as_written_are_refused_with_their_line(old, new, line, words):
    """What --check called valid and run then failed on (a traceback for an
    environment variable name with '='), ran twice into one file (a value
    listed twice), or ran nothing of (everything excluded); and messages
    that described another mistake than the one made."""
    assert old in GOOD
    msg = error_of(GOOD.replace(old, new, 1))
    assert msg.startswith(f"s.toml:{line}: "), msg
    assert words in msg, msg


def test_one_experiment_table_written_with_single_brackets():
    msg = error_of('[suite]\nname = "x"\n[experiment]\nname = "y"\nprogram = "solve"\n')
    assert msg == ("s.toml:3: 'experiment' is one table ([experiment]); expected an array of "
                   "tables: write [[experiment]]")


def test_duplicates_are_the_values_the_program_is_given_alike():
    """1 and 1.0 are two command lines (--slow-rank 1, --slow-rank 1.0); 1 and
    "1" are one."""
    suite = parse_suite(GOOD.replace('slow-rank = [-1, 1]', 'slow-rank = [-1, 1, 1.0]')
                        .replace('exclude = [{ ranks = 1, slow-rank = 1 }]', ''))
    assert suite.experiments[0].matrix["slow-rank"] == [-1, 1, 1.0]
    assert len({r.run_id for r in suite.runs()}) == len(suite.runs())
    assert "'matrix.slow-rank' lists '1' twice" in error_of(
        GOOD.replace('slow-rank = [-1, 1]', 'slow-rank = [-1, 1, "1"]'))


def test_an_exclusion_leaves_out_what_it_names():
    runs = parse_suite(GOOD.replace("exclude = [{ ranks = 1, slow-rank = 1 }]",
                                    "exclude = [{ ranks = 1, slow-rank = 1.0 }]")).runs()
    assert not [r for r in runs if r.ranks == 1 and r.config.get("slow-rank") == 1]
    assert [r for r in runs if r.ranks == 2 and r.config.get("slow-rank") == 1]


def test_matrix_key_in_second_experiment_located_in_its_own_table():
    text = GOOD + '[experiment.matrix]\nf-comm = 0.5\n'
    msg = error_of(text)
    assert msg.startswith("s.toml:29:")
    assert "'matrix.f-comm' must be a non-empty array" in msg


def test_toml_syntax_error_has_line_and_column():
    msg = error_of(GOOD.replace('name = "a"', 'name = "a'))
    assert msg.startswith("s.toml:8:")
    assert "not valid TOML" in msg


def test_missing_suite_table_and_experiments():
    assert "lacks the required key 'suite'" in error_of('[[experiment]]\nname = "x"\n')
    assert "at least one [[experiment]]" in error_of('[suite]\nname = "x"\n')
    assert "lacks the required key 'program'" in error_of(
        '[suite]\nname = "x"\n[[experiment]]\nname = "y"\n')


def test_doc_reference_must_name_an_earlier_experiment():
    msg = error_of(GOOD.replace('threads = 8', 'fit = "{doc:nowhere}"'))
    assert msg.startswith("s.toml:25:")
    assert "{doc:nowhere} must name an earlier experiment" in msg


def test_locator_dotted_keys_inline_tables_and_arrays_of_tables():
    loc = KeyLocator(textwrap.dedent("""\
        [suite]
        name = "x"
        [[experiment]]
        name = "a"
        [[experiment]]
        name = "b"
        options.local = "1,1,1"
        env = { A = "1", B = "2" }
        [experiment.matrix]
        variant = [
          "sync",
        ]
        """))
    assert loc.line_of(("suite", "name")) == 2
    assert loc.line_of(("experiment", 0, "name")) == 4
    assert loc.line_of(("experiment", 1, "name")) == 6
    assert loc.line_of(("experiment", 1, "options", "local")) == 7
    assert loc.line_of(("experiment", 1, "env", "B")) == 8
    assert loc.line_of(("experiment", 1, "matrix", "variant")) == 10
    assert loc.line_of(("experiment", 1, "matrix", "variant", 0)) == 10


def test_shipped_suites_parse():
    for path in sorted((ROOT / "suites").glob("*.toml")):
        suite = load_suite(path)
        assert suite.runs(), path


def test_cli_exit_code_2_with_the_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("repeats = 1\n", "repeats = 1\nrepaets = 2\n"))
    proc = subprocess.run([sys.executable, "-m", "asyncsolve_lab", "run", str(bad), "--check"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    assert f"{bad}:22: unknown key 'repaets'" in proc.stderr


def test_the_documented_example_suite_parses():
    import re
    text = (ROOT / "docs" / "lab.md").read_text()
    section = text[text.index("## Suite files"):]
    example = re.search(r"```toml\n(.*?)```", section, re.DOTALL).group(1)
    suite = parse_suite(example, Path("docs/lab.md"))
    assert len(suite.runs()) == 90
