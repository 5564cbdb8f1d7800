"""The page-settings registry, now Streamlit-free in :mod:`bnfk_core.serving.settings` (session files and the
CLI read it too); re-exported here so the app's imports keep working."""

from bnfk_core.serving.settings import *  # noqa: F401,F403
from bnfk_core.serving.settings import KERNEL_COMPARISONS, __all__  # noqa: F401
