"""The mass matrix against Pinocchio's C++: Pinocchio's crba compiled at benchmark time from its
installed headers and timed in a C++ loop, next to dynamics_cy's kernel timed in a compiled loop (no
Python per call), and both called from Python, on the same two alternating states of the same robots.
Prints one table: median µs per call [min–max over the rounds], and the ratio to Pinocchio of the same
kind.

    python benchmarks/bench_mass_matrix.py [--rounds 7] [--batches 11] [--calls 20000] [--only G1] [--json PATH]

The compiled programs are built once into build/bench_mass_matrix/ (kept while their sources, the
compiler and the versions stay the same); Pinocchio's takes a few minutes to compile. $CXX names the
C++ compiler (default g++).
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import bench_dynamics
import numpy as np
import record
import timing
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


def build_pinocchio_loop() -> Path:
    """The C++ program compiled/pinocchio_crba.cpp, built (once) from Pinocchio's installed headers;
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
    exe = BUILD / f"pinocchio_crba-{digest(source.read_bytes(), cxx, version, CXX_FLAGS, record.version('pin'))}"
    if exe.is_file():
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    print(f"compiling {source.name} with {Path(cxx).name} (once, a few minutes) ...", file=sys.stderr, flush=True)
    done = subprocess.run([cxx, *CXX_FLAGS, f"-I{include}", f"-I{include / 'eigen3'}", str(source), "-o",
                           str(exe) + ".tmp", f"-L{lib}", f"-Wl,-rpath,{lib}", "-lboost_serialization"],
                          capture_output=True, text=True)
    if done.returncode:
        error = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:200])
        raise PeerSkipped(f"not measured: {Path(cxx).name} failed on {source.name}: {error}")
    os.replace(str(exe) + ".tmp", exe)
    return exe


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


def run_pinocchio_loop(exe: Path, model_file: Path, qs, calls: int, batches: int) -> tuple[list, np.ndarray]:
    """(ns per call of each batch, M at qs[0] with its lower triangle filled) from the C++ program."""
    text = f"{len(qs[0])}\n" + "\n".join(" ".join(repr(float(x)) for x in q) for q in qs) + "\n"
    done = subprocess.run([str(exe), str(model_file), str(calls), str(batches)], input=text, capture_output=True,
                          text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{exe.name}: {done.stderr.strip()}")
    lines = done.stdout.split("\n")
    nv = int(lines[0].split()[1])
    times = [float(line.split()[1]) for line in lines[1:1 + batches]]
    upper = np.array(lines[2 + batches:2 + batches + nv * (nv + 1) // 2], dtype=float)
    M = np.zeros((nv, nv))
    M[np.triu_indices(nv)] = upper
    return times, M + np.triu(M, 1).T


class Bench:
    """The four measurements of one model, each a callable returning one round's median µs per call."""

    def __init__(self, m: Model, args, exe, loop, skipped: dict):
        self.m, self.skipped, self.ops = m, dict(skipped), {}
        k = m.plant.kernels()
        M = np.zeros((m.nv, m.nv))
        qs = [s[0] for s in m.states]
        i = [0]

        def alternate(states):
            def next_state():
                i[0] ^= 1
                return states[i[0]]
            return next_state

        st = alternate(qs)
        self.ops[KINDS[3]] = lambda: timing.median_us(lambda: k.mass_matrix(st(), M), args.py_calls, args.batches,
                                                      warmup=args.py_calls // 10)
        if loop is not None:
            self.ops[KINDS[1]] = lambda: float(np.median(loop.batches(k.model, k.data, qs[0], qs[1], M, args.calls,
                                                                      args.batches))) / 1e3
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
        pst = alternate(pqs)
        self.ops[KINDS[2]] = lambda: timing.median_us(lambda: pin.crba(model, data, pst()), args.py_calls,
                                                      args.batches, warmup=args.py_calls // 10)
        if exe is None:
            return
        model_file = BUILD / f"model-{digest(m.path)}.txt"
        model.saveToText(str(model_file))
        _, M_cpp = run_pinocchio_loop(exe, model_file, pqs, 10, 1)
        check_same(m.label + ", Pinocchio's C++", M, M_cpp, blocks)

        def cpp():
            return float(np.median(run_pinocchio_loop(exe, model_file, pqs, args.calls, args.batches)[0])) / 1e3
        self.ops[KINDS[0]] = cpp


def table(rec: record.Record, benches: list[Bench], rounds: dict) -> record.Table:
    columns = [record.Column("robot", "{robot}", align="left"),
               record.Column("implementation", "{name}", align="left"),
               record.Column("µs per call: median [min–max]", "{us:.3f} [{lo:.3f}–{hi:.3f}]", "{why}"),
               record.Column("ratio to Pinocchio: median [min–max]", "{ratio:.2f}× [{rlo:.2f}–{rhi:.2f}]")]
    t = rec.table("Mass matrix: median µs per call over the rounds [min–max]; ratio of dynamics_cy's to Pinocchio's "
                  "of the same kind, round by round", columns)
    for b in benches:
        robot = f"{b.m.label.split(' (')[0].split(',')[0]} (nv = {b.m.nv})"
        for kind in KINDS:
            row = {"robot": robot, "name": kind}
            if kind in b.skipped or kind not in rounds[b.m.label]:
                t.add(**row, why=b.skipped.get(kind, "not measured"))
                continue
            x = np.array(rounds[b.m.label][kind])
            row.update(us=np.median(x), lo=x.min(), hi=x.max())
            peer = {KINDS[1]: KINDS[0], KINDS[3]: KINDS[2]}.get(kind)
            if peer in rounds[b.m.label]:
                r = x / np.array(rounds[b.m.label][peer])
                row.update(ratio=np.median(r), rlo=r.min(), rhi=r.max())
            t.add(**row)
    return t


def main(argv=None) -> int:
    ap = record.parser(__file__, __doc__)
    ap.add_argument("--rounds", type=int, default=7, help="rounds, each measuring every implementation in turn")
    ap.add_argument("--batches", type=int, default=11, help="batches per round (their median is the round's)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per batch of the compiled loops")
    ap.add_argument("--py-calls", type=int, default=2000, help="calls per batch from Python")
    ap.add_argument("--only", default="", help="measure only the models whose label contains this text")
    args = ap.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Mass matrix against Pinocchio's C++",
                        peers=("pinocchio", "example-robot-data"))
    specs = bench_dynamics.model_specs(ap, args.only)
    skipped = {}
    exe = loop = None
    try:
        exe = build_pinocchio_loop()
        rec.set_peer(Path(compiler()).name, subprocess.run([compiler(), "-dumpfullversion"], capture_output=True,
                                                           text=True).stdout.strip() or None)
    except PeerSkipped as e:
        skipped[KINDS[0]] = str(e)
    try:
        loop = build_our_loop()
    except PeerSkipped as e:
        skipped[KINDS[1]] = str(e)
    benches = [Bench(Model(label, path, weld), args, exe, loop, skipped) for label, path, weld in specs]
    rounds = {b.m.label: {kind: [] for kind in b.ops} for b in benches}
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for b in benches:
            for kind, op in b.ops.items():
                rounds[b.m.label][kind].append(op())
    rec.data["rounds_us"] = rounds
    rec.show(table(rec, benches, rounds))
    rec.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
