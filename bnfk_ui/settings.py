"""The page-settings registry: it lives Streamlit-free in :mod:`bnfk_core.serving.settings` (session files and
the CLI read it too); re-exported here for the app's imports."""

from bnfk_core.serving.settings import *  # noqa: F401,F403
from bnfk_core.serving.settings import KERNEL_COMPARISONS, __all__  # noqa: F401
