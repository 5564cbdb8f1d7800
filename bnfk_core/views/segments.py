"""What the Segments lab and the report's segment comparison both show, written once: the base network a
segment is added to, and the sentence naming the arcs it added."""

from __future__ import annotations

from bnfk_core.network.dag import DAG, apply_segment

__all__ = ["added_arcs", "segment_networks"]


def segment_networks(
    base_setting: str, variables, current: DAG, kind: str, segment_variables
) -> tuple[DAG, DAG]:
    """``(base, base + segment)``: the base is the current structure when ``base_setting`` is ``"current"``,
    else the empty network over ``variables``; the segment ``kind`` on ``segment_variables`` is added to it.

    Parameters
    ----------
    base_setting : str
    variables : sequence of str
    current : DAG
    kind : str
    segment_variables : sequence of str

    Returns
    -------
    base, with_segment : DAG
    """
    base = current if base_setting == "current" else DAG(list(variables))
    return base, apply_segment(base, kind, list(segment_variables))


def added_arcs(base: DAG, with_segment: DAG) -> str:
    """The arcs the segment added, as ``u → v, …`` (or that none was needed).

    Parameters
    ----------
    base, with_segment : DAG

    Returns
    -------
    str
    """
    return (
        ", ".join(f"{u} → {v}" for u, v in sorted(with_segment.arcs - base.arcs))
        or "nothing — already present"
    )
