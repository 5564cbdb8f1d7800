"""Clustering and classification with a kernel: correlation, spectral and feature k-means; metrics.

Every public name below loads its module on first use (PEP 562), so importing the package is light;
names two modules share are imported from those modules.
"""
from ...registry import face

_HOMES = {
    "ClassificationResult": "classification", "knn_proba": "classification", "svm_proba": "classification",
    "classify": "classification", "classify_many": "classification", "classifier_label": "classification",
    "classification_table": "classification", "ALGORITHMS": "clustering", "CLUSTER_ALGORITHMS": "clustering",
    "choose_algorithm": "clustering", "KernelSetup": "clustering", "cluster": "clustering",
    "kernel_setup": "clustering", "feature_network": "clustering", "run_clustering": "clustering",
    "compare": "clustering", "default_n_clusters": "clustering", "MAX_DEFAULT_CLUSTERS": "clustering",
    "ClusterError": "common", "ClusterResult": "common", "Progress": "common", "square_matrix": "common",
    "sq_distances": "common", "renumber": "common", "check_k": "common", "feature_columns": "common",
    "check_model": "common", "SHIFTS": "members", "adaptive_shift": "correlation", "shift_for": "correlation",
    "cc_cost": "correlation", "cc_move_deltas": "correlation", "correlation_clustering": "correlation",
    "PARALLEL_RESTART_WORK": "correlation", "SILHOUETTE_ROWS": "features", "has_feature_map": "features",
    "feature_map": "features", "feature_sq_distances": "features", "kernel_kmeans_features": "features",
    "sampled_silhouette": "features", "dense_layout": "features", "DENSE_MIN_DENSITY": "features",
    "DENSE_MEMORY_SHARE": "features", "kernel_silhouette": "metrics", "clustering_metrics": "metrics",
    "contingency": "metrics", "cluster_ordering": "metrics", "embedding": "metrics", "TRANSFORMS": "members", "FEATURE_CLUSTERER": "members",
    "affinity": "spectral", "spectral_clustering": "spectral", "ward_clustering": "ward", "ward_cost": "ward",
    "read_codes": "stream", "reads_in_chunks": "stream", "reading_note": "stream", "held_bytes": "stream",
    "HOLD_BYTES_PER_FILE_BYTE": "stream", "kernel_kmeans_rows": "features", "silhouette_rows": "features",
    "dense_for": "features", "BLOCK_ROWS": "lloyd", "CHUNK_ROWS": "lloyd", "kmeans_plusplus": "lloyd",
    "blocked_kmeans": "lloyd", "groups_from_phi": "lloyd", "groups_from_data": "lloyd", "kept_runner": "lloyd",
}

__all__ = list(_HOMES)
__getattr__, __dir__ = face(__name__, _HOMES)
