"""Parts of the Home page: where to go next (a link to each page with what it does)."""

import streamlit as st

__all__ = ["where_next"]


def where_next() -> None:
    """The links to the pages, two rows of three, each with one sentence of what it shows."""
    st.subheader("Where to go next")
    c1, c2, c3 = st.columns(3)
    with c1:
        st.page_link("pages/data.py", label="Data", icon=":material/table_chart:")
        st.caption(
            "Preview the table, choose the class column, missing-value policy, discretisation and dropped "
            "columns."
        )
    with c2:
        st.page_link("pages/structure.py", label="Structure", icon=":material/account_tree:")
        st.caption(
            "Learn a network, edit arcs, apply segment presets, see the Markov equivalence class, "
            "import/export."
        )
    with c3:
        st.page_link("pages/kernel.py", label="Kernel", icon=":material/grid_on:")
        st.caption(
            "Gram matrix heatmaps, comparison with a second network, value distribution, per-variable "
            "contributions."
        )
    c1, c2, c3 = st.columns(3)
    with c1:
        st.page_link("pages/segments.py", label="Segments lab", icon=":material/science:")
        st.caption(
            "Add one arc, a V, an A, a chain or a full block and see what changes: kernel, clusters, "
            "imputations, prototypes."
        )
        st.page_link("pages/clustering.py", label="Clustering", icon=":material/scatter_plot:")
        st.caption(
            "Correlation and spectral clustering with each kernel, ARI/AMI/V-measure, kernel classification."
        )
    with c2:
        st.page_link("pages/imputation.py", label="Imputation", icon=":material/healing:")
        st.caption(
            "BN imputation against Mode and weighted kNN (thesis ch. 4), or fill in your own missing cells."
        )
        st.page_link("pages/prototypes.py", label="Prototypes", icon=":material/stars:")
        st.caption(
            "Greedy-MMD prototypes (paper Algorithm 1) against the chi-square heuristic and random subsets."
        )
    with c3:
        st.page_link("pages/results.py", label="Results", icon=":material/fact_check:")
        st.caption(
            "Our reproduction of the thesis's and the paper's tables, side by side with the published "
            "numbers."
        )
