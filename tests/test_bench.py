"""The benchmark suite at its small size: every kernel gives numpy's result on ppcl, and on pocl
when pyopencl and a pocl platform are installed. Times are not asserted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ppcl.bench import main
from ppcl.bench_kernels import CASES, make_case


@pytest.fixture(scope="module")
def small_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    path = tmp_path_factory.mktemp("bench") / "small.json"
    status = main(["--size", "small", "--repeats", "1", "--json", str(path)])
    return status, json.loads(Path(path).read_text())


def test_small_suite_runs_on_ppcl(small_report: tuple[int, dict]) -> None:
    _, report = small_report
    assert "ppcl" in report["backends"], report["notices"]
    assert report["backends"]["ppcl"]["setup_error"] is None


def test_every_kernel_matches_numpy(small_report: tuple[int, dict]) -> None:
    status, report = small_report
    failures = [f"{kernel['name']} on {label}: {result['error']}"
                for kernel in report["kernels"]
                for label, result in kernel["results"].items() if not result["ok"]]
    assert not failures, "\n".join(failures)
    assert [kernel["name"] for kernel in report["kernels"]] == list(CASES)
    assert status == 0


def test_report_has_build_launch_and_limits(small_report: tuple[int, dict]) -> None:
    _, report = small_report
    ppcl = report["backends"]["ppcl"]
    for key in ("build_cold_s", "build_warm_s", "launch_s"):
        assert ppcl[key] is not None and ppcl[key] > 0
    assert report["limits"]["copy_GBps"] > 0
    assert report["limits"]["sgemm_GFLOPs"] > 0
    assert len(report["targets"]) == 8


@pytest.mark.parametrize("name", list(CASES))
def test_check_rejects_wrong_output(name: str) -> None:
    """The checks are not vacuous: outputs filled with 7s fail."""
    case = make_case(name, "small", np.random.default_rng(0))
    wrong = {out: np.full(shape, 7, dtype=dtype) for out, (shape, dtype) in case.outputs.items()}
    assert case.check(wrong) is not None


def test_unknown_kernel_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--only", "saxpy,nonesuch"]) == 2
    assert "nonesuch" in capsys.readouterr().err
