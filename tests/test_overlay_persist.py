"""The overlay's plans and generated programs on disk (``ppcl/overlay/persist.py``): a second
process replays a known pattern with no front-end build of a generated kernel and identical
results; damaged entries are ignored; disk keys do not depend on object identities."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import ppcl as cl
from ppcl.overlay import persist
from ppcl.overlay.graph import Node, TaskGraph
from tests.child_env import child_env

SOURCE = """
__kernel void gray(__global const uchar4 *rgb, __global float *g, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    float4 p = convert_float4(rgb[i]);
    g[i] = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
}
__kernel void grad(__global const float *g, __global float *out, int w, int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    int xl = max(x - 1, 0), xr = min(x + 1, w - 1);
    out[y * w + x] = g[y * w + xr] - g[y * w + xl] + (float)h * 0.0f;
}
__kernel void square(__global const float *a, __global float *b, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    b[i] = a[i] * a[i];
}
__kernel void scale(__global const float *u, __global float *v, float k, int w)
{
    int i = get_global_id(1) * w + get_global_id(0);
    v[i] = u[i] * k + 1.0f;
}
"""

# a pipeline (gray, gradient, square) and a loop of two point-wise kernels, each run three
# times so the second and third replays specialize; the generated kernels' front-end builds
# are counted (the program's own build happens before counting starts)
SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import ppcl as cl
    from ppcl.runtime import program as program_module

    SOURCE = open(sys.argv[1]).read()
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    prg = cl.Program(ctx, SOURCE).build()
    frontend_runs = []
    original = program_module._frontend
    def counting(source, *args):
        frontend_runs.append(source)
        return original(source, *args)
    program_module._frontend = counting
    queue = cl.CommandQueue(ctx)
    assert cl.overlay.enable(queue)
    mf = cl.mem_flags
    h, w = 23, 37
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
    results = []
    for _ in range(3):
        src = cl.Buffer(ctx, mf.READ_ONLY, rgb.nbytes)
        g, d, s = (cl.Buffer(ctx, mf.READ_WRITE, h * w * 4) for _ in range(3))
        cl.enqueue_copy(queue, src, rgb, is_blocking=False)
        prg.gray(queue, (w, h), None, src, g, np.int32(w))
        prg.grad(queue, (w, h), None, g, d, np.int32(w), np.int32(h))
        prg.square(queue, (w, h), None, d, s, np.int32(w))
        out = np.empty((h, w), np.float32)
        cl.enqueue_copy(queue, out, s)
        results.append(out)
        for buf in (src, g, d, s):
            buf.release()
    u0 = rng.random((h, w), dtype=np.float32)
    for _ in range(3):
        u = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=u0)
        v = cl.Buffer(ctx, mf.READ_WRITE, u0.nbytes)
        for _ in range(4):
            prg.scale(queue, (w, h), None, u, v, np.float32(0.5), np.int32(w))
            prg.scale(queue, (w, h), None, v, u, np.float32(0.25), np.int32(w))
        out = np.empty_like(u0)
        cl.enqueue_copy(queue, out, u)
        results.append(out)
    np.save(sys.argv[2], np.stack([r.ravel() for r in results]))
    print("frontend runs:", len(frontend_runs))
""")


def _run(tmp_path: Path, cache: Path, name: str) -> tuple[np.ndarray, int, str]:
    script = tmp_path / "pattern.py"
    script.write_text(SCRIPT)
    source = tmp_path / "kernels.cl"
    source.write_text(SOURCE)
    result_path = tmp_path / f"{name}.npy"
    env = child_env({"PPCL_CACHE_DIR": str(cache), "PPCL_DEBUG": "overlay", "PPCL_OVERLAY": "0"})
    done = subprocess.run([sys.executable, str(script), str(source), str(result_path)],
                          env=env, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    runs = int(done.stdout.split("frontend runs:")[1])
    return np.load(result_path), runs, done.stderr


def _reference() -> np.ndarray:
    """The pattern computed with numpy."""
    h, w = 23, 37
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (h, w, 4), dtype=np.uint8).astype(np.float32)
    g = 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]
    x = np.arange(w)
    d = g[:, np.minimum(x + 1, w - 1)] - g[:, np.maximum(x - 1, 0)]
    u = rng.random((h, w), dtype=np.float32)
    for _ in range(4):
        u = (u * 0.5 + 1.0) * 0.25 + 1.0
    return np.stack([(d * d).ravel()] * 3 + [u.ravel()] * 3)


