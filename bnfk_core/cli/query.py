"""Subcommand ``query``: the posterior of every node of a network given evidence, log P(evidence) and, with
``--mpe``, the most probable explanation (exact: :mod:`bnfk_core.inference.evidence`)."""

from __future__ import annotations

from ..errors import BnfkError
from .common import MODEL_HELP, read_network, split_list

__all__ = ["register", "parse_evidence"]


def parse_evidence(text: str) -> dict[str, str]:
    """``'V=s,W=t'`` -> ``{'V': 's', 'W': 't'}``; a part without ``=`` or a variable twice is refused."""
    out: dict[str, str] = {}
    for part in split_list(text):
        name, eq, state = part.partition("=")
        name, state = name.strip(), state.strip()
        if not eq or not name or not state:
            raise BnfkError(f"--evidence '{part}' is not VARIABLE=STATE.")
        if name in out:
            raise BnfkError(f"--evidence gives '{name}' twice.")
        out[name] = state
    return out


def _cmd_query(args) -> dict:
    from ..inference.evidence import mpe, query

    evidence = parse_evidence(args.evidence)
    targets = split_list(args.target) if args.target else None
    model = read_network(args.model)
    q = query(model, evidence, targets)
    out = {"evidence": q.evidence, "posterior": q.posterior, "log_evidence": q.log_evidence}
    if args.mpe:
        e = mpe(model, evidence)
        out["mpe"] = {"assignment": e.assignment, "log_probability": e.log_probability}
    return out


#: the subcommands this module registers and their one-line help (the top-level --help lists them
#: without importing what they run)
SUBCOMMANDS = {
    "query": "posteriors of a network's nodes given evidence, P(evidence) and the most probable explanation",
}


def register(sub) -> None:
    p = sub.add_parser("query", help=SUBCOMMANDS["query"])
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument(
        "--evidence", default="", metavar="V=s,...", help="observed states, e.g. 'smoke=yes,xray=no'"
    )
    p.add_argument(
        "--target", default=None, metavar="V,...", help="the nodes whose posteriors to give (default all)"
    )
    p.add_argument("--mpe", action="store_true", help="also the most probable explanation of the other nodes")
    p.set_defaults(func=_cmd_query)
