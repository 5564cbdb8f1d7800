"""Serving the app: the operator's settings, session files and the confined file access of a served app.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""

from ..registry import face

_HOMES = {
    "DATA_ENV": "serve",
    "OUTPUT_ENV": "serve",
    "CONFIG_ENV": "serve",
    "CONFIG_FILE": "serve",
    "OUTSIDE_READ": "serve",
    "OUTSIDE_WRITE": "serve",
    "ServeError": "serve",
    "ServePolicy": "serve",
    "FileStore": "serve",
    "echo": "serve",
    "policy": "serve",
    "SCHEMA": "session_files",
    "VERSION": "session_files",
    "SessionError": "session_files",
    "Session": "session_files",
    "DataRef": "session_files",
    "session_dict": "session_files",
    "parse_session": "session_files",
    "read_session": "session_files",
    "write_session": "session_files",
    "is_session_file": "session_files",
    "SAMPLE_DIR": "session_files",
    "MAX_SESSION_BYTES": "session_files",
    "Setting": "settings",
    "SETTINGS": "settings",
    "REPORT_SETTINGS": "settings",
    "MAX_SEED": "settings",
    "ALGORITHMS": "settings",
    "TRANSFORMS": "settings",
    "CLUSTER_NETWORKS": "settings",
    "THESIS_NETWORK": "settings",
    "THESIS_RECIPE": "settings",
    "COMPARED_FAMILIES": "settings",
    "KERNEL_ORDERS": "settings",
    "KERNEL_COMPARISONS": "settings",
    "PROTOTYPE_SOURCES": "settings",
    "PROTOTYPE_CRITERIA": "settings",
    "SEGMENT_BASES": "settings",
    "shown_value": "settings",
    "defaults": "settings",
    "non_default": "settings",
    "check_settings": "settings",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