def test_second_process_replays_from_disk(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, first_runs, first_log = _run(tmp_path, cache, "first")
    assert "built from source" in first_log
    assert first_runs > 0  # the generated kernels went through the front end
    assert list((cache / "overlay" / "plans").glob("*.json"))
    assert list((cache / "overlay" / "programs").glob("*.bin"))
    np.testing.assert_allclose(first, _reference(), rtol=1e-5, atol=1e-3)

    second, second_runs, second_log = _run(tmp_path, cache, "second")
    assert second_runs == 0, second_log
    assert "from disk" in second_log and "built from source" not in second_log
    assert np.array_equal(first, second)


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[:len(data) // 2])
    elif how == "flip":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0x5A]) + data[middle + 1:])
    else:
        path.write_bytes(b"")


def test_damaged_entries_are_ignored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, _, _ = _run(tmp_path, cache, "first")
    entries = sorted((cache / "overlay").rglob("*.json")) + sorted(
        (cache / "overlay").rglob("*.bin"))
    assert entries
    for i, path in enumerate(entries):
        _damage(path, ("truncate", "flip", "empty")[i % 3])
    again, runs, log = _run(tmp_path, cache, "again")
    assert "ignored" in log
    assert runs > 0  # rebuilt from source
    assert np.array_equal(first, again)
    # the entries were written anew: the next process takes them
    third, third_runs, _ = _run(tmp_path, cache, "third")
    assert third_runs == 0
    assert np.array_equal(first, third)


def test_program_identity_is_what_the_program_computes(ctx: cl.Context) -> None:
    one = cl.Program(ctx, SOURCE).build()
    two = cl.Program(ctx, "\n" + SOURCE).build()  # another object, the same kernels
    defined = cl.Program(ctx, SOURCE.replace("1.0f", "ONE")).build("-D ONE=2.0f")
    assert persist.program_identity(one) == persist.program_identity(two)
    assert persist.program_identity(one) != persist.program_identity(defined)
    assert persist.program_identity(one) == persist.program_identity(
        cl.Program(ctx, ctx.devices, [one.binaries[0]]).build())


def test_plan_round_trip_and_checks(private_cache: Path) -> None:
    graph = TaskGraph([Node([0], "kernel", "k", {0}, {1}), Node([1], "transfer", "t", {1})],
                      [], {1}, {(0, 1, "raw")}, ["a note"], "digraph {}")
    plan = persist.StoredPlan([persist.StoredStep([0], "action"),
                               persist.StoredStep([1], "skip")], graph)
    persist.store_plan("k" * 64, plan)
    loaded, how = persist.load_plan("k" * 64, 2)
    assert how == "disk" and loaded is not None
    assert loaded.steps == plan.steps
    assert loaded.graph.to_dot() == graph.to_dot() and loaded.graph.notes == ["a note"]
    # a plan that does not cover the recording is refused (and removed)
    missing, how = persist.load_plan("k" * 64, 3)
    assert missing is None and "ignored" in how
    assert persist.load_plan("k" * 64, 2) == (None, "absent")


def test_plan_key_names_the_code(monkeypatch) -> None:
    """A plan made by other overlay or analysis code is never looked up."""
    device = cl.get_platforms()[0].get_devices()[0]
    key = persist.plan_key(("shape",), (), device)
    program = persist.program_key("text", "", device)
    monkeypatch.setattr(persist, "_code_digest", ["other code"])
    assert persist.plan_key(("shape",), (), device) != key
    assert persist.program_key("text", "", device) != program


def test_plan_key_does_not_depend_on_hashing() -> None:
    """Sets in a key are sorted, so string hashing (random per process) cannot change it."""
    assert persist._sorted((frozenset({"b", "c", "a"}), 1)) == (("a", "b", "c"), 1)
    device = cl.get_platforms()[0].get_devices()[0]
    assert persist.plan_key(("shape",), (), device) == persist.plan_key(("shape",), (), device)
    assert persist.plan_key(("shape",), (), device) != persist.plan_key(("other",), (), device)
