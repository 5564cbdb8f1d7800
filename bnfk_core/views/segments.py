"""What the Segments lab and the report's segment comparison both show, written once: the segments to choose
from, the base network a segment is added to, and the sentence naming the arcs it added."""

from __future__ import annotations

from bnfk_core.network.dag import DAG, SEGMENT_KINDS, SEGMENT_LABELS, SEGMENT_PATTERNS, apply_segment

__all__ = ["added_arcs", "segment_choices", "segment_networks"]


def segment_choices() -> dict[str, str]:
    """The segments to choose from, each with its pattern.

    Returns
    -------
    dict
        kind -> label: the segment's name and its pattern over u, v, w (``"V-structure  u → w ← v"``); the
        full segment, whose size is chosen apart, says it becomes one collapsed variable.
    """
    return {
        k: f"{SEGMENT_LABELS[k]}  {SEGMENT_PATTERNS[k] if k != 'full' else '(one collapsed variable)'}"
        for k in SEGMENT_KINDS
    }


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
    """The arcs the segment added, as ``u → v, …``, then the ones it replaced (or that none was needed).

    Parameters
    ----------
    base, with_segment : DAG

    Returns
    -------
    str
    """
    added = ", ".join(f"{u} → {v}" for u, v in sorted(with_segment.arcs - base.arcs))
    gone = ", ".join(f"{u} → {v}" for u, v in sorted(base.arcs - with_segment.arcs))
    if gone:
        return f"{added or 'nothing'} (replacing {gone})"
    return added or "nothing — already present"
