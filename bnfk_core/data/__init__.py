"""Categorical tables: reading files and frames, binning numbers, streaming chunks, runners and counts.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""
from ..registry import face

_HOMES = {
    "MISSING_CATEGORY": "binning", "MISSING_POLICIES": "binning", "text_levels": "binning", "as_numbers": "binning",
    "interval_label": "binning", "parse_interval": "binning", "quantile_bins": "binning",
    "weighted_quantile_bins": "binning", "show_value": "binning", "check_options": "binning",
    "check_columns": "binning", "column_states": "binning", "binning_notes": "binning", "model_columns": "binning",
    "sample_dir": "samples", "SAMPLE_SUBDIR": "samples", "DaskRunner": "dask_runner", "local_cluster_client": "dask_runner", "connect": "dask_runner",
    "check_address": "dask_runner", "timeout_set": "dask_runner", "dask_timeout": "dask_runner",
    "state_offsets": "encoding", "one_hot": "encoding", "complete_codes": "counts", "config_index": "counts", "weighted_bincount": "counts",
    "counts_from_columns": "counts", "family_counts": "counts", "merge_rows": "counts", "code_matrix": "counts",
    "dense_cells": "counts", "dense_family_counts": "counts", "DENSE_MAX_CELLS": "counts", "shifted_matrix": "counts",
    "table_cells": "counts", "family_tables": "counts", "THREADS_MIN_PASSES": "counts", "DEFAULT_TIMEOUT": "limits", "MAX_TIMEOUT": "limits", "atomic_path": "files", "same_file": "files",
    "regular_file_problem": "files", "open_regular": "files", "not_regular_message": "files",
    "DEFAULT_MAX_BYTES": "limits", "memory_limit": "limits", "memory_limit_set": "limits",
    "resolve_limit": "limits", "format_bytes": "limits", "estimate_gram_bytes": "limits",
    "WORKSPACE_MATRICES": "limits", "workspace_bytes": "limits", "max_rows": "limits", "fits": "limits",
    "guard_workspace": "limits", "guard_gram": "limits", "guard_tables": "limits", "one_blas_thread": "limits",
    "format_record": "raw_table", "RawTable": "raw_table", "read_table": "raw_table", "FileLayout": "reading",
    "file_layout": "reading", "iter_chunks": "reading", "chunks_done": "reading", "MAX_HEADER_BYTES": "reading",
    "DEFAULT_CHUNKSIZE": "reading", "DELIM_NAMES": "reading", "BINARY_MAGIC": "reading", "read_input": "reading",
    "printable": "reading", "source_name": "reading", "read_text": "reading", "check_file": "reading",
    "read_raw_text": "reading", "refuse_binary": "reading", "refuse_non_csv_text": "reading",
    "sniff_delimiter": "reading", "header_names": "reading", "records": "reading", "parse": "reading", "check_header": "reading",
    "TextFile": "reading", "Block": "reading", "line_breaks": "reading", "open_text": "reading",
    "scan_blocks": "reading", "read_block": "reading", "block_records": "reading", "is_blank": "reading",
    "read_header": "reading", "Runner": "runners", "LocalRunner": "runners", "runner_for": "runners",
    "ENGINES": "runners", "BINCOUNT_CONFIGS": "stats", "entropy": "stats", "entropy_of_counts": "stats",
    "mutual_information": "stats", "theils_u": "stats", "cramers_v": "stats", "cramers_v_corrected": "stats",
    "collapse": "stats", "contingency_counts": "stats", "column_summary": "stats", "WeightedData": "stream",
    "read_counts": "stream", "ColumnCodec": "stream", "Plan": "stream", "chunk_levels": "stream",
    "merge_levels": "stream", "chunk_distinct": "stream", "merge_distinct": "stream", "plan_from_levels": "stream",
    "distinct_rows": "stream", "encode_chunk": "stream", "CodeChunks": "stream", "iter_codes": "stream",
    "Merger": "stream", "HOLD_BYTES_PER_FILE_BYTE": "stream", "held_bytes": "stream", "too_big_to_hold": "stream",
    "chunked_note": "stream", "levels_pass": "stream", "levels_part": "stream", "distinct_part": "stream",
    "codes_part": "stream", "chunk_levels_rows": "stream", "rows_to_distinct": "stream", "levels_rows_part": "stream", "CategoricalData": "table", "sample_rows": "table", "load_csv": "table", "from_codes": "table",
    "from_frame": "table", "as_data": "table", "cell_texts": "table",
    "MISSING_TOKENS": "table", "DEFAULT_NA_VALUES": "table", "na_set": "table",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
