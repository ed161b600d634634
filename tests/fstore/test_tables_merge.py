"""Cell-wise merges of tables: policies, schema merges, and a hypothesis state machine that
checks table operations and merges on two branches against a naive model (a dict from
primary key to row per commit, merged cell by cell)."""

from __future__ import annotations

import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import fstore
import fstore.tables as tables
from fstore.tables.row_merge import RowConflict, SchemaConflict, merge_cells, merge_schemas
from tests.profiles import examples

SCHEMA = [
    {"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
    {"id": "a", "name": "a", "dataType": "text"},
    {"id": "b", "name": "b", "dataType": "integer"},
]
CELLS = ("a", "b")


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="base") as tx:
        t = tables.create(tx, "t", SCHEMA)
        for k in range(4):
            t.insert({"k": k, "a": f"a{k}", "b": k})
    repo.branch("dev")
    yield repo
    repo.close()


def rows(repo, ref="main"):
    return {r["k"]: r for r in repo.at(ref).table("t").rows()}


def test_different_cells_of_one_row_merge(repo):
    with repo.transaction("main", message="ours") as tx:
        tx.table("t").update({"k": 1, "a": "ours"})
    with repo.transaction("dev", message="theirs") as tx:
        tx.table("t").update({"k": 1, "b": 100})
    repo.merge("main", "dev")
    assert rows(repo)[1] == {"k": 1, "a": "ours", "b": 100}
    assert repo.verify() == []


def test_policies_and_callable(repo):
    with repo.transaction("main", message="ours") as tx:
        t = tx.table("t")
        t.update({"k": 1, "a": "ours", "b": 10})
        t.delete(2)
    with repo.transaction("dev", message="theirs") as tx:
        t = tx.table("t")
        t.update({"k": 1, "a": "theirs"})
        t.update({"k": 2, "b": 20})
        t.insert({"k": 9, "a": "new"})
    with pytest.raises(fstore.MergeConflict) as info:
        repo.merge("main", "dev")
    found = {c.pk: (c.kind, c.cells) for c in info.value.conflicts}
    assert found == {(1,): ("update/update", {"a": ("a1", "ours", "theirs")}),
                     (2,): ("delete/update", {"b": (2, None, 20)})}
    assert "table 't', row 1: update/update" in str(info.value)
    repo.branch("try-ours", "main")
    repo.merge("try-ours", "dev", policy="ours")
    assert rows(repo, "try-ours") == {0: {"k": 0, "a": "a0", "b": 0}, 1: {"k": 1, "a": "ours", "b": 10},
                                      3: {"k": 3, "a": "a3", "b": 3}, 9: {"k": 9, "a": "new", "b": None}}
    repo.branch("try-theirs", "main")
    repo.merge("try-theirs", "dev", policy="theirs")
    assert rows(repo, "try-theirs")[1] == {"k": 1, "a": "theirs", "b": 10}  # cell-wise: b from ours
    assert rows(repo, "try-theirs")[2] == {"k": 2, "a": "a2", "b": 20}
    seen = []

    def decide(conflict):
        seen.append(conflict)
        assert isinstance(conflict, RowConflict)
        if conflict.kind == "delete/update":
            return None
        return {**conflict.ours, "a": conflict.ours["a"] + "+" + conflict.theirs["a"]}

    repo.merge("main", "dev", policy=decide)
    assert len(seen) == 2 and rows(repo)[1]["a"] == "ours+theirs" and 2 not in rows(repo)
    assert repo.verify() == []


def test_compatible_schema_changes_merge(repo):
    with repo.transaction("main", message="ours adds x") as tx:
        t = tx.table("t")
        t.alter(t.schema.add_column("x", "text", id="x"))
        t.update({"k": 1, "x": "ours-x", "a": "ours"})
    with repo.transaction("dev", message="theirs adds y, renames b") as tx:
        t = tx.table("t")
        t.alter(t.schema.add_column("y", "integer", id="y").rename_column("b", "bee"))
        t.update({"k": 1, "y": 7})
        t.update({"k": 3, "bee": 33})
    repo.merge("main", "dev")
    t = repo.at("main").table("t")
    assert t.schema.column_names == ["k", "a", "bee", "x", "y"]
    assert t.get(1) == {"k": 1, "a": "ours", "bee": 1, "x": "ours-x", "y": 7}
    assert t.get(3) == {"k": 3, "a": "a3", "bee": 33, "x": None, "y": None}
    assert t.schema.legend.name in {k[len("legend/"):] for k in t.meta if k.startswith("legend/")}
    assert repo.verify() == []


def test_incompatible_schema_changes_conflict(repo):
    with repo.transaction("main", message="ours") as tx:
        t = tx.table("t")
        t.alter(t.schema.rename_column("a", "alpha"))
    with repo.transaction("dev", message="theirs") as tx:
        t = tx.table("t")
        t.alter(t.schema.rename_column("a", "aleph").drop_column("b"))
    before = repo.head("main")
    with pytest.raises(fstore.MergeConflict) as info:
        repo.merge("main", "dev")
    (conflict,) = info.value.conflicts
    assert isinstance(conflict, SchemaConflict) and conflict.table == "t"
    assert conflict.columns == {"alpha": "renamed differently on each side ('alpha' / 'aleph')"}
    assert repo.head("main") == before
    repo.merge("main", "dev", policy="theirs")
    assert repo.at("main").table("t").schema.column_names == ["k", "aleph"]


