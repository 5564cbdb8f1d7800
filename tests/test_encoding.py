"""The one one-hot encoder (bnfk_core.data.encoding) against scikit-learn's OneHotEncoder, and its users
against the encoder."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.preprocessing import OneHotEncoder

from bnfk_core.data.encoding import one_hot, state_offsets
from bnfk_core.errors import DataError


def _codes(seed: int = 0, n: int = 40, cards=(2, 3, 5, 1)):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, r, n) for r in cards])
    codes[rng.random(codes.shape) < 0.2] = -1
    return codes, list(cards)


def _sklearn(codes, cards):
    """One-hot by scikit-learn with every state declared; a missing cell's block zeroed afterwards."""
    enc = OneHotEncoder(
        categories=[list(range(r)) for r in cards], handle_unknown="ignore", sparse_output=False
    )
    return enc.fit_transform(np.where(codes < 0, 10**6, codes))  # 10**6: an unknown state, an all-zero block


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_hot_equals_scikit_learn(seed):
    codes, cards = _codes(seed)
    want = _sklearn(codes, cards)
    np.testing.assert_array_equal(one_hot(codes, cards), want)
    np.testing.assert_array_equal(one_hot(codes, cards, sparse=True).toarray(), want)
    np.testing.assert_array_equal(one_hot(codes, cards, dtype=np.int32), want.astype(np.int32))
    np.testing.assert_allclose(one_hot(codes, cards, sparse=True, value=0.5).toarray(), 0.5 * want)
    assert state_offsets(cards).tolist() == [0, 2, 5, 10, 11]


def test_nan_blocks_cover_exactly_the_missing_cells():
    codes, cards = _codes(3)
    X = one_hot(codes, cards, missing="nan")
    off = state_offsets(cards)
    for i, r in enumerate(cards):
        block = X[:, off[i] : off[i + 1]]
        assert (np.isnan(block).all(axis=1) == (codes[:, i] < 0)).all()
        assert (np.nan_to_num(block).sum(axis=1) == (codes[:, i] >= 0)).all()


def test_bad_input_is_refused_with_the_culprit():
    codes, cards = _codes(4)
    with pytest.raises(DataError, match="one cardinality per column"):
        one_hot(codes, cards[:-1])
    bad = codes.copy()
    bad[0, 1] = 3
    with pytest.raises(DataError, match="Column 1 has a code beyond its 3 states"):
        one_hot(bad, cards)
    with pytest.raises(DataError, match="'nan'"):
        one_hot(codes, cards, sparse=True, missing="nan")


def test_users_call_the_one_encoder():
    """Hamming matches of the weighted-kNN imputer and the Hamming features of kernel k-means are products of
    the encoder's matrix (recomputed here by scikit-learn)."""
    from bnfk_core.analyses.cluster.features import feature_map
    from bnfk_core.analyses.impute.core import hamming_matches
    from bnfk_core.data.table import from_codes
    from bnfk_core.kernels.hamming import fit_hamming

    codes, cards = _codes(5, cards=(2, 3, 4))
    data = from_codes(codes.astype(np.int32), ["a", "b", "c"], [[str(s) for s in range(r)] for r in cards])
    X = _sklearn(codes, cards)
    np.testing.assert_array_equal(hamming_matches(data), X @ X.T)
    np.testing.assert_allclose(feature_map(fit_hamming(data), data).toarray(), X / np.sqrt(3))
    np.testing.assert_allclose(fit_hamming(data).gram(data), X @ X.T / 3)
