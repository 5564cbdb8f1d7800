"""One arc edit of a DAG -- add, remove or reverse the arc u -> v -- as a value: applied, undone, described.

The app's Structure and Compare pages, the live kernel (:mod:`bnfk_core.kernels.live`) and the
Markov-equivalence edits (:mod:`bnfk_core.analyses.segments.equivalence`) all edit a network through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StructureError
from .dag import DAG

__all__ = ["ARC_EDITS", "ArcEdit"]

#: the kinds of an arc edit
ARC_EDITS = ("add", "remove", "reverse")

_DONE = {"add": "added", "remove": "removed", "reverse": "reversed"}


@dataclass(frozen=True)
class ArcEdit:
    """One arc edit: ``kind`` (one of :data:`ARC_EDITS`) applied to the arc u -> v; ``reverse`` turns
    u -> v into v -> u.

    Parameters
    ----------
    kind : {"add", "remove", "reverse"}
    u, v : str
        The arc's tail and head (for ``remove`` and ``reverse``: an arc of the DAG the edit is applied to).

    Raises
    ------
    StructureError
        For a kind that is none of :data:`ARC_EDITS`.
    """

    kind: str
    u: str
    v: str

    def __post_init__(self):
        if self.kind not in ARC_EDITS:
            raise StructureError(f"Unknown arc edit '{self.kind}'; choose one of {', '.join(ARC_EDITS)}.")

    def apply(self, dag: DAG) -> DAG:
        """``dag`` with this edit made (a new DAG; ``dag`` is unchanged).

        Parameters
        ----------
        dag : DAG

        Returns
        -------
        DAG

        Raises
        ------
        StructureError
            When :class:`DAG` refuses the edit: an unknown variable, an arc to add that is there (either
            way round), an arc to remove or reverse that is not, or a directed cycle.
        """
        if self.kind == "add":
            return dag.add_arc(self.u, self.v)
        if self.kind == "remove":
            return dag.remove_arc(self.u, self.v)
        return dag.reverse_arc(self.u, self.v)

    def inverse(self) -> ArcEdit:
        """The edit that undoes this one: ``inverse().apply(apply(dag)) == dag``.

        Returns
        -------
        ArcEdit
            Remove u -> v for an add, add u -> v for a remove, reverse v -> u for a reverse.
        """
        if self.kind == "add":
            return ArcEdit("remove", self.u, self.v)
        if self.kind == "remove":
            return ArcEdit("add", self.u, self.v)
        return ArcEdit("reverse", self.v, self.u)

    def arc_after(self) -> tuple[str, str] | None:
        """The edited arc as it stands after the edit.

        Returns
        -------
        (str, str) or None
            (u, v) after an add, (v, u) after a reverse, None after a remove.
        """
        return {"add": (self.u, self.v), "reverse": (self.v, self.u)}.get(self.kind)

    def describe(self) -> str:
        """What the edit did, in words: ``"added A → B"``, ``"removed A → B"``, ``"reversed A → B"``.

        Returns
        -------
        str
        """
        return f"{_DONE[self.kind]} {self.u} → {self.v}"
