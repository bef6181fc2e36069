"""The mass matrix against Pinocchio's C++: Pinocchio's crba compiled at benchmark time from its
installed headers and timed in a C++ loop, next to dynamics_cy's kernel timed in a compiled loop (no
Python per call), and both called from Python, on the same two alternating states of the same robots.
The four take batches of calls in turn (the same moments of the machine for all). Prints one table:
median µs per call [min–max over the rounds], and the ratio to Pinocchio of the same kind.

    python benchmarks/bench_mass_matrix.py [--rounds 7] [--batches 11] [--calls 20000] [--only G1] [--json PATH]

The compiled loops are built once into build/bench_mass_matrix/ (kept while their sources, the
compiler and the versions stay the same); Pinocchio's takes a few minutes to compile. $CXX names the
C++ compiler (default g++).
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import bench_dynamics
import numpy as np
import record
from bench_dynamics import Model, PeerSkipped

import dynamics_cy as dc

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "build" / "bench_mass_matrix"
PREFIX = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"      # where pin's wheels put Pinocchio
CXX_FLAGS = ["-O3", "-DNDEBUG", "-std=c++17",
             # Pinocchio's CMake target's definitions (its joint variant has more types than Boost's default)
             "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
             "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS"]
KINDS = ("Pinocchio C++ loop", "dynamics_cy compiled loop", "Pinocchio from Python", "dynamics_cy from Python")


def digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
    return h.hexdigest()[:16]


def compiler() -> str | None:
    """The C++ compiler's path: $CXX or g++ (None when not found)."""
    return shutil.which(os.environ.get("CXX", "g++"))


def build_pinocchio_loop() -> ctypes.CDLL:
    """The library compiled/pinocchio_crba.cpp, built (once) from Pinocchio's installed headers and loaded;
    PeerSkipped saying why it cannot be."""
    cxx = compiler()
    if cxx is None:
        raise PeerSkipped(f"not measured: no C++ compiler ({os.environ.get('CXX', 'g++')} not found)")
    include, lib = PREFIX / "include", PREFIX / "lib"
    for header, needs in (("pinocchio/algorithm/crba.hpp", "Pinocchio's headers (pip install pin)"),
                          ("eigen3/Eigen/Core", "Eigen's headers (pip install cmeel-eigen)"),
                          ("boost/serialization/vector.hpp", "Boost's headers (pip install cmeel-boost)")):
        if not (include / header).is_file():
            raise PeerSkipped(f"not measured: {needs} not in {include}")
    source = HERE / "compiled" / "pinocchio_crba.cpp"
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    key = digest(source.read_bytes(), cxx, version, CXX_FLAGS, record.version("pin"))
    path = BUILD / f"pinocchio_crba-{key}.so"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"compiling {source.name} with {Path(cxx).name} (once, a few minutes) ...", file=sys.stderr, flush=True)
        done = subprocess.run([cxx, *CXX_FLAGS, "-shared", "-fPIC", "-fvisibility=hidden", f"-I{include}",
                               f"-I{include / 'eigen3'}", str(source), "-o", f"{path}.tmp", f"-L{lib}",
                               f"-Wl,-rpath,{lib}", "-lboost_serialization"], capture_output=True, text=True)
        if done.returncode:
            error = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:200])
            raise PeerSkipped(f"not measured: {Path(cxx).name} failed on {source.name}: {error}")
        os.replace(f"{path}.tmp", path)
    so = ctypes.CDLL(str(path))
    so.pin_crba_load.restype, so.pin_crba_batch.restype = ctypes.c_void_p, ctypes.c_double
    so.pin_crba_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    so.pin_crba_batch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    so.pin_crba_matrix.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    so.pin_crba_nv.argtypes = so.pin_crba_free.argtypes = [ctypes.c_void_p]
    return so


