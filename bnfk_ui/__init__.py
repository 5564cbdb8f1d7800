"""Shared Streamlit helpers for the bnfk app: session state + cached core calls, figures, page scaffolding."""
