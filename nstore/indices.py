"""The minimal set of index permutations for an n-tuple store (SRFI-168).

For n items, ``minimal_permutations(n)`` holds C(n, n//2) permutations of ``range(n)`` such
that every set of bound positions is the prefix set of one of them, so any pattern is one
prefix scan. Which permutation an index number means is part of the file format, so the
lists are frozen here for n = 1..8 (``compute_permutations`` is the algorithm that made
them; the test suite checks both agree and that every list covers every subset).

>>> minimal_permutations(3)
((0, 1, 2), (1, 2, 0), (2, 0, 1))
>>> len(minimal_permutations(4)), len(minimal_permutations(6))
(6, 20)
"""

from __future__ import annotations

from itertools import combinations
from typing import Iterable, Sequence

__all__ = ["minimal_permutations", "compute_permutations", "choose_index", "MAX_ITEMS"]

MAX_ITEMS = 8

# Frozen: the index number of a permutation is its position in these lists (format v1).
_FROZEN: dict[int, tuple[tuple[int, ...], ...]] = {
    1: (
        (0,),
    ),
    2: (
        (0, 1), (1, 0),
    ),
    3: (
        (0, 1, 2), (1, 2, 0), (2, 0, 1),
    ),
    4: (
        (0, 1, 2, 3), (0, 2, 3, 1), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2),
        (3, 1, 2, 0),
    ),
    5: (
        (0, 1, 2, 3, 4), (0, 2, 3, 4, 1), (0, 3, 1, 4, 2), (1, 2, 3, 4, 0),
        (2, 3, 4, 0, 1), (3, 1, 4, 2, 0), (3, 4, 0, 1, 2), (4, 0, 1, 2, 3),
        (4, 1, 2, 3, 0), (4, 2, 0, 3, 1),
    ),
    6: (
        (0, 1, 2, 3, 4, 5), (0, 2, 3, 4, 5, 1), (0, 3, 1, 4, 5, 2), (0, 4, 1, 2, 5, 3),
        (0, 4, 2, 5, 3, 1), (1, 2, 3, 4, 5, 0), (2, 3, 4, 5, 0, 1), (2, 4, 1, 5, 3, 0),
        (3, 1, 4, 5, 2, 0), (3, 4, 5, 0, 1, 2), (3, 5, 2, 0, 4, 1), (4, 0, 3, 1, 5, 2),
        (4, 1, 5, 2, 3, 0), (4, 2, 5, 0, 3, 1), (4, 5, 0, 1, 2, 3), (5, 0, 1, 2, 3, 4),
        (5, 1, 2, 3, 4, 0), (5, 2, 0, 3, 4, 1), (5, 3, 0, 1, 4, 2), (5, 3, 1, 4, 2, 0),
    ),
    7: (
        (0, 1, 2, 3, 4, 5, 6), (0, 2, 3, 4, 5, 6, 1), (0, 3, 1, 4, 5, 6, 2),
        (0, 4, 1, 2, 5, 6, 3), (0, 4, 2, 5, 6, 3, 1), (0, 5, 1, 2, 3, 6, 4),
        (0, 5, 2, 3, 6, 4, 1), (0, 5, 3, 1, 6, 4, 2), (1, 2, 3, 4, 5, 6, 0),
        (2, 3, 4, 5, 6, 0, 1), (2, 4, 1, 5, 6, 3, 0), (2, 5, 1, 3, 6, 4, 0),
        (3, 1, 4, 5, 6, 2, 0), (3, 4, 5, 6, 0, 1, 2), (3, 5, 2, 6, 0, 4, 1),
        (3, 6, 2, 4, 0, 5, 1), (4, 0, 3, 5, 1, 6, 2), (4, 1, 5, 6, 2, 3, 0),
        (4, 2, 5, 6, 0, 3, 1), (4, 5, 6, 0, 1, 2, 3), (4, 6, 3, 0, 1, 5, 2),
        (5, 0, 4, 1, 2, 6, 3), (5, 1, 6, 2, 3, 4, 0), (5, 2, 6, 0, 3, 4, 1),
        (5, 3, 1, 6, 4, 2, 0), (5, 3, 6, 0, 1, 4, 2), (5, 6, 0, 1, 2, 3, 4),
        (6, 0, 1, 2, 3, 4, 5), (6, 1, 2, 3, 4, 5, 0), (6, 2, 0, 3, 4, 5, 1),
        (6, 3, 0, 1, 4, 5, 2), (6, 3, 1, 4, 5, 2, 0), (6, 4, 0, 1, 2, 5, 3),
        (6, 4, 1, 2, 5, 3, 0), (6, 4, 2, 0, 5, 3, 1),
    ),
    8: (
        (0, 1, 2, 3, 4, 5, 6, 7), (0, 2, 3, 4, 5, 6, 7, 1), (0, 3, 1, 4, 5, 6, 7, 2),
        (0, 4, 1, 2, 5, 6, 7, 3), (0, 4, 2, 5, 6, 7, 3, 1), (0, 4, 7, 3, 5, 1, 6, 2),
        (0, 5, 1, 2, 3, 6, 7, 4), (0, 5, 2, 3, 6, 7, 4, 1), (0, 5, 3, 1, 6, 7, 4, 2),
        (0, 6, 1, 2, 3, 4, 7, 5), (0, 6, 2, 3, 4, 7, 5, 1), (0, 6, 3, 1, 4, 7, 5, 2),
        (0, 6, 4, 1, 2, 7, 5, 3), (0, 6, 4, 2, 7, 5, 3, 1), (1, 2, 3, 4, 5, 6, 7, 0),
        (1, 5, 0, 4, 6, 2, 7, 3), (2, 3, 4, 5, 6, 7, 0, 1), (2, 4, 1, 5, 6, 7, 3, 0),
        (2, 5, 1, 3, 6, 7, 4, 0), (2, 6, 1, 3, 4, 7, 5, 0), (2, 6, 4, 1, 7, 5, 3, 0),
        (3, 1, 4, 5, 6, 7, 2, 0), (3, 4, 5, 6, 7, 0, 1, 2), (3, 5, 2, 6, 7, 0, 4, 1),
        (3, 6, 2, 4, 7, 0, 5, 1), (3, 7, 2, 4, 5, 0, 6, 1), (3, 7, 5, 2, 0, 6, 4, 1),
        (4, 0, 3, 5, 6, 1, 7, 2), (4, 0, 6, 3, 1, 7, 5, 2), (4, 1, 5, 6, 7, 2, 3, 0),
        (4, 2, 5, 6, 7, 0, 3, 1), (4, 5, 6, 7, 0, 1, 2, 3), (4, 6, 3, 1, 7, 5, 2, 0),
        (4, 6, 3, 7, 0, 1, 5, 2), (4, 7, 3, 5, 0, 1, 6, 2), (5, 0, 4, 6, 1, 2, 7, 3),
        (5, 1, 6, 7, 2, 3, 4, 0), (5, 2, 6, 7, 0, 3, 4, 1), (5, 3, 1, 6, 7, 4, 2, 0),
        (5, 3, 6, 7, 0, 1, 4, 2), (5, 6, 7, 0, 1, 2, 3, 4), (5, 7, 4, 0, 1, 2, 6, 3),
        (5, 7, 4, 1, 2, 6, 3, 0), (5, 7, 4, 2, 0, 6, 3, 1), (6, 0, 5, 1, 2, 3, 7, 4),
        (6, 0, 5, 2, 3, 7, 4, 1), (6, 0, 5, 3, 1, 7, 4, 2), (6, 1, 7, 2, 3, 4, 5, 0),
        (6, 2, 5, 1, 3, 7, 4, 0), (6, 2, 7, 0, 3, 4, 5, 1), (6, 3, 1, 7, 4, 5, 2, 0),
        (6, 3, 7, 0, 1, 4, 5, 2), (6, 4, 1, 7, 2, 5, 3, 0), (6, 4, 2, 7, 0, 5, 3, 1),
        (6, 4, 7, 0, 1, 2, 5, 3), (6, 7, 0, 1, 2, 3, 4, 5), (7, 0, 1, 2, 3, 4, 5, 6),
        (7, 1, 2, 3, 4, 5, 6, 0), (7, 2, 0, 3, 4, 5, 6, 1), (7, 3, 0, 1, 4, 5, 6, 2),
        (7, 3, 1, 4, 5, 6, 2, 0), (7, 3, 6, 2, 4, 0, 5, 1), (7, 4, 0, 1, 2, 5, 6, 3),
        (7, 4, 1, 2, 5, 6, 3, 0), (7, 4, 2, 0, 5, 6, 3, 1), (7, 5, 0, 1, 2, 3, 6, 4),
        (7, 5, 1, 2, 3, 6, 4, 0), (7, 5, 2, 0, 3, 6, 4, 1), (7, 5, 3, 0, 1, 6, 4, 2),
        (7, 5, 3, 1, 6, 4, 2, 0),
    ),}


