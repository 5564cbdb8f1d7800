"""Captions and labels say what happens without a class column: the Kernel page does not claim an order by
class, the Clustering page says what 0 clusters means."""

from apptest_helpers import assert_clean, page_app


def test_kernel_caption_without_a_class_column():
    at = page_app("kernel.py", 120, dataset="hayes_roth", class_column=None, kernel_rows=60).run()
    assert_clean(at)
    caption = next(c.value for c in at.caption if "rows, ordered" in c.value)
    assert "by class" not in caption.split("ordered", 1)[1].split(";")[0].replace("no class column", "")
    assert "no class column to order by" in caption
    with_class = page_app("kernel.py", 120, dataset="hayes_roth", class_column="class", kernel_rows=60).run()
    assert any("ordered by class" in c.value for c in with_class.caption)


def test_clustering_cluster_count_label_without_a_class_column():
    at = page_app(
        "clustering.py", 120, dataset="hayes_roth", class_column=None, clu_rows=60, clu_restarts=2
    ).run()
    assert_clean(at)
    box = at.number_input(key="w_clu_k")
    assert box.label == "Clusters (0 = 2: no class column)"
    assert at.session_state["clu_result"]["n_clusters"] == 2
