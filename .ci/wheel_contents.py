"""Checks a built wheel's file list: only the four import names (and the dist-info) at the top, no
tests, no generated C, every Cython source compiled, the shipped configs and the pytest plugin's
entry point present. Exit 1 naming what is wrong.

    python .ci/wheel_contents.py dist/hilstack-*.whl
"""
import sys
import zipfile
from pathlib import PurePosixPath

PACKAGES = {"drivers", "dynamics_cy", "hil", "messages"}


def problems(wheel: str) -> list[str]:
    names = zipfile.ZipFile(wheel).namelist()
    paths = [PurePosixPath(n) for n in names]
    wrong = []
    top = {p.parts[0] for p in paths if not p.parts[0].endswith(".dist-info")}
    if top != PACKAGES:
        wrong.append(f"top-level names {sorted(top)}, expected {sorted(PACKAGES)}")
    wrong += [f"a test in the wheel: {p}" for p in paths if "tests" in p.parts or p.name.startswith("test_")]
    wrong += [f"generated C in the wheel: {p}" for p in paths if p.suffix == ".c"]
    compiled = {str(p).split(".")[0] for p in paths if p.suffix == ".so"}
    wrong += [f"{p} has no compiled module" for p in paths
              if p.suffix == ".pyx" and str(p.with_suffix("")) not in compiled]
    if not any(str(p) == "drivers/configs/demo.yaml" for p in paths):
        wrong.append("the shipped configs (drivers/configs) are missing")
    if not any(str(p).startswith("drivers/configs/scenarios/golden/") and p.suffix == ".json" for p in paths):
        wrong.append("the golden outcomes (drivers/configs/scenarios/golden/*.json) are missing")
    entry = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    if not entry or "hil.pytest_plugin" not in zipfile.ZipFile(wheel).read(entry[0]).decode():
        wrong.append("the pytest11 entry point hil.pytest_plugin is missing")
    return wrong


if __name__ == "__main__":
    found = problems(sys.argv[1])
    for line in found:
        print(f"wheel: {line}", file=sys.stderr)
    if not found:
        print(f"{sys.argv[1]}: {len(zipfile.ZipFile(sys.argv[1]).namelist())} files, the four packages, "
              "compiled, configs and goldens included")
    sys.exit(1 if found else 0)
