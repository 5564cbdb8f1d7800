"""Subcommand ``dsep``: are X and Y d-separated given Z in a network's graph, and the active trails when they
are not (:func:`bnfk_core.network.dsep.d_separated`)."""

from __future__ import annotations

from .common import MODEL_HELP, read_network, split_list

__all__ = ["register"]


def _cmd_dsep(args) -> dict:
    from ..network.dsep import d_separated

    xs, ys, given = split_list(args.x), split_list(args.y), split_list(args.given)
    dag = read_network(args.model).dag
    separated, trails = d_separated(dag, xs, ys, given)
    return {"x": xs, "y": ys, "given": given, "separated": separated, "active_trails": trails}


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {"dsep": "whether X and Y are d-separated given Z in a network, with the active trails"}


def register(sub) -> None:
    p = sub.add_parser("dsep", help=SUBCOMMANDS["dsep"])
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("x", metavar="X", help="a node, or several as 'A,B'")
    p.add_argument("y", metavar="Y", help="a node, or several as 'C,D'")
    p.add_argument("--given", default="", metavar="Z,...", help="the conditioning nodes (default none)")
    p.set_defaults(func=_cmd_dsep)
