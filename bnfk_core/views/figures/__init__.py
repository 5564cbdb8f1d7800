"""Every plotly figure of the app, one module per area; nothing here computes results.

``base`` holds the shared builders (DAG, Gram heatmap, histogram, contributions, embedding, levels);
the analysis pages have their own modules (``from bnfk_core.views.figures import segments``).
"""

from .base import *  # noqa: F401,F403 - the shared builders, as ``figures.dag_figure`` etc.
from .base import __all__  # noqa: F401
