"""The Bayesian network: its DAG and its arc edits, its CPTs (the model; one CPT viewed and edited as a
table), the model files (BIF, XMLBIF, Hugin NET, XDSL, JSON), pgmpy and networkx both ways, d-separation, the
textbook networks with their CPTs, where to draw it and its SVG for a notebook.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""

from ..registry import face

_HOMES = {
    "bif_token": "bif",
    "bif_name": "bif",
    "model_to_bif": "bif",
    "parse_bif": "bif",
    "DAG": "dag",
    "CPDAG": "dag",
    "SEGMENT_KINDS": "members",
    "SEGMENT_SIZES": "dag",
    "SEGMENT_LABELS": "dag",
    "SEGMENT_PATTERNS": "dag",
    "empty_dag": "dag",
    "naive_bayes": "dag",
    "segment_arcs": "dag",
    "apply_segment": "dag",
    "SEGMENT_READING": "dag",
    "segment_roles": "dag",
    "segment_pattern": "dag",
    "segment_independencies": "dsep",
    "skeleton": "dag",
    "v_structures": "dag",
    "cpdag": "dag",
    "covered_arcs": "dag",
    "equivalent": "dag",
    "structural_hamming_distance": "dag",
    "d_separated": "dsep",
    "trail_is_active": "dsep",
    "ARC_EDITS": "edit",
    "ArcEdit": "edit",
    "layered_layout": "layout",
    "arrow_segment": "layout",
    "arc_path": "layout",
    "path_hits_box": "layout",
    "BayesNet": "model",
    "fit": "model",
    "read_model": "formats",
    "read_structure": "formats",
    "write_model": "formats",
    "MAX_CPT_CELLS": "model",
    "MODEL_FORMATS": "formats",
    "MODEL_EXTENSIONS": "formats",
    "format_of": "formats",
    "sniff_format": "formats",
    "model_to_text": "formats",
    "model_from_text": "formats",
    "NO_PARENTS": "cpt",
    "cpt_frame": "cpt",
    "frame_to_cpt": "cpt",
    "parent_labels": "cpt",
    "with_cpt": "cpt",
    "zero_entries": "cpt",
    "dag_svg": "svg",
    "TEXTBOOK_NETWORKS": "textbook",
    "textbook_network": "textbook",
    "textbook_sample": "textbook",
    "MAX_TEXTBOOK_ROWS": "textbook",
    "to_pgmpy": "pgmpy_io",
    "from_pgmpy": "pgmpy_io",
    "to_networkx": "pgmpy_io",
    "from_networkx": "pgmpy_io",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
