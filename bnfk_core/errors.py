"""Error types raised by bnfk_core.

Every error carries one sentence that names the culprit (file, line, column,
variable, arc or parameter).  The app shows it with ``st.error``; the CLI prints
``error: <message>`` and exits with code 2.
"""

__all__ = ["BnfkError", "DataError", "StructureError", "ModelError", "KernelError"]


class BnfkError(ValueError):
    """Base class of every user-facing error in bnfk_core."""


class DataError(BnfkError):
    """A CSV file, a column or a value cannot be used."""


class StructureError(BnfkError):
    """A DAG edit or a structure-learning request is invalid (cycle, unknown node, ...)."""


class ModelError(BnfkError):
    """A Bayesian network cannot be built, fitted, read or used as asked."""


class KernelError(BnfkError):
    """A kernel cannot be computed as asked (memory guard, zero probability, ...)."""
