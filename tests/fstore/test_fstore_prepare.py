"""fstore.prepare: a read planned once and run with new values gives what fstore.quads
gives with those values in place, on views and inside a write transaction."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, Literal, Param, Var
from nstore.errors import PackError, PatternError

from tests.query_fixtures import fstore_repo
from tests.profiles import examples

NODES = [IRI(f"urn:n{i}") for i in range(4)]
PREDICATES = [IRI("urn:p"), IRI("urn:q")]
values = st.one_of(st.sampled_from(NODES), st.integers(0, 3), st.sampled_from(["a", "b"]))
quads = st.lists(st.tuples(st.sampled_from([None, IRI("urn:g")]), st.sampled_from(NODES), st.sampled_from(PREDICATES), values),
                 max_size=25)
# Which positions are params, variables or constants.
shapes = st.tuples(*[st.sampled_from(["param", "var", "const"])] * 4)


def build(shape, constants):
    return [Param() if kind == "param" else Var(f"v{i}") if kind == "var" else constants[i] for i, kind in enumerate(shape)]


@settings(max_examples=examples(80), deadline=None)
@given(quads, quads, shapes, st.tuples(st.sampled_from([None, IRI("urn:g")]), st.sampled_from(NODES), st.sampled_from(PREDICATES), values))
def test_prepared_reads_equal_quads(first, pending, shape, constants):
    pattern = build(shape, constants)
    choices = [[None, IRI("urn:g")], NODES, PREDICATES, NODES + [0, 1, "a", Literal("1", IRI("http://www.w3.org/2001/XMLSchema#integer"))]]
    param_positions = [i for i, kind in enumerate(shape) if kind == "param"]
    param_values = list(itertools.islice(itertools.product(*[choices[i] for i in param_positions]), 12))

    def filled(values):
        quad = list(pattern)
        for position, value in zip(param_positions, values):
            quad[position] = value
        return quad

    with fstore_repo(first) as repo:
        view = repo.at("main")
        for terms in (False, True):
            read = fstore.prepare(view, *pattern, terms=terms)
            for values in param_values:
                assert list(read(*values)) == list(fstore.quads(view, *filled(values), terms=terms))
        with repo.transaction("main", message="more", allow_empty=True) as tx:
            for quad in pending:
                fstore.add(tx, *quad)
            fstore.rm(tx, *constants)
            read = fstore.prepare(tx, *pattern)
            for values in param_values:
                assert sorted(map(repr, read(*values))) == sorted(map(repr, fstore.quads(tx, *filled(values))))


def test_prepared_read_in_a_pinned_view_and_after(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="m") as tx:
        fstore.add(tx, None, NODES[0], PREDICATES[0], 1)
    view = repo.at("main")
    with view.reading() as pinned:
        read = fstore.prepare(pinned, None, Param(), PREDICATES[0], Var("o"))
        assert [q[3].value for q in read(NODES[0])] == [1]
    assert [q[3].value for q in read(NODES[0])] == [1]  # the block ended: a transaction per read
    with pytest.raises(PackError, match="pattern object"):
        fstore.prepare(view, None, Param(), PREDICATES[0], object())
    with pytest.raises(PackError, match="param"):
        read(object())
    with pytest.raises(PatternError, match="fstore.prepare"):
        list(fstore.quads(view, None, Param(), PREDICATES[0], Var("o")))
    repo.close()
