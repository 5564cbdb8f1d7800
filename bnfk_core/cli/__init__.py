"""The command line of bnfk: ``python -m bnfk_core SUBCOMMAND ...`` (see :mod:`bnfk_core.cli.main`).

One module per group of subcommands (``learn``, ``kernel``, ``cluster``, ``impute``, ``prototypes``,
``segments``, ``reproduce``), the shared options and helpers in :mod:`bnfk_core.cli.common`.
"""

from .main import build_parser, main

__all__ = ["main", "build_parser"]
