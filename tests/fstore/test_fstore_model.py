"""The versioned store against a naive model: commit id -> frozenset of quads.

Random transactions on random branches, forks and merges with every policy; after every
step, every commit ever made is queried with random patterns and compared with the model,
as are diff, log, history and blame.
"""

from __future__ import annotations

import datetime
import hashlib

import shutil
import tempfile
from itertools import product

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import fstore
from fstore import IRI, Literal, Var
from nstore.pack import pack
from tests.profiles import examples

GRAPHS = [None, IRI("urn:g1")]
SUBJECTS = [IRI("urn:s1"), IRI("urn:s2")]
PREDICATES = [IRI("urn:p1"), IRI("urn:p2")]
OBJECTS = [1, "a", IRI("urn:o1"), Literal("x", lang="en"), "long " * 60]
ALL_QUADS = [tuple(q) for q in product(GRAPHS, SUBJECTS, PREDICATES, OBJECTS)]
BY_KEY = {pack(*q): q for q in ALL_QUADS}

quads = st.sampled_from(ALL_QUADS)
ops = st.lists(st.tuples(st.booleans(), quads), min_size=1, max_size=8)
patterns = st.tuples(*(st.one_of(st.just(Var(n)), st.sampled_from(pool)) for n, pool in
                       zip("gspo", (GRAPHS, SUBJECTS, PREDICATES, OBJECTS))))


def key(quad) -> bytes:
    """A quad's bytes whether its items are written values or the RDF terms reads give."""
    return pack(*map(fstore.canonical, quad))


def state_digest(state: frozenset[bytes]) -> str:
    """docs/format.md's state digest of the quads of a state, with nothing but hashlib."""
    total = sum(int.from_bytes(hashlib.sha256(k).digest(), "big") for k in state)
    return (total % (1 << 256)).to_bytes(32, "big").hex()


def fits(pattern, quad) -> bool:
    return all(type(p) is Var or pack(p) == pack(v) for p, v in zip(pattern, quad))


