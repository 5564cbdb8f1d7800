"""What ``learn --numbers keep``, ``learn --structure-file``, ``loglik``, ``sample`` and ``impute --numbers
keep`` do with hybrid (conditional linear Gaussian) networks (:mod:`bnfk_core.hybrid`): read a mixed table
with the shared data options, fit a given DAG or search one, write or read the hybrid JSON model file, and
fill a mixed table's missing cells."""

from __future__ import annotations

import csv
import math
import time

import numpy as np

from ..errors import BnfkError
from .common import is_hybrid_model, read_mixed

__all__ = [
    "read_mixed",
    "read_structure_file",
    "learn_hybrid",
    "given_discrete",
    "is_hybrid_model",
    "hybrid_loglik",
    "write_mixed_csv",
    "HYBRID_LEARNERS",
    "impute_mixed",
]

#: the structures ``--numbers keep`` learns -> the options of :func:`bnfk_core.hybrid.learn_hybrid_network`
HYBRID_LEARNERS = {"hc-greedy": {"tabu_steps": 0}, "hc": {"tabu_steps": 25}, "exact": {"search": "exact"}}


def read_structure_file(path: str, columns) -> object:
    """The DAG of a structure file (``{"nodes": [...], "arcs": [[u, v], ...]}``, or a model file), its
    nodes checked against ``columns``."""
    from ..data.files import NOT_FOUND, not_regular_message, open_regular, regular_file_problem
    from ..network.formats import read_structure

    problem = regular_file_problem(path)
    if problem == NOT_FOUND:
        raise BnfkError(f"Structure file '{path}' does not exist.")
    if problem is not None:
        raise BnfkError("Structure file " + not_regular_message(f"'{path}'"))
    try:
        with open_regular(path, "rb") as fh:
            dag = read_structure(fh.read(), path)
    except OSError as exc:
        raise BnfkError(f"Cannot read structure file '{path}': {exc.strerror or exc}.") from None
    missing = [v for v in dag.nodes if v not in columns]
    if missing:
        raise BnfkError(f"Node '{missing[0]}' of structure file '{path}' is not a column of the data.")
    return dag


def learn_hybrid(args, progress=None) -> tuple[dict, object]:
    """(the JSON result, the fitted HybridNet) of ``learn --numbers keep``
    (:func:`bnfk_core.hybrid.learn.learn_hybrid_network`)."""
    from ..hybrid import HYBRID_LEARN_SCORES, learn_hybrid_network

    if args.class_column is not None:
        raise BnfkError("--class-column is not taken with --numbers keep yet; drop it or use --numbers bin.")
    if args.score not in HYBRID_LEARN_SCORES:
        raise BnfkError(f"--numbers keep scores with {', '.join(HYBRID_LEARN_SCORES)}, not '{args.score}'.")
    if not args.structure_file and args.structure not in HYBRID_LEARNERS:
        raise BnfkError(
            f"--numbers keep learns with --structure {' or '.join(HYBRID_LEARNERS)} (or a --structure-file), "
            f"not '{args.structure}'."
        )
    t0 = time.perf_counter()
    data = read_mixed(args.data, args)
    dag = read_structure_file(args.structure_file, data.variables) if args.structure_file else None
    got = learn_hybrid_network(
        data,
        dag=dag,
        score=args.score,
        missing_data=args.missing_data,
        **HYBRID_LEARNERS.get(args.structure, {}),
        max_parents=args.max_parents,
        params=args.params,
        pseudo_count=args.pseudo_count,
        progress=progress,
    )
    model = got.model
    out = {
        "model_kind": "hybrid",
        "method": got.method if dag is not None else f"{args.structure}: {got.method}",
        "score_name": got.score_name,
        "score": got.score,
        "search_score": got.search_score,
        "moves": got.moves,
        "arcs": [list(a) for a in got.dag.sorted_arcs()],
        "n_arcs": got.dag.n_arcs,
        "parameters": model.parameter_count(),
        "params": args.params,
        "rows": data.n_rows,
        "n_rows_used": got.n_rows_used,
        "missing_data": got.missing_data,
        "numeric_columns": [model.variables[i] for i in model.numeric],
        "discrete_columns": [model.variables[i] for i in model.discrete],
        "notes": list(data.notes) + got.notes,
        "seconds": time.perf_counter() - t0,
    }
    return out, model


