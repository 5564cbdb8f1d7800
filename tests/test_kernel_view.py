"""The Kernel page's words about its numbers (bnfk_core.views.kernel): the class means of the kernel values
and the variables that pull a pair together and apart, checked against sums and orders written out by hand."""

import numpy as np

from bnfk_core.views.kernel import class_means, strongest_terms


def test_class_means_pool_every_class_within_and_read_between():
    pairs = {
        "within": {"x": np.array([1.0, 2.0]), "y": np.array([6.0])},
        "between": np.array([0.0, 4.0, 5.0]),
    }
    assert class_means(pairs) == (3.0, 3.0)  # (1 + 2 + 6) / 3 pooled, not the mean of the class means


def test_class_means_without_a_shared_class():
    assert class_means({"within": {}, "between": np.array([2.0, -1.0])}) == (None, 0.5)
    assert class_means({"within": {"x": np.zeros(0)}, "between": np.array([1.0])}) == (None, 1.0)


def test_strongest_terms_take_the_largest_positive_and_most_negative():
    variables = ["a", "b", "c", "d", "e"]
    contrib = np.array([0.5, -0.2, 0.0, 2.0, -1.0])
    assert strongest_terms(variables, contrib) == (["d", "a"], ["e", "b"])  # a zero term is neither


def test_strongest_terms_stop_at_n():
    variables = list("abcdefgh")
    contrib = np.array([1.0, 8.0, 3.0, 5.0, -4.0, -2.0, -7.0, -6.0])
    assert strongest_terms(variables, contrib) == (["b", "d", "c"], ["g", "h", "e"])
    assert strongest_terms(variables, contrib, n=1) == (["b"], ["g"])
    assert strongest_terms(variables, -np.abs(contrib), n=2)[0] == []
