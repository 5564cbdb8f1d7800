"""The command line: ``python -m bnfk_core SUBCOMMAND ...``.

Every subcommand prints one JSON object on stdout or, given ``-o FILE`` (every subcommand has it), writes
its result there and names the file on stdout; progress and warnings go to stderr.  Every error is one line
``error: ...`` on stderr with exit code 2, never a traceback -- including a failure to write the result
itself (a full disk, a closed pipe).  The subcommands live one module per topic, each with a
``register(subparsers)``; :data:`COMMANDS` lists them explicitly.

Starting fast: a module's top-level imports stay light (errors, registry, ``.common``, numpy) and it names its
subcommands with their one-line help in ``SUBCOMMANDS``; what a subcommand runs is imported inside its
function (and constants its options need inside ``register``).  :func:`main` then fully registers only the
module of the subcommand asked for; the others appear in ``--help`` by name.  A module without
``SUBCOMMANDS`` is always registered in full (correct, only slower to start).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings

from ..data.limits import DEFAULT_MAX_BYTES, feature_limit_set, memory_limit_set
from ..errors import BnfkError, bounded
from . import (
    cluster,
    dsep,
    impute,
    kernel,
    kgv,
    landscape,
    lca,
    learn,
    options,
    prototypes,
    query,
    report,
    reproduce,
    sample,
    segments,
    similar,
    warmup,
)
from .common import (
    CliParser,
    add_max_feature_memory,
    add_max_memory,
    add_result_output,
    check_result_output,
    cli_wording,
    deliver,
    end_progress_line,
    use_session_model,
    warning_line,
)

__all__ = ["main", "build_parser", "COMMANDS"]

#: the subcommand modules, in ``--help`` order
COMMANDS = (
    learn,
    kernel,
    cluster,
    lca,
    impute,
    prototypes,
    segments,
    landscape,
    report,
    reproduce,
    kgv,
    query,
    dsep,
    sample,
    similar,
    options,
    warmup,
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser (built per call, so options registered since are offered).

    ``command``: register in full only the module of that subcommand (the others by name and help line,
    see the module docstring); None registers every module in full."""
    parser = CliParser(
        prog="python -m bnfk_core", description="Categorical data, Bayesian networks and their Fisher kernel."
    )
    sub = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=CliParser)
    sub.required = True
    light = command is not None
    for module in COMMANDS:
        names = getattr(module, "SUBCOMMANDS", None)
        if not light or names is None or command in names:
            module.register(sub)
        else:
            for name, help_line in names.items():
                sub.add_parser(name, help=help_line)
    for p in sub.choices.values():
        try:  # every subcommand obeys a memory limit (its guards name --max-memory)
            add_max_memory(p)
        except argparse.ArgumentError:  # it has one already
            pass
        add_max_feature_memory(p)  # every subcommand: the Fisher feature map's own budget
        try:  # every subcommand writes -o FILE: its JSON result unless it writes a file of its own
            add_result_output(p)
        except argparse.ArgumentError:  # it has one already
            pass
    return parser


def _command(argv: list) -> str:
    """The subcommand named in ``argv`` (its first word that is not an option), or '' when none is."""
    return next((a for a in argv if not a.startswith("-")), "")


def _fail(message: str) -> int:
    """The one ``error: ...`` line (echoed values cut: :func:`bnfk_core.errors.bounded`) and exit code 2."""
    end_progress_line()
    try:
        sys.stderr.write(f"error: {bounded(' '.join(str(message).splitlines()))}\n")
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
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error already reported on one line (2)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        from ..data.dask_runner import check_address, timeout_set  # (imports pandas: not needed for --help)

        limit = getattr(args, "max_memory", None)
        with (
            warnings.catch_warnings(),
            memory_limit_set(None if limit == math.inf else limit or DEFAULT_MAX_BYTES),
            feature_limit_set(getattr(args, "max_feature_memory", None)),
            timeout_set(getattr(args, "dask_timeout", None)),
        ):
            warnings.simplefilter("ignore", FutureWarning)
            warnings.showwarning = warning_line
            if getattr(args, "scheduler", None) is not None:
                check_address(args.scheduler)  # a malformed address is refused before any file is read
            use_session_model(args, argv)
            check_result_output(args)
            result = args.func(args)
            end_progress_line()  # a half-drawn bar ends here, not in the next call's first line
            if result is not None:
                deliver(result, args)
    except BnfkError as exc:
        return _fail(cli_wording(str(exc)))
    except MemoryError:
        return _fail("out of memory; drop columns or sample fewer rows, or raise --max-memory.")
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