class Model:
    """Commits in significance order, their parents and states; branches."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.parents: dict[str, list[str]] = {}
        self.state: dict[str, frozenset[bytes]] = {}
        self.branches: dict[str, str | None] = {"main": None}

    def ancestors(self, commit: str | None) -> set[str]:
        if commit is None:
            return set()
        seen, stack = {commit}, [commit]
        while stack:
            for parent in self.parents[stack.pop()]:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return seen

    def at(self, commit: str | None) -> frozenset[bytes]:
        return frozenset() if commit is None else self.state[commit]

    def add_commit(self, commit: str, parents: list[str], state: frozenset[bytes]) -> None:
        assert commit not in self.state, "commit ids must be unique"
        self.order.append(commit)
        self.parents[commit] = parents
        self.state[commit] = state

    def merge_base(self, a: str, b: str) -> str | None:
        common = self.ancestors(a) & self.ancestors(b)
        return max(common, key=self.order.index) if common else None


def objects(state: frozenset[bytes], gsp: bytes) -> frozenset[bytes]:
    return frozenset(k for k in state if pack(*BY_KEY[k][:3]) == gsp)


def three_way(base, ours, theirs, policy):
    """Merged state and conflicting (g, s, p) keys, by the rule of the issue."""
    groups = {pack(*BY_KEY[k][:3]) for k in base | ours | theirs}
    merged: set[bytes] = set()
    conflicts = []
    for gsp in groups:
        b, o, t = objects(base, gsp), objects(ours, gsp), objects(theirs, gsp)
        if o == b:
            merged |= t
        elif t == b or o == t:
            merged |= o
        else:
            conflicts.append(gsp)
            if policy == "ours":
                merged |= o
            elif policy == "theirs":
                merged |= t
            elif policy == "union":
                merged |= o | t
    return frozenset(merged), sorted(conflicts)


def union_policy(conflict):
    return list(conflict.ours) + list(conflict.theirs)


class VersionedStore(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="datae-model-")
        self.repo = fstore.open(self.dir)
        self.model = Model()
        self.tick = 0

    def teardown(self) -> None:
        self.repo.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    branch_names = st.sampled_from(["main", "dev", "feature/x", "fix"])

    @initialize(changes=ops, forks=st.sets(st.sampled_from(["dev", "feature/x"])))
    def start(self, changes, forks) -> None:
        """A first commit on main, and branches forked from it (so merges have a base)."""
        assert self.repo.branches() == {"main": None}
        self.transact("main", changes, False)
        for name in sorted(forks):
            self.fork(name, "main")

    @rule(data=st.data(), action=st.sampled_from(["transact"] * 4 + ["fork", "fork at a commit", "delete", "gc"] + ["merge"] * 3))
    def step(self, data, action) -> None:
        """One change to the store, then the checks of every commit against the model."""
        if action == "transact":
            self.transact(data.draw(self.branch_names), data.draw(ops), data.draw(st.booleans()))
        elif action == "fork":
            self.fork(data.draw(self.branch_names), data.draw(self.branch_names))
        elif action == "fork at a commit":
            if self.model.order:
                self.fork_at(data.draw(self.branch_names), data.draw(st.sampled_from(self.model.order)))
        elif action == "delete":
            self.delete(data.draw(self.branch_names))
        elif action == "gc":
            self.gc(data.draw(st.booleans()))
        else:
            policy = data.draw(st.sampled_from(["abort", "ours", "theirs", "union"]))
            self.merge(data.draw(self.branch_names), data.draw(self.branch_names), policy)
        if self.model.order:
            self.query_every_commit(data)
            self.diff_two_commits(data)
            self.history_and_blame(data)

    def transact(self, branch, changes, fail) -> None:
        if branch not in self.model.branches:
            return
        head = self.model.branches[branch]
        before = self.model.at(head)
        state = set(before)
        try:
            with self.repo.transaction(branch, message=f"t{self.tick}", author="model") as tx:
                for alive, quad in changes:
                    (fstore.add if alive else fstore.rm)(tx, *quad)
                    (state.add if alive else state.discard)(key(quad))
                    # reads inside the transaction see its own writes
                    assert fstore.ask(tx, *quad) == alive
                    assert [pack(g) for g in fstore.graphs(tx)] == sorted({pack(BY_KEY[k][0]) for k in state})
                if fail:
                    raise RuntimeError("abort")
        except RuntimeError:
            assert self.repo.head(branch) == head
            return
        finally:
            self.tick += 1
        new = frozenset(state)
        if new == before:
            assert tx.commit_id is None
            assert self.repo.head(branch) == head
        else:
            assert tx.commit_id is not None
            self.model.add_commit(tx.commit_id, [head] if head else [], new)
            self.model.branches[branch] = tx.commit_id

    def fork(self, name, start) -> None:
        if name in self.model.branches or start not in self.model.branches:
            return
        self.repo.branch(name, start)
        self.model.branches[name] = self.model.branches[start]

    def fork_at(self, name, commit) -> None:
        """A branch started at any commit (not a branch head): it shares a snapshot it
        reads through an overlay."""
        if name in self.model.branches:
            return
        self.repo.branch(name, commit)
        self.model.branches[name] = commit

    def delete(self, name) -> None:
        """Delete a branch (never main, the current one): its commits stay readable by id,
        and the branches that shared its snapshot read on."""
        if name not in self.model.branches or name == "main":
            return
        self.repo.delete_branch(name)
        del self.model.branches[name]

    def gc(self, now: bool) -> None:
        """gc: with the reflog expired now, the commits no branch reaches are gone (and the
        model forgets them); else nothing is (deleted branches stay in the reflog)."""
        report = self.repo.gc(expire=datetime.timedelta(0) if now else datetime.timedelta(days=30))
        reachable = set().union(*(self.model.ancestors(head) for head in self.model.branches.values()))
        gone = [commit for commit in self.model.order if commit not in reachable]
        assert report.commits == (len(gone) if now else 0), (report, gone)
        if now:
            self.model.order = [commit for commit in self.model.order if commit in reachable]
            for commit in gone:
                with pytest.raises(fstore.UnknownRefError):
                    self.repo.at(commit)
        assert self.repo.verify() == []

    def merge(self, into, other, policy) -> None:
        model = self.model
        if into not in model.branches or other not in model.branches or into == other:
            return
        ours, theirs = model.branches[into], model.branches[other]
        call_policy = union_policy if policy == "union" else policy
        if theirs is None or theirs == ours or theirs in model.ancestors(ours):
            assert self.repo.merge(into, other, policy=call_policy) == ours
            return
        if ours is None or ours in model.ancestors(theirs):
            assert self.repo.merge(into, other, policy=call_policy) == theirs
            model.branches[into] = theirs
            return
        base = model.merge_base(ours, theirs)
        merged, conflicts = three_way(model.at(base), model.at(ours), model.at(theirs), policy)
        if conflicts and policy == "abort":
            with pytest.raises(fstore.MergeConflict) as caught:
                self.repo.merge(into, other, policy="abort")
            reported = sorted(pack(c.graph, c.subject, c.predicate) for c in caught.value.conflicts)
            assert reported == conflicts
            assert self.repo.head(into) == ours
            return
        commit = self.repo.merge(into, other, policy=call_policy, message=f"m{self.tick}")
        self.tick += 1
        model.add_commit(commit, [ours, theirs], merged)
        model.branches[into] = commit

    def query_every_commit(self, data) -> None:
        pattern = data.draw(patterns)
        for commit in self.model.order:
            view = self.repo.at(commit[: data.draw(st.integers(6, 64))])
            expected = sorted(k for k in self.model.state[commit] if fits(pattern, BY_KEY[k]))
            got = [key(tuple(b.get(n, p) for n, p in zip("gspo", pattern))) for b in fstore.from_(view, *pattern)]
            assert sorted(got) == expected, (commit, pattern)
            assert len(got) == len(set(got))
            assert fstore.count(view, *pattern) == len(expected)
            cap = data.draw(st.integers(0, 4))
            assert fstore.estimate(view, *pattern, cap) == min(cap, len(expected))
            graphs_alive = {pack(BY_KEY[k][0]) for k in self.model.state[commit]}
            assert [pack(g) for g in fstore.graphs(view)] == sorted(graphs_alive)
        for name, head in self.model.branches.items():  # a branch head reads as its commit
            expected = sorted(k for k in self.model.at(head) if fits(pattern, BY_KEY[k]))
            written = {BY_KEY[k] for k in expected}  # the plain values the model wrote
            with self.repo.at(name).reading() as view:
                got = sorted(key(q) for q in fstore.quads(view, *pattern))
                assert got == expected, (name, pattern)
                read = set(fstore.quads(view, *pattern, terms=True))
                assert read == written and written == read  # terms read equal values written

    def diff_two_commits(self, data) -> None:
        a = data.draw(st.sampled_from(self.model.order))
        b = data.draw(st.sampled_from(self.model.order))
        sa, sb = self.model.state[a], self.model.state[b]
        got = [(op, key(q)) for op, q in self.repo.diff(a, b)]
        expected = sorted([("+", k) for k in sb - sa] + [("-", k) for k in sa - sb], key=lambda x: x[1])
        assert got == expected

    def history_and_blame(self, data) -> None:
        model = self.model
        ref = data.draw(st.sampled_from(model.order))
        pattern = data.draw(patterns)
        expected = []
        for commit in sorted(model.ancestors(ref), key=model.order.index, reverse=True):
            parent = model.parents[commit][0] if model.parents[commit] else None
            before, after = model.at(parent), model.state[commit]
            changes = sorted([("+", k) for k in after - before if fits(pattern, BY_KEY[k])]
                             + [("-", k) for k in before - after if fits(pattern, BY_KEY[k])], key=lambda x: x[1])
            if changes:
                expected.append((commit, changes))
        got = [(c.id, sorted(((op, key(q)) for op, q in ch), key=lambda x: x[1])) for c, ch in self.repo.history(ref, *pattern)]
        assert got == expected

        expected_versions = {}
        for commit in model.ancestors(ref):
            for k in model.state[commit]:
                if fits(pattern, BY_KEY[k]):
                    expected_versions.setdefault(k, set()).add(commit)
        got_versions = {key(q): [c.id for c in commits] for q, commits in self.repo.versions(ref, *pattern)}
        assert {k: set(v) for k, v in got_versions.items()} == expected_versions
        for ids in got_versions.values():
            assert ids == sorted(ids, key=model.order.index)

        quad = data.draw(quads)
        blamed = self.repo.blame(ref, *quad)
        ancestry = model.ancestors(ref)
        if not any(key(quad) in model.state[c] for c in ancestry):
            assert blamed is None
            return
        assert blamed is not None and blamed.id in ancestry
        alive_at_ref = key(quad) in model.state[ref]
        assert (key(quad) in model.state[blamed.id]) == alive_at_ref
        parent_states = [key(quad) in model.state[p] for p in model.parents[blamed.id]] or [False]
        assert any(p != alive_at_ref for p in parent_states), "blame names a commit that changed the quad"
        if all(len(model.parents[c]) <= 1 for c in ancestry):
            # linear history: blame is the last commit that changed the quad
            changed = [c for c in ancestry if (key(quad) in model.state[c]) != any(
                key(quad) in model.state[p] for p in model.parents[c])]
            assert blamed.id == max(changed, key=model.order.index)

    @invariant()
    def branches_and_log(self) -> None:
        model = self.model
        assert self.repo.branches() == model.branches
        for name, head in model.branches.items():
            expected = sorted(model.ancestors(head), key=model.order.index, reverse=True)
            log = list(self.repo.log(name))
            assert [c.id for c in log] == expected
            for commit in log:
                parent = model.parents[commit.id][0] if model.parents[commit.id] else None
                assert list(commit.parents) == model.parents[commit.id]
                assert commit.added == len(model.state[commit.id] - model.at(parent))
                assert commit.removed == len(model.at(parent) - model.state[commit.id])
                # Equal content, equal digest, whatever the history (merges included).
                assert commit.digest == state_digest(model.state[commit.id]), commit


# The suite's costliest machine: 40 runs of 40 steps in make test, 4,000 in make test-deep.
VersionedStore.TestCase.settings = settings(
    max_examples=examples(40), stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestVersionedStore = VersionedStore.TestCase


def test_verify_after_random_history(tmp_path) -> None:
    """A short fixed history verifies clean; tampering with a commit record is reported."""
    repo = fstore.open(tmp_path / "repo")
    for i in range(3):
        with repo.transaction("main", message=f"c{i}") as tx:
            fstore.add(tx, None, IRI(f"urn:s{i}"), IRI("urn:p"), "x" * (300 * i + 1))
    assert repo.verify() == []
    repo.close()
