"""Deterministic generated quads for the benchmarks: graphs, subjects and predicates drawn
from fixed pools, objects half IRIs and half literals."""

from __future__ import annotations

import random
from typing import Iterator

from nstore.terms import IRI, Literal

__all__ = ["generate_quads"]


def generate_quads(count: int, *, graphs: int = 10, subjects: int = 100_000, predicates: int = 50,
                   seed: int = 7) -> Iterator[tuple]:
    """``count`` distinct quads (graph, subject, predicate, object) as datae values."""
    rng = random.Random(seed)
    graph_pool = [IRI(f"http://example.org/graph/{i}") for i in range(graphs)]
    subject_pool = [IRI(f"http://example.org/resource/{i}") for i in range(subjects)]
    predicate_pool = [IRI(f"http://example.org/vocab#p{i}") for i in range(predicates)]
    for i in range(count):
        graph = graph_pool[i % graphs]
        subject = subject_pool[rng.randrange(subjects)]
        predicate = predicate_pool[rng.randrange(predicates)]
        if i % 2:
            obj = IRI(f"http://example.org/resource/o{i}")
        else:
            obj = Literal(f"literal value {i}", lang="en") if i % 4 == 0 else Literal(f"{i}")
        yield graph, subject, predicate, obj
