"""Minimal index permutations: checked by brute force, frozen, and chosen correctly."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest

from nstore.indices import MAX_ITEMS, choose_index, compute_permutations, minimal_permutations

SIZES = range(1, MAX_ITEMS + 1)


def subsets(n: int) -> list[frozenset[int]]:
    return [frozenset(c) for k in range(n + 1) for c in combinations(range(n), k)]


@pytest.mark.parametrize("n", SIZES)
def test_every_subset_is_the_prefix_set_of_some_permutation(n: int) -> None:
    perms = minimal_permutations(n)
    prefix_sets = {frozenset(perm[:k]) for perm in perms for k in range(n + 1)}
    missing = [sorted(s) for s in subsets(n) if s not in prefix_sets]
    assert not missing, f"n={n}: no index has these bound positions as a prefix: {missing[:5]}"


@pytest.mark.parametrize("n", SIZES)
def test_count_is_n_choose_half(n: int) -> None:
    perms = minimal_permutations(n)
    assert len(perms) == comb(n, n // 2)
    assert len(set(perms)) == len(perms)


def test_counts_quoted_by_the_design() -> None:
    assert [len(minimal_permutations(n)) for n in (3, 4, 5, 6)] == [3, 6, 10, 20]


@pytest.mark.parametrize("n", SIZES)
def test_each_is_a_permutation_and_index_zero_is_identity(n: int) -> None:
    perms = minimal_permutations(n)
    assert all(sorted(perm) == list(range(n)) for perm in perms)
    assert perms[0] == tuple(range(n))


@pytest.mark.parametrize("n", SIZES)
def test_frozen_lists_equal_the_algorithm(n: int) -> None:
    # The frozen lists are the file format; the algorithm must still produce them.
    assert list(minimal_permutations(n)) == compute_permutations(n)


def test_frozen_list_for_quads_is_pinned() -> None:
    # Changing this breaks every existing quad store: index numbers are stored in keys.
    assert minimal_permutations(4) == (
        (0, 1, 2, 3), (0, 2, 3, 1), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2), (3, 1, 2, 0),
    )


@pytest.mark.parametrize("n", [0, MAX_ITEMS + 1, -1])
def test_unsupported_sizes_raise(n: int) -> None:
    with pytest.raises(ValueError, match=str(n)):
        minimal_permutations(n)


@pytest.mark.parametrize("n", SIZES)
def test_choose_index_covers_all_bound_positions(n: int) -> None:
    perms = minimal_permutations(n)
    for bound in subsets(n):
        number, length = choose_index(perms, bound)
        assert length == len(bound), (n, sorted(bound))
        assert set(perms[number][:length]) == bound, (n, sorted(bound), perms[number])


def test_choose_index_with_an_incomplete_cover_takes_the_longest_prefix() -> None:
    perms = [(0, 1, 2), (2, 1, 0)]
    assert choose_index(perms, {0, 2}) == (0, 1)  # no index leads with {0, 2}: best is 1 long
    assert choose_index(perms, {1, 2}) == (1, 2)
    assert choose_index(perms, []) == (0, 0)
