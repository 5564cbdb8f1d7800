"""Home: pick a dataset (bundled sample or upload), see the current state, and where to go next."""

import streamlit as st

from bnfk_core.network.textbook import TEXTBOOK_NETWORKS
from bnfk_core.views import figures, report
from bnfk_ui import common
from bnfk_ui.sections import home as sections
from bnfk_ui.sections import hybrid as hybrid_section
from bnfk_ui.sections import report as report_section
from bnfk_ui.sections import textbook
from bnfk_ui.state import caches, charts, choices, hybrid, messages, shared, structure, tables, uploads
from bnfk_ui.state import model as model_state


def page():
    hybrid_section.binned_notice()  # numbers kept: the one sentence naming the columns this page bins
    st.markdown(
        "This app turns a table of **categorical data** into a **Bayesian network** — a directed acyclic "
        "graph "
        "with a conditional probability table for every variable — learned from the data or drawn by hand. "
        "The network defines a **Fisher kernel**: a similarity between two rows that rewards agreeing on "
        "values "
        "the network finds improbable given their parents, and it decomposes into one term per variable. "
        "Explore how the structure shapes that similarity: compare it with the empty network (the scaled "
        "Hamming kernel), watch the Gram matrix change as you add arcs, and see which variables make two "
        "rows alike."
    )

    left, right = st.columns([3, 2], gap="large")
    with left:
        st.subheader("Dataset")
        cat = choices.catalog()
        names = list(cat)
        current = st.session_state.dataset
        books = [choices.TEXTBOOK_PREFIX + n for n in TEXTBOOK_NETWORKS]  # rows sampled from a network
        options = names + books + ["upload"] + (["path"] if current == "path" else [])  # a file: Data page

        def fmt(n):
            if n == "path":
                return f"File on the server ({choices.server_name()})"
            if n == "upload":
                up = st.session_state.upload
                return f"Uploaded CSV ({up[0]})" if up else "Upload your own CSV…"
            if choices.textbook_of(n):
                return textbook.option_label(choices.textbook_of(n))
            return f"{cat[n]['title']} — {cat[n]['rows']:,} rows × {cat[n]['columns']} columns"

        labels = {fmt(n): n for n in options}  # plain string options (AppTest-friendly)

        def picked():
            choice = labels[st.session_state.w_dataset_pick]
            st.session_state.want_upload = choice == "upload"
            if choice == "path":
                return
            if choice == "upload":
                if st.session_state.upload:
                    uploads.use_upload(*st.session_state.upload)
            elif choices.textbook_of(choice):
                uploads.use_textbook(choices.textbook_of(choice))
            else:
                uploads.use_sample(choice)

        st.session_state.w_dataset_pick = fmt("upload" if st.session_state.get("want_upload") else current)
        st.selectbox("Bundled sample or your own file", list(labels), key="w_dataset_pick", on_change=picked)
        waiting = st.session_state.get("want_upload") and current != "upload"
        shown = cat[current]["title"] if current in cat else "the current data"  # the catalog's own titles
        if waiting:  # nothing uploaded yet: say that the old data stay in use
            st.caption(f"Choose a CSV file below; until one is uploaded every page keeps using {shown}.")
        elif current in cat:
            st.caption(cat[current]["description"])
        elif choices.textbook_of(current):
            textbook.sample_inputs()  # the rows sampled from the network and their seed
        if st.session_state.get("want_upload") or current == "upload":
            up = st.file_uploader(
                "Upload a CSV (header row; nominal or numeric columns)",
                type=["csv", "txt", "tsv"],
                key="uploader",
            )
            if up is not None:
                content = up.getvalue()
                seen = (up.name, hash(content))
                if st.session_state.get("upload_seen") != seen:  # each file is processed once
                    st.session_state.upload_seen = seen
                    uploads.use_upload(up.name, content)
                    st.rerun()
    with right:
        st.subheader("Current state")
        if waiting:
            st.caption(f"Still {shown}: no file uploaded yet.")
        d = tables.data()
        dg = structure.dag()
        with common.shown_errors():
            sc = caches.scores()
            m = model_state.session_model()
            c1, c2 = st.columns(2)
            c1.metric("Rows × variables", f"{tables.full_data().n_rows:,} × {d.n_vars}")
            c2.metric("Class column", d.class_column or "none")
            c1.metric("Structure arcs", dg.n_arcs, help=messages.plain(structure.structure_label()))
            c2.metric("Free parameters", f"{m.parameter_count():,}")
            st.caption(
                f"Structure: **{messages.plain(structure.structure_label())}** "
                f"over the {len(dg.nodes)} feature "
                f"variables (the class is never a kernel feature). "
                f"BIC {sc['bic']:,.1f} · BDeu {sc['bdeu']:,.1f} · qNML {sc['qnml']:,.1f} (log scale, higher "
                "is better)."
            )
            settings = {k: st.session_state[k] for k in report.REPORT_DEFAULTS if k in st.session_state}
            report_section.report_panel(
                d, m, settings, structure.structure_label(), f"{common.dataset_name()}_report.html"
            )
            st.caption(
                "One HTML file of the current analysis with the settings of every page: data, structure, "
                "kernel, clustering, imputation, prototypes; works offline. Built once per data, network and "
                "settings, with a progress bar."
            )

    sections.where_next()

    with common.shown_errors():
        dg = structure.dag()
        fig = shared.shared(
            figures.dag_figure,
            dg.nodes,
            dg.sorted_arcs(),
            title=f"Current structure: {structure.structure_label()}",
            height=None,
            numeric=tuple(hybrid.numeric_columns()),
        )
        charts.plotly_chart(fig, key="home_dag", config={"displaylogo": False})


if common.start("Bayesian-network Fisher kernels"):
    page()
