"""The kernel fuzzer: generated programs are deterministic, valid in every mode and agree on
every device; failures reduce to small reproducers; ``ppcl fuzz`` runs a campaign."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ppcl.compiler.frontend import compile_source
from ppcl.fuzz import MODES, generate, reduce_program, run_program
from ppcl.fuzz.run import pocl_target, ppcl_targets
from tests.child_env import child_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def targets() -> list:
    found = ppcl_targets()
    pocl = pocl_target()
    return found + ([pocl] if pocl is not None else [])


def test_a_seed_gives_one_program() -> None:
    assert generate(11).source == generate(11).source
    assert generate(11).source != generate(12).source
    with pytest.raises(ValueError, match="unknown fuzz mode"):
        generate(1, "floats")


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_is_valid_opencl_c(mode: str) -> None:
    for seed in range(6):
        program = generate(seed, mode)
        compile_source(program.source)  # raises a located CompileError if not
        assert program.global_size % program.local_size == 0


@pytest.mark.parametrize("mode", MODES)
def test_devices_agree_on_generated_programs(targets: list, mode: str) -> None:
    """A bounded run of the campaign CI does: every program the same on the CPU device, the
    checking device (no finding) and pocl where installed."""
    for seed in range(100, 103):
        outcome = run_program(generate(seed, mode), targets)
        assert outcome.kind == "ok", (seed, mode, outcome)


def test_a_failure_reduces_to_the_statement_that_causes_it(targets: list) -> None:
    program = generate(5, "plain")
    body = list(program.body)
    body.insert(3, "    v_missing += 1u;")  # at the top level, after the ids
    broken = program.with_body(tuple(body))
    outcome = run_program(broken, targets[:1])
    assert outcome.kind == "build" and "v_missing" in outcome.detail
    reduced, runs = reduce_program(broken, outcome, lambda p: run_program(p, targets[:1]))
    assert 0 < runs <= 400
    assert reduced.body[-1] == "    v_missing += 1u;"
    assert len(reduced.body) == 3  # the work-item ids and the statement
    assert run_program(reduced, targets[:1]).same_failure(outcome)


def test_the_command_runs_a_campaign(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ppcl.cli", "fuzz", "--seed", "40", "--count", "4",
         "--no-pocl", "--out", str(tmp_path / "failures"), "--json", str(tmp_path / "s.json")],
        cwd=ROOT, env=child_env({"HOME": str(tmp_path)}, base={"PATH": "/usr/bin:/bin"}),
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 programs in" in done.stdout and "0 failing" in done.stdout
    assert '"programs": 4' in (tmp_path / "s.json").read_text()
    assert not (tmp_path / "failures").exists()
