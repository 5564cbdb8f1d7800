"""Views without Streamlit, shared by the two faces (the app in ``bnfk_ui``/``pages`` and the CLI):

* :mod:`.figures` -- every plotly figure, one module per area (``base`` holds the shared builders);
* :mod:`.report` -- the self-contained HTML report (the app's "Report (HTML)" download, ``python -m bnfk_core
  report``);
* :mod:`.export` -- figures as files (offline HTML, PNG/SVG at slide size).

Nothing here imports Streamlit or ``bnfk_ui``; nothing here is imported when the CLI starts (the ``report``
subcommand imports :mod:`.report` inside its function), so ``--help`` stays light.
"""

__all__ = ["figures", "report", "export"]
