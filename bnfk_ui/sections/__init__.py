"""Sections of the longer pages: each function draws one tab or panel (widgets -> core call -> figure)."""
