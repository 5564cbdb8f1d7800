"""bnfk: categorical data -> Bayesian network -> Fisher kernel.  Run with ``streamlit run app.py``.

The entry script only routes: the pages live in ``pages/`` and are listed in ``bnfk_ui/router.py``.
"""

from bnfk_ui import router

router.run()
