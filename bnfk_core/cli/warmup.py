"""Subcommand ``warmup``: compile every numba kernel once into numba's on-disk cache, so that the first
latent class fit, Gram matrix or clustering of a later process loads it instead of compiling it
(``run-app.sh`` and ``run-tests.sh`` run it after installing)."""

from __future__ import annotations

from .common import split_list

__all__ = ["register", "SUBCOMMANDS"]

#: the subcommand and its help line (registered by name without importing what it runs)
SUBCOMMANDS = {"warmup": "compile every numba kernel once into numba's on-disk cache (run after installing)"}

#: the groups of kernels, in the order they run (:data:`bnfk_core.analyses.warmup.GROUPS`)
GROUP_NAMES = ("learn", "lca", "fisher", "similarity", "correlation", "prototypes", "kmeans", "files")


def _groups(text: str) -> list[str]:
    import argparse

    names = split_list(text)
    unknown = [n for n in names if n not in GROUP_NAMES]
    if unknown or not names:
        what = f"unknown group {unknown[0]!r}" if unknown else "no group named"
        raise argparse.ArgumentTypeError(f"{what}; choose among {', '.join(GROUP_NAMES)}")
    return names


def _cmd_warmup(args) -> dict:
    from ..analyses.warmup import warm_up

    return warm_up(args.only)


def register(sub) -> None:
    """Add ``warmup`` to the subparsers ``sub``."""
    p = sub.add_parser("warmup", help=SUBCOMMANDS["warmup"], description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--only",
        type=_groups,
        default=None,
        metavar="GROUP[,GROUP]",
        help=f"compile only these groups of kernels (default: all: {', '.join(GROUP_NAMES)})",
    )
    p.set_defaults(func=_cmd_warmup)