class PinocchioLoop:
    """Pinocchio's crba in the C++ loop on one model (saved from Pinocchio's Python model)."""

    def __init__(self, so: ctypes.CDLL, model):
        self.so, self.nv = so, model.nv
        path = BUILD / f"model-{os.getpid()}.txt"
        model.saveToText(str(path))
        error = ctypes.create_string_buffer(400)
        try:
            self.handle = so.pin_crba_load(str(path).encode(), error, len(error))
        finally:
            path.unlink()
        if not self.handle:
            raise RuntimeError(f"Pinocchio's C++ cannot load the saved model: {error.value.decode()}")

    def __del__(self):
        if getattr(self, "handle", None):
            self.so.pin_crba_free(self.handle)

    def batch_us(self, q0: np.ndarray, q1: np.ndarray, calls: int) -> float:
        return self.so.pin_crba_batch(self.handle, q0.ctypes.data, q1.ctypes.data, calls) / 1e3

    def matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q), its lower triangle filled from the upper one that Pinocchio computes."""
        M = np.zeros((self.nv, self.nv))
        self.so.pin_crba_matrix(self.handle, q.ctypes.data, M.ctypes.data)
        return M + np.triu(M, 1).T


def build_our_loop():
    """The module compiled/crba_loop.pyx, built (once) against the dynamics_cy imported; PeerSkipped saying
    why it cannot be."""
    try:
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
    except ImportError as e:
        raise PeerSkipped(f"not measured: cannot build the loop ({e})") from None
    source = HERE / "compiled" / "crba_loop.pyx"
    package = Path(dc.__file__).resolve().parent
    pxds = [(package / name).read_bytes() for name in ("_crba.pxd", "_model.pxd")]
    key = digest(source.read_bytes(), *pxds, record.version("Cython", "cython"), platform.python_version())
    out = BUILD / f"crba_loop-{key}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if not (out / f"crba_loop{suffix}").is_file():
        print(f"compiling {source.name} ...", file=sys.stderr, flush=True)
        try:
            ext = cythonize([Extension("crba_loop", [str(source)], extra_compile_args=["-O3", "-fno-math-errno"])],
                            include_path=[str(package.parent)], build_dir=str(out / "c"), quiet=True)
            dist = Distribution({"ext_modules": ext, "script_args": ["-q"]})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib, cmd.build_temp = str(out), str(out / "tmp")
            dist.run_command("build_ext")
        except Exception as e:                 # a compiler's or Cython's error, whatever its class
            raise PeerSkipped(f"not measured: cannot build {source.name}: {e}") from None
    spec = importlib.util.spec_from_file_location("crba_loop", out / f"crba_loop{suffix}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pinocchio_states(m: Model, model) -> list[np.ndarray]:
    """m's two states (dynamics_cy's q: a free body's [qw qx qy qz x y z] first) in Pinocchio's layout (a
    free flyer's [x y z qx qy qz qw], an unbounded revolute's [cos θ, sin θ]), joint by joint by name."""
    out = []
    for q, *_ in m.states:
        qp = np.zeros(model.nq)
        for i in range(1, model.njoints):
            j, k = model.joints[i], model.joints[i].idx_q
            if j.shortname() == "JointModelFreeFlyer":
                qp[k:k + 7] = np.r_[q[4:7], q[1:4], q[0]]
            elif j.nq == j.nv == 1:
                qp[k] = q[m.plant.GetJointByName(model.names[i]).position_start()]
            elif j.nq == 2 and j.nv == 1:
                th = q[m.plant.GetJointByName(model.names[i]).position_start()]
                qp[k:k + 2] = np.cos(th), np.sin(th)
            else:
                raise PeerSkipped(f"not measured: joint {model.names[i]} ({j.shortname()}) has no mapping here")
        out.append(qp)
    return out


def joint_blocks(m: Model, model) -> tuple[list[int], list[int]]:
    """The velocity indices of the 1-dof joints in dynamics_cy's and in Pinocchio's v, in one order: their
    block of M is the same in both (a floating base's coordinates differ)."""
    ours, theirs = [], []
    for i in range(1, model.njoints):
        if model.joints[i].nv == 1:
            ours.append(m.plant.GetJointByName(model.names[i]).velocity_start())
            theirs.append(model.joints[i].idx_v)
    return ours, theirs


def check_same(what: str, M_ours: np.ndarray, M_pin: np.ndarray, blocks) -> None:
    """Both M at the same state agree on the joints' block (else the two did not time the same thing)."""
    ours, theirs = (np.ix_(b, b) for b in blocks)
    A, B = M_ours[ours], M_pin[theirs]
    if not np.allclose(A, B, rtol=1e-9, atol=1e-9 * np.abs(B).max()):
        raise RuntimeError(f"{what}: dynamics_cy's and Pinocchio's M differ by {np.abs(A - B).max():.3g}")


class Robot:
    """One robot's four implementations to time (KINDS), each a callable timing one batch (µs per call),
    None where it is not measured (the reason in `skipped`)."""

    def __init__(self, m: Model, args, so, loop, skipped: dict):
        self.m, self.skipped, self.ops = m, dict(skipped), dict.fromkeys(KINDS)
        k = m.plant.kernels()
        M = np.zeros((m.nv, m.nv))
        qs = [s[0] for s in m.states]
        self.ops[KINDS[3]] = alternating(lambda q: k.mass_matrix(q, M), qs, args.py_calls)
        if loop is not None:
            self.ops[KINDS[1]] = lambda: loop.batch(k.model, k.data, qs[0], qs[1], M, args.calls) / 1e3
        try:
            pin, model = bench_dynamics.load_pinocchio(m)
            pqs = pinocchio_states(m, model)
        except PeerSkipped as e:
            reason = str(e).removeprefix("Pinocchio: ")
            self.skipped.update({KINDS[0]: reason, KINDS[2]: reason})
            return
        blocks = joint_blocks(m, model)
        data = model.createData()
        k.mass_matrix(qs[0], M)
        Mp = pin.crba(model, data, pqs[0])
        check_same(m.label + ", from Python", M, np.triu(Mp) + np.triu(Mp, 1).T, blocks)
        self.ops[KINDS[2]] = alternating(lambda q: pin.crba(model, data, q), pqs, args.py_calls)
        if so is not None:
            self.cpp = PinocchioLoop(so, model)
            check_same(m.label + ", Pinocchio's C++", M, self.cpp.matrix(pqs[0]), blocks)
            self.ops[KINDS[0]] = lambda: self.cpp.batch_us(pqs[0], pqs[1], args.calls)

    def round(self, batches: int) -> dict:
        """One round: a batch of each implementation in turn, `batches` times (the order rotating), after
        one of warm-up, so that all four see the same moments of the machine. {kind: median µs per call,
        kind + " ratio": the median of dynamics_cy's time over Pinocchio's of the same kind, batch by batch}."""
        ops = [(kind, op) for kind, op in self.ops.items() if op is not None]
        times = {kind: [] for kind, _ in ops}
        for i in range(batches + 1):
            for kind, op in ops[i % len(ops):] + ops[:i % len(ops)]:
                times[kind].append(op())
        out = {kind: float(np.median(t[1:])) for kind, t in times.items()}
        for peer, ours in ((KINDS[0], KINDS[1]), (KINDS[2], KINDS[3])):
            if peer in times and ours in times:
                out[ours + " ratio"] = float(np.median(np.array(times[ours][1:]) / np.array(times[peer][1:])))
        return out


def alternating(fn, states, calls: int):
    """A callable timing one batch of `calls` calls of fn(q), q alternating between the two states: µs per
    call in the thread's CPU time, as the compiled loops measure."""
    def batch():
        t0 = time.thread_time_ns()
        for i in range(calls):
            fn(states[i & 1])
        return (time.thread_time_ns() - t0) / calls / 1e3
    return batch


def table(rec: record.Record, robots: list[Robot], rounds: dict) -> record.Table:
    columns = [record.Column("robot", "{robot}", align="left"),
               record.Column("implementation", "{name}", align="left"),
               record.Column("µs per call: median [min–max]", "{us:.3f} [{lo:.3f}–{hi:.3f}]", "{why}"),
               record.Column("ratio to Pinocchio: median [min–max]", "{ratio:.2f}× [{rlo:.2f}–{rhi:.2f}]")]
    t = rec.table("The mass matrix: µs per call, median over the rounds [min–max]; dynamics_cy's time over "
                  "Pinocchio's of the same kind, batch by batch", columns)
    for robot in robots:
        name = f"{robot.m.label.split(' (')[0].split(',')[0]} (nv = {robot.m.nv})"
        measured = rounds[robot.m.label]
        for kind in KINDS:
            row = {"robot": name, "name": kind}
            if kind not in measured:
                t.add(**row, why=robot.skipped.get(kind, "not measured"))
                continue
            x = np.array(measured[kind])
            row.update(us=np.median(x), lo=x.min(), hi=x.max())
            if kind + " ratio" in measured:
                r = np.array(measured[kind + " ratio"])
                row.update(ratio=np.median(r), rlo=r.min(), rhi=r.max())
            t.add(**row)
    return t


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--rounds", type=int, default=7, help="rounds over every robot (their median is reported)")
    ap.add_argument("--batches", type=int, default=11, help="batches of each implementation per round, in turn")
    ap.add_argument("--calls", type=int, default=20000, help="calls per batch of the compiled loops")
    ap.add_argument("--py-calls", type=int, default=2000, help="calls per batch from Python")
    ap.add_argument("--only", default="", help="measure only the models whose label contains this text")
    args = ap.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Mass matrix against Pinocchio's C++",
                        peers=("pinocchio", "example-robot-data"))
    specs = bench_dynamics.model_specs(ap, args.only)
    skipped = {}
    so = loop = None
    try:
        so = build_pinocchio_loop()
        rec.set_peer(Path(compiler()).name, subprocess.run([compiler(), "-dumpfullversion"], capture_output=True,
                                                           text=True).stdout.strip() or None)
    except PeerSkipped as e:
        skipped[KINDS[0]] = str(e)
    try:
        loop = build_our_loop()
    except PeerSkipped as e:
        skipped[KINDS[1]] = str(e)
    robots = [Robot(Model(label, path, weld), args, so, loop, skipped) for label, path, weld in specs]
    rounds = {robot.m.label: {} for robot in robots}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for robot in robots:
            for key, value in robot.round(args.batches).items():
                rounds[robot.m.label].setdefault(key, []).append(value)
    rec.data["rounds_us"] = rounds
    rec.show(table(rec, robots, rounds))
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