def minimal_permutations(n: int) -> tuple[tuple[int, ...], ...]:
    """The frozen minimal index permutations for n items (1 <= n <= 8); index 0 is identity."""
    try:
        return _FROZEN[n]
    except KeyError:
        raise ValueError(f"n-tuple stores hold 1 to {MAX_ITEMS} items, not {n}") from None


def compute_permutations(n: int) -> list[tuple[int, ...]]:
    """Compute the minimal permutations by symmetric chain decomposition (the math.stackexchange
    answer quoted by the datae paper): for each (n//2)-subset, repeatedly pair an unbound
    position followed by a bound one, moving the pair outwards; sort the results."""
    result = []
    for chosen in combinations(range(n), n // 2):
        marked = [(i, i in chosen) for i in range(n)]
        head: list[int] = []
        tail: list[int] = []
        while True:
            for k in range(len(marked) - 1):
                if not marked[k][1] and marked[k + 1][1]:
                    head.append(marked[k + 1][0])
                    tail.append(marked[k][0])
                    marked = marked[k + 2 :] + marked[:k]
                    break
            else:
                break
        result.append(tuple(head[::-1] + [i for i, _ in marked] + tail[::-1]))
    return sorted(result)


def choose_index(permutations: Sequence[Sequence[int]], bound: Iterable[int]) -> tuple[int, int]:
    """Pick the index whose longest prefix lies within the bound positions.

    Returns ``(index_number, prefix_length)``; with a cover from ``minimal_permutations`` the
    prefix length always equals the number of bound positions.
    """
    bound_set = set(bound)
    best, best_len = 0, -1
    for number, perm in enumerate(permutations):
        length = 0
        while length < len(perm) and perm[length] in bound_set:
            length += 1
        if length > best_len:
            best, best_len = number, length
            if length == len(bound_set):
                break
    return best, best_len
