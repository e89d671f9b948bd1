"""The second benchmark suite (benchmarks/programs) at its small size on ppcl: every program's
host function, run as it is for the benchmark, gives numpy's result. Times are not asserted."""

from __future__ import annotations

import pytest

from benchmarks.programs import PROGRAMS
from benchmarks.programs.program import Data, Program, compare
from benchmarks.programs.runner import main


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_matches_numpy(program: Program, ctx, queue) -> None:
    import ppcl

    size = program.sizes["small"]
    inputs = program.make_inputs(size)
    data = Data(ppcl, ctx, program, size, inputs)
    expected = program.reference(size, inputs)
    for _ in range(2):  # the second run starts from buffers the first one changed
        mismatch = compare(program, program.run(ppcl, ctx, queue, data), expected)
        assert mismatch is None, mismatch


def test_suite_has_the_programs_it_promises() -> None:
    names = [program.name for program in PROGRAMS]
    assert len(names) == len(set(names)) >= 20
    for program in PROGRAMS:
        assert set(program.sizes) == {"small", "default"}, program.name


def test_runner_reports_one_program(tmp_path, capsys) -> None:
    report = tmp_path / "suite.json"
    status = main(["--size", "small", "--only", "atax", "--repeats", "1", "--no-pocl",
                   "--json", str(report)])
    assert status == 0
    assert "atax" in capsys.readouterr().out
    assert report.read_text().count('"ok": true') == 1