def given_discrete(args, data, recipe) -> tuple[dict, object]:
    """(the JSON result, the fitted BayesNet) of ``learn --structure-file`` on a categorical table: the
    recipe's CPTs fitted to the given DAG, and its score under ``--score`` on the complete rows (what a
    search would have printed for it)."""
    from ..learning.recipe import fit_recipe
    from ..learning.scores import score_dag

    t0 = time.perf_counter()
    dag = read_structure_file(args.structure_file, data.variables)
    sub = data.select(list(dag.nodes))
    model = fit_recipe(dag, sub, recipe)
    complete = sub.complete_rows()
    codes = sub.codes[complete]
    score = score_dag(codes, sub.cardinalities, dag, args.score, ess=args.ess)
    out = {
        "model_kind": "discrete",
        "method": "given",
        "score_name": args.score,
        "score": float(score),
        "arcs": [list(a) for a in dag.sorted_arcs()],
        "n_arcs": dag.n_arcs,
        "parameters": model.parameter_count(),
        "params": args.params,
        "rows": data.n_rows,
        "n_rows_used": int(complete.sum()),
        "notes": list(data.notes),
        "seconds": time.perf_counter() - t0,
    }
    return out, model


def hybrid_loglik(args, path: str) -> np.ndarray:
    """log p(x_observed) of every row of ``args.data`` under the hybrid model at ``path`` (a log-density:
    numeric cells contribute densities, not probabilities)."""
    from ..hybrid import marginal_log_density, read_hybrid

    model = read_hybrid(path)
    data = model.align(read_mixed(args.data, args, model))
    return marginal_log_density(model, data)


def write_mixed_csv(data, fh) -> None:
    """A mixed table as CSV: states by name, numbers in full precision (``repr``), missing cells empty."""
    from ..hybrid import DISCRETE

    w = csv.writer(fh, lineterminator="\n")
    w.writerow(data.variables)
    cols = []
    for j, kind in enumerate(data.kinds):
        if kind == DISCRETE:
            st = np.asarray(list(data.states[j]) + [""], dtype=object)
            cols.append(st[data.codes[:, j]])
        else:
            cols.append(["" if math.isnan(x) else repr(float(x)) for x in data.values[:, j]])
    w.writerows(zip(*cols))