def test_merge_schemas_rules():
    from fstore.tables import Schema

    base = Schema.from_dicts(SCHEMA)
    assert merge_schemas(base, base, base.drop_column("b"))[0].column_names == ["k", "a"]
    merged, problems = merge_schemas(base, base.drop_column("b"), base.change_type("b", "float"))
    assert merged is None and problems == {"b": "dropped on one side, changed by theirs"}
    ours = base.move_column("b", 1)
    merged, problems = merge_schemas(base, ours, base.add_column("c", "text", id="c"))
    assert merged.column_names == ["k", "b", "a", "c"] and not problems
    assert merge_cells([1, 2], [1, 3], [4, 2]) == ([4, 3], [], None)
    assert merge_cells([1, 2], [1, 3], [1, 4]) == ([1, 3], [1], "update/update")
    assert merge_cells([1], [1.0], [1]) == ([1.0], [], None)  # 1.0 is a change from 1


# -- the model ---------------------------------------------------------------------------

KEYS = st.integers(0, 4)
VALUES = {"a": st.sampled_from(["x", "y", "z", None]), "b": st.sampled_from([0, 1, 2, None])}
ROWS = st.fixed_dictionaries({"a": VALUES["a"], "b": VALUES["b"]})
OPS = st.lists(st.one_of(
    st.tuples(st.just("upsert"), KEYS, ROWS),
    st.tuples(st.just("update"), KEYS, st.sampled_from(CELLS).flatmap(lambda c: st.tuples(st.just(c), VALUES[c]))),
    st.tuples(st.just("delete"), KEYS, st.none()),
), min_size=1, max_size=5)


def model_merge(base, ours, theirs, policy):
    """The expected merge: (rows, conflicting pks)."""
    out, conflicts = {}, set()
    for k in set(base) | set(ours) | set(theirs):
        b, o, t = base.get(k), ours.get(k), theirs.get(k)
        if o == t:
            r = o
        elif o == b:
            r = t
        elif t == b:
            r = o
        elif b is None or o is None or t is None:
            conflicts.add(k)
            r = o if policy == "ours" else t
        else:
            r = {}
            for c in CELLS:
                if o[c] == b[c]:
                    r[c] = t[c]
                elif t[c] == b[c] or o[c] == t[c]:
                    r[c] = o[c]
                else:
                    conflicts.add(k)
                    r[c] = o[c] if policy == "ours" else t[c]
        if r is not None:
            out[k] = r
    return out, conflicts


class TableMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="datae-tables-model-")
        self.repo = fstore.open(self.dir)
        with self.repo.transaction("main", message="create") as tx:
            tables.create(tx, "t", SCHEMA)
        head = self.repo.head("main")
        self.order = [head]
        self.parents = {head: []}
        self.state = {head: {}}
        self.repo.branch("dev")

    def teardown(self):
        if hasattr(self, "repo"):
            self.repo.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    def ancestors(self, c):
        seen, stack = {c}, [c]
        while stack:
            for p in self.parents[stack.pop()]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return seen

    @rule(branch=st.sampled_from(["main", "dev"]), ops=OPS)
    def write(self, branch, ops):
        head = self.repo.head(branch)
        model = {k: dict(v) for k, v in self.state[head].items()}
        with self.repo.transaction(branch, message="w") as tx:
            t = tx.table("t")
            for op, k, arg in ops:
                if op == "upsert":
                    t.upsert({"k": k, **arg})
                    model[k] = dict(arg)
                elif op == "update" and k in model:
                    t.update({"k": k, arg[0]: arg[1]})
                    model[k][arg[0]] = arg[1]
                elif op == "delete" and k in model:
                    t.delete(k)
                    del model[k]
        if model == self.state[head]:
            assert tx.commit_id is None
        else:
            assert tx.commit_id is not None
            self.add(tx.commit_id, [head], model)

    def add(self, commit, parents, state):
        self.order.append(commit)
        self.parents[commit] = parents
        self.state[commit] = state

    @rule(direction=st.booleans(), policy=st.sampled_from(["abort", "ours", "theirs"]))
    def merge(self, direction, policy):
        into, other = ("main", "dev") if direction else ("dev", "main")
        ours, theirs = self.repo.head(into), self.repo.head(other)
        anc_o, anc_t = self.ancestors(ours), self.ancestors(theirs)
        if theirs in anc_o:
            assert self.repo.merge(into, other, policy=policy) == ours
            return
        if ours in anc_t:
            assert self.repo.merge(into, other, policy=policy) == theirs
            return
        base = max(anc_o & anc_t, key=self.order.index)
        expected, conflicts = model_merge(self.state[base], self.state[ours], self.state[theirs], policy)
        if conflicts and policy == "abort":
            with pytest.raises(fstore.MergeConflict) as info:
                self.repo.merge(into, other, policy=policy)
            assert {c.pk[0] for c in info.value.conflicts} == conflicts
            assert self.repo.head(into) == ours
            return
        merged = self.repo.merge(into, other, policy=policy)
        self.add(merged, [ours, theirs], expected)

    @invariant()
    def branches_read_as_model(self):
        if not hasattr(self, "repo"):
            return
        for branch in ("main", "dev"):
            head = self.repo.head(branch)
            t = self.repo.at(branch).table("t")
            assert {r["k"]: {c: r[c] for c in CELLS} for r in t.rows()} == self.state[head]
        a, b = self.repo.head("main"), self.repo.head("dev")
        d = self.repo.table_diff(a, b, "t")
        sa, sb = self.state[a], self.state[b]
        assert sorted(r["k"] for r in d.inserted) == sorted(set(sb) - set(sa))
        assert sorted(r["k"] for r in d.deleted) == sorted(set(sa) - set(sb))
        assert sorted(u.pk[0] for u in d.updated) == sorted(k for k in set(sa) & set(sb) if sa[k] != sb[k])

    @precondition(lambda self: hasattr(self, "repo"))
    @rule()
    def verify(self):
        assert self.repo.verify() == []


TableMachine.TestCase.settings = settings(max_examples=examples(60), stateful_step_count=15, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_table_model = TableMachine.TestCase
