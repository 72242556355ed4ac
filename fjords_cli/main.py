"""Entry point of the ``fjords`` command.

Each package contributes its subcommands through a ``register(subparsers)``
function; this module only assembles them and turns errors into one line on
stderr and an exit code, never a traceback (set ``FJORDS_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn, Sequence

from fjords.errors import FjordsError

# Modules whose register() adds subcommands; optional ones may be missing their extras.
COMMAND_MODULES = ("fjords.cli", "renderer.cli", "scanner.cli", "scanner.calibrate", "fjords_cli.eval_command")

EPILOG = """exit codes: 0 success (check: legal), 1 check: rule violations,
2 unreadable input, 3 no board found in a photo, 4 photo must be retaken"""


class OneLineErrorParser(argparse.ArgumentParser):
    """An argument parser (and, through ``add_subparsers``, subparsers) whose usage errors are one
    line on stderr and exit 2, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="fjords",
        description="Read, check, score, render and scan tables of the board game Fjords.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name.split(".")[0]):
                continue  # the package itself is absent from this installation
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except FjordsError as exc:
        print(f"fjords: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("fjords: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if os.environ.get("FJORDS_DEBUG"):
            raise
        print(f"fjords: internal error: {type(exc).__name__}: {exc} (set FJORDS_DEBUG=1 for details)",
              file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
