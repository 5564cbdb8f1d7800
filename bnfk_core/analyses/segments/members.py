"""The limits of the segment analyses the faces show, declared light (importing this module loads no numerical
library, so the CLI's ``--help`` reads it)."""

from __future__ import annotations

__all__ = ["MAX_CANDIDATES"]

#: candidate arcs the arc search (:mod:`.search`) clusters per step at most (wide data; every thesis dataset
#: has fewer)
MAX_CANDIDATES = 2000
