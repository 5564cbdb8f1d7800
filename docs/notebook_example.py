"""bnfk in a notebook: a DataFrame in, scikit-learn estimators out, the network handed to pgmpy.

Run it from a checkout (``python docs/notebook_example.py``) or paste the body of ``main`` into notebook
cells. It uses a bundled sample, the 1984 United States Congressional Voting Records (435 representatives, 16
yes/no votes, ``?`` where a representative did not vote, and the party).

1. load the sample as a pandas DataFrame (``?`` is a missing cell) and read it as a categorical table;
2. learn the network (the default recipe: Chow-Liu tree, BIC, BDeu CPTs, EM over the missing votes);
3. impute inside a Pipeline and cross-validate an SVM on the Fisher kernel;
4. cluster the representatives with a latent class model;
5. hand the network to pgmpy and ask its variable elimination what bnfk's exact inference says.
"""

from pathlib import Path

import pandas as pd
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from bnfk_core import CategoricalData, to_pgmpy
from bnfk_core.estimators import FisherKernel, LatentClassModel, NetworkImputer

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "house_votes_84.csv"


def main(sample=SAMPLE) -> dict:
    # 1. a bundled sample as a DataFrame; "?" is a vote not cast (a missing cell)
    votes = pd.read_csv(sample, na_values="?", keep_default_na=False)
    X, y = votes.drop(columns="class"), votes["class"]
    table = CategoricalData.from_frame(votes, class_column="class")
    print(table, f"-- {int(table.missing_mask().sum())} missing votes")

    # 2. learn the network: FisherKernel.fit learns it by the recipe (structure=, structure_score=, params=)
    fk = FisherKernel().fit(X)
    net = fk.network_
    print(f"network: {net.dag.n_arcs} arcs, e.g. {net.dag.sorted_arcs()[:3]}")
    K = fk.gram(X)  # the marginalised Fisher kernel, ready for SVC(kernel="precomputed")
    print(f"Gram matrix {K.shape}")

    # 3. impute inside a Pipeline, cross-validate an SVM on the Fisher kernel (each fold learns its own
    # network)
    pipe = make_pipeline(NetworkImputer(), FisherKernel(output="gram"), SVC(kernel="precomputed"))
    scores = cross_val_score(pipe, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
    print(f"SVM on the Fisher kernel: accuracy {scores.mean():.3f} +- {scores.std():.3f} (5 folds)")

    # 4. latent classes: two classes, compared with the parties
    lcm = LatentClassModel(2, n_init=10).fit(X)
    classes = lcm.predict(X)
    ari = adjusted_rand_score(y, classes)
    print(pd.crosstab(y, classes, rownames=["party"], colnames=["latent class"]))
    print(
        f"log-likelihood {lcm.loglik_:.2f}, BIC {lcm.bic(X):.1f}, adjusted Rand index to the parties "
        f"{ari:.3f}"
    )

    # 5. the network in pgmpy: variable elimination on it gives bnfk's exact posterior
    from pgmpy.inference import VariableElimination

    pg = to_pgmpy(net)
    evidence = {"physician-fee-freeze": "y", "el-salvador-aid": "y"}
    query = VariableElimination(pg).query(["crime"], evidence=evidence, show_progress=False)
    print(query)
    return {
        "table": table,
        "network": net,
        "gram": K,
        "cv_scores": scores,
        "latent_classes": lcm,
        "ari": ari,
        "pgmpy_model": pg,
        "pgmpy_query": query,
        "evidence": evidence,
    }


if __name__ == "__main__":
    main()
