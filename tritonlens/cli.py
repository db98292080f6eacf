"""`tritonlens` command line: each area registers its own sub-commands.

Modules are imported lazily so that `tritonlens check` works where only the analyzer's
dependencies are installed (no pygls, torch or triton).
"""

from __future__ import annotations

import argparse
import importlib
import sys

# (module, sub-commands it provides): imported only when one of its commands is asked for.
_COMMAND_MODULES: list[tuple[str, tuple[str, ...]]] = [
    ("tritonlens.analysis.cli", ("check", "rules", "rule")),
    ("tritonlens.server.cli", ("serve",)),
    ("tritonlens.profiling.cli", ("profile",)),
    ("tritonlens.profiling.compile_cli", ("compile",)),
    ("tritonlens.profiling.capture_cli", ("capture",)),
    ("tritonlens.rewrite.cli", ("optimize",)),
]


class _UsageError(SystemExit):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # exit code 2 on usage errors, as the CLI contract says
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(prog="tritonlens", description=__doc__.splitlines()[0])
    from tritonlens import __version__

    parser.add_argument("--version", action="version", version=f"tritonlens {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name, commands in _COMMAND_MODULES:
        if only is not None and only not in commands:
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if only is not None and exc.name and not exc.name.startswith("tritonlens"):
                raise SystemExit(
                    f"tritonlens {only}: needs the optional dependency {exc.name!r}; "
                    f"install it with: pip install 'tritonlens[all]'"
                ) from exc
            if only is None:
                for name in commands:
                    sub.add_parser(name, help=f"(unavailable: {exc.name} is not installed)")
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    known = {c for _, cs in _COMMAND_MODULES for c in cs}
    parser = build_parser(command if command in known else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `tritonlens check ... | head`: the reader left; that is not our error.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
