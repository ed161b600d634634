"""Branch and tag names: git's ref-name rules, and where refs live in the store.

A name must also never be read as something else: not ``HEAD`` (the current branch), not
a run of hex digits long enough to be a commit id prefix (``MIN_PREFIX``, 6), not a
qualified name (``refs/heads/NAME``, ``refs/tags/NAME``, ``refs/remotes/NAME``: what picks
one ref when a name is ambiguous), and not a name that looks like another one: it is in
Unicode NFC and holds no control, format (bidirectional overrides, zero-width), separator,
private-use or unassigned characters.

>>> check_ref_name("feature/x")
'feature/x'
>>> check_ref_name("bad..name")
Traceback (most recent call last):
...
fstore.errors.InvalidRefNameError: invalid ref name 'bad..name': it contains '..'
>>> check_ref_name("c0ffee")
Traceback (most recent call last):
...
fstore.errors.InvalidRefNameError: invalid ref name 'c0ffee': it looks like a commit id (6 or more hex digits)
>>> qualified("refs/tags/v1"), qualified("v1")
(('t', 'v1'), (None, 'v1'))
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from typing import TYPE_CHECKING, Iterator

from nstore.okvs import Transaction, prefix_end
from nstore.errors import PackError
from nstore.pack import pack, unpack

from .commits import MIN_PREFIX
from ..errors import InvalidRefNameError, RefExistsError, UnknownRefError

if TYPE_CHECKING:
    from .commits import CommitStore

__all__ = ["check_ref_name", "qualified", "qualify", "kind_name", "Refs", "BRANCH", "TAG", "REFLOG", "REMOTE",
           "REMOTE_URL"]

BRANCH = "b"
TAG = "t"
REFLOG = "r"
REMOTE = "m"  # remote-tracking branches, "REMOTE/BRANCH"
REMOTE_URL = "u"  # remotes: name -> URL
_FORBIDDEN_CHARS = set(" ~^:?*[\\\x7f")
_LOOKS_LIKE_AN_ID = re.compile(f"[0-9a-fA-F]{{{MIN_PREFIX},}}")
# Where a qualified name points: git's spelling, the one way to pick a ref by kind.
_QUALIFIERS = {"refs/heads/": BRANCH, "refs/tags/": TAG, "refs/remotes/": REMOTE}
_KIND_NAMES = {BRANCH: "branch", TAG: "tag", REMOTE: "remote-tracking branch"}
# Unicode categories a name may not hold: control, format (bidirectional overrides and
# isolates, zero-width joiners, soft hyphen), surrogate, private use, unassigned, and the
# separators (spaces other than " ", line and paragraph separators) that look like nothing.
_INVISIBLE = {"Cc": "a control", "Cf": "a format (invisible or bidirectional)", "Cs": "a surrogate",
              "Co": "a private-use", "Cn": "an unassigned", "Zs": "a space", "Zl": "a line separator",
              "Zp": "a paragraph separator"}


def _rule_broken(name: str) -> str | None:
    if not isinstance(name, str) or not name:
        return "it is empty"
    if name == "@":
        return "it is '@'"
    if name.startswith("-"):
        return "it starts with '-'"
    if any(ord(c) < 0x20 or c in _FORBIDDEN_CHARS for c in name):
        bad = next(c for c in name if ord(c) < 0x20 or c in _FORBIDDEN_CHARS)
        return f"it contains {bad!r}"
    for needle in ("..", "@{", "//"):
        if needle in name:
            return f"it contains {needle!r}"
    return _reads_as_another(name) or _git_rule_broken(name)


def _git_rule_broken(name: str) -> str | None:
    if name.startswith("/") or name.endswith("/"):
        return "it starts or ends with '/'"
    if name.endswith("."):
        return "it ends with '.'"
    for component in name.split("/"):
        if component.startswith("."):
            return f"component {component!r} starts with '.'"
        if component.endswith(".lock"):
            return f"component {component!r} ends with '.lock'"
    return None

def _reads_as_another(name: str) -> str | None:
    """Why ``name`` would be read as another name or as a commit, if it would."""
    if name == "HEAD":
        return "it is 'HEAD', which names the current branch"
    if _LOOKS_LIKE_AN_ID.fullmatch(name):
        return f"it looks like a commit id ({MIN_PREFIX} or more hex digits)"
    if any(name.startswith(prefix) for prefix in _QUALIFIERS):
        return "it starts with 'refs/', which picks a ref by kind (refs/heads/NAME, refs/tags/NAME)"
    for char in name:
        what = _INVISIBLE.get(unicodedata.category(char))
        if what is not None:
            return f"it contains U+{ord(char):04X} {unicodedata.name(char, '')}, {what} character".replace(" ,", ",")
    if not unicodedata.is_normalized("NFC", name):
        return f"it is not in Unicode NFC, which spells it {unicodedata.normalize('NFC', name)!r}"
    return None


def check_ref_name(name: str, *, what: str = "") -> str:
    """Return ``name`` if it is a valid branch or tag name (git's rules, and the ones
    above), else raise :class:`InvalidRefNameError` saying why; ``what`` says whose name
    it is in the message (e.g. ``"a branch of remote 'origin'"``)."""
    rule = _rule_broken(name)
    if rule is not None:
        whose = f" ({what})" if what else ""
        raise InvalidRefNameError(f"invalid ref name {name!r}{whose}: {rule}")
    return name


def qualified(ref: str) -> tuple[str | None, str]:
    """``(kind, name)`` of a qualified ref (``refs/heads/x``: ``(BRANCH, "x")``), or
    ``(None, ref)`` for a plain one."""
    for prefix, kind in _QUALIFIERS.items():
        if ref.startswith(prefix):
            return kind, ref[len(prefix):]
    return None, ref


def qualify(kind: str, name: str) -> str:
    """The qualified spelling of a ref: ``qualify(TAG, "v1") == "refs/tags/v1"``."""
    return next(prefix for prefix, k in _QUALIFIERS.items() if k == kind) + name


def kind_name(kind: str) -> str:
    """``"branch"``, ``"tag"`` or ``"remote-tracking branch"``."""
    return _KIND_NAMES[kind]


class Refs:
    """Branches and tags: ``pack(kind, name) -> pack(commit seq, commit id)`` (or
    ``pack(None)``: a branch with no commits). The id is redundant for reads, which take
    the seq; it is there so that verify can tell a damaged seq, which would silently move
    the ref to another commit (stores written before it hold ``pack(seq)`` alone).
    ``commits`` gives the id of a seq; without it, refs can be read but not written."""

    def __init__(self, commits: CommitStore | None = None) -> None:
        self._commits = commits

    def _value(self, tx: Transaction, seq: int | None) -> bytes:
        if seq is None:
            return pack(None)
        if self._commits is None:
            raise TypeError("Refs() without a CommitStore reads refs only")
        return pack(seq, self._commits.id_of(tx, seq))

    def get(self, tx: Transaction, kind: str, name: str) -> tuple[bool, int | None]:
        """``(exists, head seq)``; a branch with no commits yet has head None."""
        raw = tx.get(pack(kind, name))
        if raw is None:
            return False, None
        return True, unpack(raw)[0]

    def head(self, tx: Transaction, branch: str) -> int | None:
        exists, seq = self.get(tx, BRANCH, branch)
        if not exists:
            raise UnknownRefError(f"no branch named {branch!r}")
        return seq

    def set(self, tx: Transaction, kind: str, name: str, seq: int | None) -> None:
        """Point a ref at ``seq``; a new ref's name must pass :func:`check_ref_name` (an
        existing one moves whatever its name: a store can hold names older rules let in)."""
        key = pack(kind, name)
        if tx.get(key) is None:
            check_ref_name(name)
        tx.set(key, self._value(tx, seq))

    def create(self, tx: Transaction, kind: str, name: str, seq: int | None) -> None:
        """Create a branch or tag; refused if it exists, or if a ref of another kind has
        its name or the name starts with ``REMOTE/`` for a remote here (the name would be
        ambiguous)."""
        check_ref_name(name)
        if self.get(tx, kind, name)[0]:
            raise RefExistsError(f"a {kind_name(kind)} named {name!r} already exists")
        other, remote = self.clash(tx, kind, name)
        if other is not None:
            raise RefExistsError(f"a {kind_name(other)} named {name!r} already exists: a {kind_name(kind)} of "
                                 f"that name would make {name!r} ambiguous")
        if remote is not None:  # a later fetch would bring a remote-tracking branch of that name
            raise RefExistsError(f"{name!r} starts with the name of remote {remote!r}: a {kind_name(kind)} of that "
                                 f"name could be ambiguous with its remote-tracking branches")
        tx.set(pack(kind, name), self._value(tx, seq))  # the name is checked and new: set() need not look again

    def clash(self, tx: Transaction, kind: str, name: str) -> tuple[str | None, str | None]:
        """What a new ref of ``kind`` named ``name`` would be ambiguous with: ``(the other
        kind of ref that has the name, None)``, ``(None, a remote whose "R/" starts the
        name)``, or ``(None, None)``."""
        for other in (TAG if kind == BRANCH else BRANCH, REMOTE):
            if self.get(tx, other, name)[0]:
                return other, None
        return None, next((r for r in self.remotes(tx) if name.startswith(r + "/")), None)

    def delete(self, tx: Transaction, kind: str, name: str, *, log: bool = True) -> None:
        """Delete a ref; its last commit stays reachable from the reflog until gc expires
        the entry (see :meth:`reflog`), unless ``log`` is False (a remote-tracking ref)."""
        exists, seq = self.get(tx, kind, name)
        if not exists:
            what = {BRANCH: "branch", TAG: "tag"}.get(kind, "ref")
            raise UnknownRefError(f"no {what} named {name!r}")
        tx.delete(pack(kind, name))
        if log and seq is not None:
            self.log(tx, kind, name, seq)

    def log(self, tx: Transaction, kind: str, name: str, seq: int) -> None:
        """Record in the reflog that ref ``name`` left commit ``seq`` (deleted or forced)."""
        when = _dt.datetime.now(_dt.timezone.utc).isoformat()
        tx.set(pack(REFLOG, when, kind, name), self._value(tx, seq))

    def forget_remote_state(self, tx: Transaction) -> None:
        """Drop every remote, remote-tracking branch and reflog entry (a clone made by
        copying another store's file starts without that store's own)."""
        for kind in (REMOTE_URL, REMOTE, REFLOG):
            start = pack(kind)
            for key, _ in list(tx.range(start, prefix_end(start))):
                tx.delete(key)

    def remotes(self, tx: Transaction) -> dict[str, str]:
        """Every remote and its URL."""
        start = pack(REMOTE_URL)
        return {unpack(key)[1]: value.decode("utf-8") for key, value in tx.range(start, prefix_end(start))}

    def set_remote(self, tx: Transaction, name: str, url: str | None) -> None:
        """Add (or change) remote ``name``; None removes it and its remote-tracking refs."""
        if url is not None:
            tx.set(pack(REMOTE_URL, name), url.encode("utf-8"))
            return
        tx.delete(pack(REMOTE_URL, name))
        for ref, _ in list(self.items(tx, REMOTE)):
            if ref.startswith(name + "/"):
                tx.delete(pack(REMOTE, ref))

    def reflog(self, tx: Transaction) -> list[tuple[_dt.datetime, str, str, int]]:
        """The deleted refs' last commits, oldest first: ``(when, kind, name, seq)``. As
        git's reflog, it keeps what a deleted branch or tag reached from gc for a while."""
        start = pack(REFLOG)
        return [(_dt.datetime.fromisoformat(when), kind, name, unpack(value)[0])
                for (_, when, kind, name), value in ((unpack(key), value) for key, value in tx.range(start, prefix_end(start)))]

    def expire_reflog(self, tx: Transaction, before: _dt.datetime) -> int:
        """Drop the reflog entries made before ``before``; returns how many."""
        dropped = 0
        for when, kind, name, _ in self.reflog(tx):
            if when < before:
                tx.delete(pack(REFLOG, when.isoformat(), kind, name))
                dropped += 1
        return dropped

    def items(self, tx: Transaction, kind: str, *, skip_damaged: bool = False) -> Iterator[tuple[str, int | None]]:
        """Every ref of ``kind``: ``(name, seq)``; with ``skip_damaged``, leaving out those
        whose key or value does not unpack (verify reports them, see :meth:`problems`)."""
        start = pack(kind)
        for key, value in tx.range(start, prefix_end(start)):
            try:
                yield unpack(key)[1], unpack(value)[0]
            except PackError:
                if not skip_damaged:
                    raise

    def problems(self, tx: Transaction, current_branch: str) -> Iterator[str]:
        """Each branch, tag, remote-tracking branch or reflog entry whose value is not
        ``pack(seq, id)`` of a stored commit (or ``pack(None)`` for a branch or a
        remote-tracking branch: an empty branch, here or on the remote), and a current
        branch that does not exist (O(refs); for verify)."""
        for kind, what in ((BRANCH, "branch"), (TAG, "tag"), (REMOTE, "remote-tracking branch"), (REFLOG, "reflog entry")):
            start = pack(kind)
            for key, value in tx.range(start, prefix_end(start)):
                try:
                    name = repr(unpack(key)[1:]) if kind == REFLOG else repr(unpack(key)[1])
                    fields = unpack(value)
                except PackError as exc:
                    yield f"{what} key {key.hex()} (value {value.hex()}) is not a packed ref: {exc}"
                    continue
                problem = self._value_problem(tx, fields, kind in (BRANCH, REMOTE))
                if problem:
                    yield f"{what} {name}: {problem}"
        if not self.get(tx, BRANCH, current_branch)[0]:
            yield f"the current branch {current_branch!r} does not exist"

    def _value_problem(self, tx: Transaction, fields: tuple, may_be_empty: bool) -> str | None:
        if fields == (None,) and may_be_empty:
            return None
        if not fields or type(fields[0]) is not int or len(fields) > 2:
            return f"its value {fields!r:.100} is not (commit seq, commit id)"
        try:
            stored = self._commits.id_of(tx, fields[0]) if self._commits is not None else None
        except UnknownRefError:
            return f"it names commit #{fields[0]}, which is not stored"
        if len(fields) == 2 and stored != fields[1]:
            return f"it names commit #{fields[0]} ({stored}) but records id {fields[1]!r:.80}"
        return None