def impute_mixed(args, t0: float) -> dict:
    """``impute DATA --numbers keep``: the missing cells of a mixed table filled under a CLG network
    (``--model M.json``, or learned from DATA by hill climbing, structural EM over the missing cells), numbers
    by their conditional mean and categories by their most probable state
    (:func:`bnfk_core.hybrid.impute.hybrid_imputation`); the file written back with only those cells
    changed."""
    import pandas as pd

    from ..analyses.impute.completion import CompletedFile
    from ..data.raw_table import read_table
    from ..hybrid import HYBRID_SCORES, MAX_COMPLETIONS, hybrid_imputation, learn_hybrid_network, read_hybrid
    from ..serving.session_files import is_session_file

    if is_session_file(args.data):
        raise BnfkError("--numbers keep reads a CSV file, not a session file.")
    if args.chunksize or args.engine == "dask":
        raise BnfkError("--numbers keep reads a table held in memory; leave out --chunksize and --engine.")
    if args.class_column is not None:
        raise BnfkError("--class-column is not taken with --numbers keep yet; drop it or use --numbers bin.")
    if args.method:
        raise BnfkError("--method chooses a discrete imputer; with --numbers keep the CLG network imputes.")
    learned = {}
    if args.model is not None:
        if not is_hybrid_model(args.model):
            raise BnfkError(f"--numbers keep imputes with a hybrid JSON model; '{args.model}' is not one.")
        model = read_hybrid(args.model)
        data = read_mixed(args.data, args, model)
    else:
        score = args.score or "bic"
        structure = args.structure or "hc"
        if score not in HYBRID_SCORES:
            raise BnfkError(f"--numbers keep scores with {' or '.join(HYBRID_SCORES)}, not '{score}'.")
        if structure not in HYBRID_LEARNERS:
            raise BnfkError(
                f"--numbers keep learns with --structure {' or '.join(HYBRID_LEARNERS)}, not '{structure}'."
            )
        data = read_mixed(args.data, args)
        got = learn_hybrid_network(
            data,
            score=score,
            missing_data=args.missing_data,
            **HYBRID_LEARNERS[structure],
            progress=None,
        )
        model = got.model
        learned = {
            "learned": {
                "model_kind": "hybrid",
                "structure": structure,
                "method": got.method,
                "score_name": got.score_name,
                "score": got.score,
                "missing_data": got.missing_data,
                "arcs": [list(a) for a in got.dag.sorted_arcs()],
                "em_iterations": model.fit_info.get("em_iterations", 0),
                "notes": list(got.notes),
            }
        }
    # a learned network imputes as learn_and_impute does: a row with more than MAX_COMPLETIONS completions
    # keeps the most probable ones; a given model's rows are enumerated in full (or refused)
    res = hybrid_imputation(model, data, width=MAX_COMPLETIONS if learned else None)
    if res.beamed:
        learned["learned"]["notes"].append(
            f"{res.beamed} row(s) have more than {MAX_COMPLETIONS:,} completions of their missing discrete "
            "cells: their cells were filled from the most probable ones."
        )
    table = read_table(args.data)
    if table.n_rows != data.n_rows:
        raise BnfkError(f"{table.source} has {table.n_rows} rows but the table read from it {data.n_rows}.")
    done = res.data
    changes, parts = {}, []
    for i, (rows, P) in res.probabilities.items():
        name, st = done.variables[i], np.asarray(done.states[i], dtype=object)
        for r in rows:
            changes[(int(r), name)] = st[done.codes[r, i]]
        r_ = len(st)
        parts.append(
            pd.DataFrame(
                {
                    "row": np.repeat(rows, r_),
                    "column": name,
                    "imputed": np.repeat(st[done.codes[rows, i]], r_),
                    "state": np.tile(st, len(rows)),
                    "probability": P.reshape(-1),
                    "mean": np.nan,
                    "variance": np.nan,
                }
            )
        )
    for i, (rows, mean, var) in res.moments.items():
        name = done.variables[i]
        text = [repr(float(x)) for x in mean]
        for r, t in zip(rows, text):
            changes[(int(r), name)] = t
        parts.append(
            pd.DataFrame(
                {
                    "row": rows,
                    "column": name,
                    "imputed": text,
                    "state": "",
                    "probability": np.nan,
                    "mean": mean,
                    "variance": var,
                }
            )
        )
    cols = ["row", "column", "imputed", "state", "probability", "mean", "variance"]
    probs = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame({c: [] for c in cols})
    probs = probs.sort_values(["row", "column"], kind="stable").reset_index(drop=True)
    probs.insert(1, "line", table.lines[probs["row"].to_numpy(dtype=np.int64)])
    probs.insert(probs.columns.get_loc("imputed") + 1, "filled", probs["imputed"])
    CompletedFile(table, changes, probs, "mean").write(args.output, args.probabilities)
    imputed = res.imputed
    return {
        "output": args.output,
        "probabilities": args.probabilities,
        "model_kind": "hybrid",
        "rows": int(data.n_rows),
        "imputed_cells": int(imputed.sum()),
        "imputed_per_column": {
            v: int(imputed[:, i].sum()) for i, v in enumerate(done.variables) if imputed[:, i].any()
        },
        "numeric_columns": [model.variables[i] for i in model.numeric],
        "fill_numeric": "conditional mean",
        **learned,
        "notes": list(data.notes),
        "seconds": time.perf_counter() - t0,
    }
