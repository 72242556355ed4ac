"""The versions of the libraries pinned in ``benchmarks/constraints.txt``, as installed here.

    python benchmarks/library_versions.py [--check]

Prints ``{"package": "version", ...}`` (JSON). With ``--check`` it also writes one line to stderr for each
package installed at another version than the constraints name: figures measured then are not comparable
with those of ``docs/benchmarks.md`` (the renderer's pixels depend on OpenCV's version).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

CONSTRAINTS = Path(__file__).with_name("constraints.txt")


def pinned(path: Path = CONSTRAINTS) -> dict[str, str]:
    """The ``package==version`` lines of a constraints file, by package."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, wanted = line.split("==", 1)
            pins[name.strip()] = wanted.strip()
    return pins


def installed(packages: list[str]) -> dict[str, str | None]:
    """Each package's installed version, None where it is not installed."""
    found = {}
    for name in packages:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="warn on stderr where a version differs")
    args = parser.parse_args(argv)
    pins = pinned()
    found = installed(list(pins))
    print(json.dumps(found, indent=1))
    if args.check:
        for name, wanted in pins.items():
            if found[name] != wanted:
                print(f"warning: {name} {found[name]} is installed, the figures of docs/benchmarks.md were measured "
                      f"with {wanted} (pip install -c benchmarks/constraints.txt)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
