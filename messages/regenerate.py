"""Regenerate the committed Python code of the .lcm sources with lcm-gen.

    python -m messages.regenerate          # rewrite messages/drake/ and messages/hilmsg/
    python -m messages.regenerate --check  # exit 1 and list the files that are stale

The sources are messages/*.lcm; their LCM packages are `drake` (Drake's types)
and `hilmsg` (this project's). lcm-gen runs with `--package-prefix messages`,
so the code lands in the Python packages messages.drake and messages.hilmsg
and its cross-type imports (`import messages.drake`) resolve in an installed
tree. lcm-gen's __init__.py files re-export each class, as Drake's do.
"""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from messages.lcm_tools import lcm_tool

PACKAGE_DIR = Path(__file__).resolve().parent
GENERATED_PACKAGES = ("drake", "hilmsg")
# lcm-gen stamps its version into each __init__.py; the comparison ignores it.
_VERSION_LINE = re.compile(r"^lcm-gen \S+$", re.MULTILINE)


def lcm_sources():
    """The .lcm files, sorted (lcm-gen writes __init__.py imports in input order)."""
    return sorted(PACKAGE_DIR.glob("*.lcm"))


def generate():
    """Run lcm-gen into a temporary directory; {path relative to messages/: text}."""
    lcm_gen = lcm_tool("lcm-gen")
    if lcm_gen is None:
        raise FileNotFoundError("lcm-gen not found (install the `lcm` wheel)")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [lcm_gen, "--python", "--package-prefix", "messages", "--ppath", tmp,
             *map(str, lcm_sources())],
            check=True, capture_output=True, text=True)
        root = Path(tmp) / "messages"
        return {str(path.relative_to(root)): path.read_text()
                for package in GENERATED_PACKAGES
                for path in sorted((root / package).glob("*.py"))}


def committed():
    """The committed generated files; {path relative to messages/: text}."""
    return {str(path.relative_to(PACKAGE_DIR)): path.read_text()
            for package in GENERATED_PACKAGES
            for path in sorted((PACKAGE_DIR / package).glob("*.py"))}


def stale_files():
    """Generated files that are missing, extra or different in the checkout."""
    fresh, current = generate(), committed()
    return sorted(
        name for name in fresh.keys() | current.keys()
        if _VERSION_LINE.sub("", fresh.get(name, "\0")) != _VERSION_LINE.sub("", current.get(name, "\1")))


def write():
    """Replace messages/drake/ and messages/hilmsg/ with fresh lcm-gen output."""
    fresh = generate()
    for package in GENERATED_PACKAGES:
        shutil.rmtree(PACKAGE_DIR / package, ignore_errors=True)
        (PACKAGE_DIR / package).mkdir()
    for name, text in fresh.items():
        (PACKAGE_DIR / name).write_text(text)
    return sorted(fresh)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for name in stale:
            print(f"stale: messages/{name}")
        return 1 if stale else 0
    for name in write():
        print(f"wrote messages/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
