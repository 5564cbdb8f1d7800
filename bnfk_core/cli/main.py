"""The command line: ``python -m bnfk_core SUBCOMMAND ...``.

Every subcommand prints one JSON object on stdout (or writes ``-o FILE``); progress and
warnings go to stderr.  Every error is one line ``error: ...`` on stderr with exit code 2,
never a traceback -- including a failure to write the result itself (a full disk, a closed
pipe).  The subcommands live one module per topic, each with a ``register(subparsers)``;
:data:`COMMANDS` lists them explicitly.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import warnings

from ..errors import BnfkError
from ..kernels import DEFAULT_MAX_BYTES, memory_limit_set
from . import cluster, impute, kernel, kgv, landscape, learn, prototypes, report, reproduce, segments
from .common import CliParser, _end_progress_line, cli_wording, emit, use_session_model

__all__ = ["main", "build_parser", "COMMANDS"]

#: the subcommand modules, in ``--help`` order
COMMANDS = (learn, kernel, cluster, impute, prototypes, segments, landscape, report, reproduce, kgv)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (built per call, so options registered since are offered)."""
    parser = CliParser(prog="python -m bnfk_core",
                       description="Categorical data, Bayesian networks and their Fisher kernel.")
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=CliParser)
    sub.required = True
    for module in COMMANDS:
        module.register(sub)
    return parser


def _fail(message: str) -> int:
    _end_progress_line()
    try:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
    except OSError:  # stderr itself is gone: nothing more to say
        pass
    return 2


def _park_stdout() -> None:
    """Point a failed stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None) -> int:
    """Run one subcommand; returns the exit code (0 success, 2 any error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error already reported on one line (2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        limit = getattr(args, "max_memory", None)
        with warnings.catch_warnings(), memory_limit_set(None if limit == math.inf else limit or DEFAULT_MAX_BYTES):
            warnings.simplefilter("ignore", FutureWarning)
            use_session_model(args, sys.argv[1:] if argv is None else list(argv))
            result = args.func(args)
            if result is not None:
                emit(result)
    except BnfkError as exc:
        return _fail(cli_wording(str(exc)))
    except MemoryError:
        return _fail("out of memory; sample fewer rows.")
    except OSError as exc:
        _park_stdout()
        where = getattr(exc, "filename", None)
        what = exc.strerror or str(exc) or type(exc).__name__
        return _fail(f"{what} ({where})." if where else f"could not write the result: {what}.")
    except KeyboardInterrupt:
        return _fail("interrupted.")
    except Exception as exc:  # a bug: still one line, never a traceback
        return _fail(f"internal error ({type(exc).__name__}: {exc}); please report it.")
    return 0
