"""Registry names as argparse ``choices``, read live from the registries.

The registries read their built-in members from light declaration modules (``members.py`` beside each family),
so a subcommand's ``--help`` and its argument errors list every member -- a plug-in's too -- without importing
numpy's heavier neighbours.  The defaults and limits the parsers show are imported from those same light
modules.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import registry

__all__ = ["RegistryChoices", "choices", "feature_learners"]


class RegistryChoices:
    """``choices=`` for the names of ``reg`` (or the subset ``only()`` returns), read at each use so that a
    member registered after the parser was built is listed and accepted."""

    def __init__(self, reg: registry.Registry, only: Callable[[], tuple] | None = None):
        self.reg, self.only = reg, only

    def _listed(self) -> tuple:
        return tuple(self.reg) if self.only is None else tuple(self.only())

    def __iter__(self):
        return iter(self._listed())

    def __len__(self) -> int:
        return len(self._listed())

    def __contains__(self, name) -> bool:
        return name in self._listed()

    def __repr__(self) -> str:
        return repr(self._listed())


def choices(reg: registry.Registry) -> RegistryChoices:
    """All names of ``reg``."""
    return RegistryChoices(reg)


def feature_learners() -> RegistryChoices:
    """The structure-learning methods over the features only (:func:`bnfk_core.registry.feature_learners`)."""
    return RegistryChoices(registry.LEARNERS, registry.feature_learners)
