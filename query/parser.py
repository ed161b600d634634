"""SPARQL text to algebra: the lark grammar in ``sparql.lark`` (LALR) and a transformer.

The transformer resolves prefixed names and relative IRIs as it goes (the prologue is
transformed before the body), turns blank nodes of the query into hidden variables, unescapes
strings and hands group graph patterns to :mod:`query.translate`.

>>> q = parse_query("PREFIX ex: <http://ex/> SELECT ?s WHERE { ?s ex:p 1 }")
>>> q.form, [str(v) for v in q.vars]
('SELECT', ['?s'])
>>> parse_query("SELECT * WHERE { ?s ex:p 1 }")
Traceback (most recent call last):
...
query.errors.UnknownPrefixError: line 1, column 21: unknown prefix 'ex:' (declare it with PREFIX ex: <...>)
>>> parse_query('SELECT ?s AT "v1" WHERE { ?s ?p ?o }').at
'v1'
>>> type(parse_request("CLEAR ALL")).__name__
'UpdateRequest'
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from .algebra import (
    Aggregate,
    Call,
    Changes,
    Dataset,
    Exists,
    FunctionCall,
    Op,
    PathAlt,
    PathInv,
    PathLink,
    PathMod,
    PathNeg,
    PathSeq,
    Query,
    Triple,
    Values,
    Var,
    Versions,
)
from .errors import QuerySyntaxError, UnknownPrefixError
from .iri import resolve_iri
from .nesting import check_nesting, guard_recursion
from .shapes import ShapeCache
from nstore.terms import RDF_NS, XSD_BOOLEAN, XSD_DECIMAL, XSD_DOUBLE, XSD_INTEGER, BNode, IRI, Literal
from .translate import (
    balanced,
    path_vars_numbered,
    BindSyntax,
    FilterSyntax,
    GraphSyntax,
    GroupSyntax,
    MinusSyntax,
    OptionalSyntax,
    SelectSyntax,
    ServiceSyntax,
    SubSelectSyntax,
    TriplesSyntax,
    UnionSyntax,
    ValuesSyntax,
    translate_group,
    translate_modifiers,
    translate_select,
)
from .update_parser import UpdateRules
from .updates import UpdateRequest

__all__ = ["parse_query", "parse_update", "parse_request", "grammar_parser", "START_SYMBOLS"]

START_SYMBOLS = ("query", "update", "request")

RDF_TYPE = IRI(RDF_NS + "type")
RDF_FIRST = IRI(RDF_NS + "first")
RDF_REST = IRI(RDF_NS + "rest")
RDF_NIL = IRI(RDF_NS + "nil")

_GRAMMAR = Path(__file__).with_name("sparql.lark")
_PARSER: Lark | None = None

# Built-in names as the grammar spells them -> the name used in the algebra.
_ALIASES = {"URI": "IRI", "ISURI": "ISIRI"}

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_LOCAL_ESCAPE_RE = re.compile(r"\\([_~.\-!$&'()*+,;=/?#@%])")
_CODEPOINT_RE = re.compile(r"(?<!\\)\\u([0-9A-Fa-f]{4})|(?<!\\)\\U([0-9A-Fa-f]{8})")


def grammar_parser() -> Lark:
    """The (cached) lark LALR parser of ``sparql.lark``."""
    global _PARSER
    if _PARSER is None:
        _PARSER = Lark(
            _GRAMMAR.read_text(encoding="utf-8"),
            parser="lalr",
            lexer="basic",
            start=list(START_SYMBOLS),
            maybe_placeholders=False,
            propagate_positions=False,
            cache=True,
        )
    return _PARSER


def _unescape(text: str) -> str:
    def sub(match: re.Match) -> str:
        code = match.group(1)
        if code[0] in "uU" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, "\\" + code)

    return _ESCAPE_RE.sub(sub, text) if "\\" in text else text


class _Node:
    """A node produced by ``[ ... ]`` or ``( ... )``, with the triples that describe it."""

    __slots__ = ("node", "triples")

    def __init__(self, node: Any, triples: list) -> None:
        self.node = node
        self.triples = triples


def _count(digits: str) -> int:
    """A LIMIT or OFFSET, capped at ``sys.maxsize``: no result has that many rows, so every
    larger count means the same (no limit; nothing left after the offset), and a number of
    any length is read without ``int()``'s 4,300-digit limit.

    >>> _count("0042"), _count("9" * 5000) == sys.maxsize
    (42, True)
    """
    significant = digits.lstrip("0")
    if len(significant) > len(str(sys.maxsize)):
        return sys.maxsize
    return min(int(significant or "0"), sys.maxsize)


class _Tag:
    """A tagged piece of a query (solution modifier, dataset clause...)."""

    __slots__ = ("tag", "value")

    def __init__(self, tag: str, value: Any) -> None:
        self.tag = tag
        self.value = value


def _term(item: Any) -> Any:
    """Tokens that stand for terms inside triples: ``()`` is rdf:nil, ``a`` is rdf:type."""
    if type(item) is Token:
        if item.type == "NIL":
            return RDF_NIL
        if item.type == "A":
            return RDF_TYPE
        if item.type == "UNDEF":
            return None
    return item


def _path(item: Any) -> Any:
    item = _term(item)
    if type(item) is IRI:
        return PathLink(item)
    return item


def _labels(triples: list) -> set:
    found = set()
    for t in triples:
        for node in (t.s, t.p, t.o):
            if type(node) is Var and node.name.startswith(".l"):
                found.add(node.name[2:])
    return found


def _check_bnode_labels(group: GroupSyntax) -> None:
    """A blank node label may be used in one basic graph pattern only (SPARQL 1.1, 4.1.4):
    triples separated by nothing but FILTERs form one BGP; anything else starts a new one."""
    blocks: list = []
    current: set | None = None
    for element in group.elements:
        kind = type(element)
        if kind is TriplesSyntax:
            if current is None:
                current = set()
                blocks.append(current)
            current |= _labels(element.triples)
            continue
        if kind is FilterSyntax:
            continue
        current = None
        nested = []
        if kind in (OptionalSyntax, MinusSyntax, GraphSyntax, ServiceSyntax):
            nested = [element.group]
        elif kind is UnionSyntax:
            nested = element.groups
        for inner in nested:
            blocks.extend(inner.blocks)
    owner: dict = {}
    for number, block in enumerate(blocks):
        for label in block:
            if owner.setdefault(label, number) != number:
                raise QuerySyntaxError(f"blank node _:{label} is used in two different basic graph patterns")
    group.blocks = blocks


class _QueryTransformer(UpdateRules, Transformer):
    """Bottom-up transformation of the lark tree; stateful (prefixes, base, blank nodes).
    The update rules come from :class:`query.update_parser.UpdateRules`."""

    def __init__(self, base: str | None) -> None:
        super().__init__(visit_tokens=False)
        self.base = base
        self.prefixes: dict[str, str] = {}
        self.fresh = 0
        self.bnode_labels: dict[str, Var] = {}

    # ------------------------------------------------------------------ helpers

    def _fresh(self, kind: str = "b") -> Var:
        self.fresh += 1
        return Var(f".{kind}{self.fresh}")

    def _iri(self, text: str) -> IRI:
        return IRI(resolve_iri(self.base, _unescape(text)))

    # ------------------------------------------------------------------ prologue

    def base_decl(self, items: list) -> None:
        self.base = self._iri(items[0][1:-1]).value

    def prefix_decl(self, items: list) -> None:
        name = str(items[0])[:-1]
        self.prefixes[name] = self._iri(items[1][1:-1]).value

    def prologue(self, items: list) -> None:
        return None

    # ------------------------------------------------------------------ terms

    def iri(self, items: list) -> IRI:
        token = items[0]
        if token.type == "IRIREF":
            return self._iri(token[1:-1])
        prefix, _, local = str(token).partition(":")
        namespace = self.prefixes.get(prefix)
        if namespace is None:
            raise UnknownPrefixError(prefix, line=token.line, column=token.column)
        if "\\" in local:
            local = _LOCAL_ESCAPE_RE.sub(r"\1", local)
        return IRI(resolve_iri(self.base, namespace + local) if self.base else namespace + local)

    def var(self, items: list) -> Var:
        return Var(str(items[0])[1:])

    def blank_node(self, items: list) -> Var:
        token = items[0]
        if token.type == "ANON":
            return self._fresh()
        label = str(token)[2:]
        self.blank_node_used(label)
        var = self.bnode_labels.get(label)
        if var is None:
            var = self.bnode_labels[label] = Var(".l" + label)
        return var

    def string(self, items: list) -> str:
        return string_value(str(items[0]))

    def rdf_literal(self, items: list) -> Literal:
        lexical = items[0]
        if len(items) == 1:
            return Literal(lexical)
        extra = items[1]
        if type(extra) is Token and extra.type == "LANGTAG":
            return Literal(lexical, lang=str(extra)[1:])
        return Literal(lexical, extra)

    def numeric_literal(self, items: list) -> Literal:
        token = items[0]
        if type(token) is Literal:
            return token
        return self._number(token)

    def signed_number(self, items: list) -> Literal:
        return self._number(items[0])

    @staticmethod
    def _number(token: Token) -> Literal:
        kind = token.type
        if kind.startswith("INTEGER"):
            return Literal(str(token), XSD_INTEGER)
        if kind.startswith("DECIMAL"):
            return Literal(str(token), XSD_DECIMAL)
        return Literal(str(token), XSD_DOUBLE)

    def boolean_literal(self, items: list) -> Literal:
        return Literal(str(items[0]).lower(), XSD_BOOLEAN)

    # ------------------------------------------------------------------ triples

    def collection(self, items: list) -> _Node:
        return self._collection(items)

    collection_path = collection

    def _collection(self, items: list) -> _Node:
        triples: list = []
        head: Any = RDF_NIL
        nodes = [self._object(i, triples) for i in items]
        cells = [self._fresh("c") for _ in nodes]
        for i, (cell, node) in enumerate(zip(cells, nodes)):
            triples.append(Triple(cell, RDF_FIRST, node))
            triples.append(Triple(cell, RDF_REST, cells[i + 1] if i + 1 < len(cells) else RDF_NIL))
        if cells:
            head = cells[0]
        return _Node(head, triples)

    def _object(self, item: Any, triples: list) -> Any:
        if type(item) is _Node:
            triples.extend(item.triples)
            return item.node
        return _term(item)

    def blank_node_property_list(self, items: list) -> _Node:
        node = self._fresh()
        triples: list = []
        self._emit(node, items[0], triples)
        return _Node(node, triples)

    blank_node_property_list_path = blank_node_property_list

    def property_list_not_empty(self, items: list) -> list:
        pairs = []
        for i in range(0, len(items), 2):
            pairs.append((items[i], items[i + 1]))
        return pairs

    property_list_path_not_empty = property_list_not_empty

    def object_list(self, items: list) -> list:
        return items

    object_list_path = object_list

    def _emit(self, subject: Any, pairs: list, triples: list) -> None:
        for verb, objects in pairs:
            verb = _term(verb)
            for obj in objects:
                value = self._object(obj, triples)
                triples.append(Triple(subject, verb, value))

    def triples_same_subject(self, items: list) -> list:
        triples: list = []
        subject = self._object(items[0], triples)
        if len(items) > 1:
            self._emit(subject, items[1], triples)
        return triples

    triples_same_subject_path = triples_same_subject

    def triples_block(self, items: list) -> TriplesSyntax:
        return TriplesSyntax([triple for part in items for triple in part])

    def construct_triples(self, items: list) -> list:
        return [triple for part in items for triple in part]

    triples_template = construct_triples

    def construct_template(self, items: list) -> list:
        return items[0] if items else []

    # ------------------------------------------------------------------ paths

    def path_alt(self, items: list) -> Any:
        if len(items) == 1:
            return items[0]
        return PathAlt(tuple(_path(i) for i in items))

    def path_seq(self, items: list) -> Any:
        parts = [i for i in items if not (type(i) is Token and i.type == "SLASH")]
        if len(parts) == 1:
            return parts[0]
        return PathSeq(tuple(_path(i) for i in parts))

    def path_inv(self, items: list) -> Any:
        return PathInv(_path(items[0]))

    def path_elt(self, items: list) -> Any:
        if len(items) == 1:
            return items[0]
        return PathMod(_path(items[0]), items[1])

    def path_mod(self, items: list) -> str:
        return str(items[0])

    def path_neg(self, items: list) -> PathNeg:
        return items[0]

    def path_negated_property_set(self, items: list) -> PathNeg:
        forward, inverse = [], []
        for item in items:
            if type(item) is Token:  # NIL: !() excludes nothing
                continue
            direction, iri = item
            (inverse if direction == "^" else forward).append(iri)
        return PathNeg(tuple(forward), tuple(inverse))

    def path_one_in_property_set(self, items: list) -> tuple:
        if len(items) == 2:
            return ("^", _term(items[1]))
        return ("", _term(items[0]))

    # ------------------------------------------------------------------ group patterns

    def group_graph_pattern_sub(self, items: list) -> GroupSyntax:
        group = GroupSyntax(list(items))
        _check_bnode_labels(group)
        return group

    def group_graph_pattern(self, items: list) -> GroupSyntax:
        item = items[0]
        if type(item) is GroupSyntax:
            return item
        return GroupSyntax([SubSelectSyntax(item)])

    def group_or_union_graph_pattern(self, items: list) -> UnionSyntax:
        return UnionSyntax(list(items))

    def optional_graph_pattern(self, items: list) -> OptionalSyntax:
        return OptionalSyntax(items[0])

    def minus_graph_pattern(self, items: list) -> MinusSyntax:
        return MinusSyntax(items[0])

    def graph_graph_pattern(self, items: list) -> GraphSyntax:
        return GraphSyntax(items[0], items[1])

    def service_graph_pattern(self, items: list) -> ServiceSyntax:
        silent = len(items) == 4
        return ServiceSyntax(items[-2], items[-1], silent)

    def filter(self, items: list) -> FilterSyntax:
        return FilterSyntax(items[0])

    def bind(self, items: list) -> BindSyntax:
        return BindSyntax(items[0], items[1])

    def inline_data(self, items: list) -> ValuesSyntax:
        return ValuesSyntax(items[0])

    def data_one_var(self, items: list) -> Values:
        var = items[0]
        return Values((var,), tuple((_term(v),) for v in items[1:]))

    def data_full(self, items: list) -> Values:
        vars_ = tuple(i for i in items if type(i) is Var)
        rows = tuple(i for i in items if type(i) is tuple)
        for row in rows:
            if len(row) != len(vars_):
                raise QuerySyntaxError(f"a VALUES row has {len(row)} values for {len(vars_)} variables")
        return Values(vars_, rows)

    def data_row(self, items: list) -> tuple:
        if len(items) == 1 and type(items[0]) is Token and items[0].type == "NIL":
            return ()
        return tuple(_term(i) for i in items)

    def values_clause(self, items: list) -> Values | None:
        return items[0] if items else None

    # ------------------------------------------------------------------ expressions

    def or_expr(self, items: list) -> Op:
        # || and && are associative (SPARQL's three-valued logic with errors as unknown),
        # so a balanced tree means what the left-deep one does, at depth log2(n).
        return balanced(items, lambda a, b: Op("||", (a, b)))

    def and_expr(self, items: list) -> Op:
        return balanced(items, lambda a, b: Op("&&", (a, b)))

    def comp_op(self, items: list) -> str:
        return str(items[0])

    def compare(self, items: list) -> Op:
        return Op(items[1], (items[0], items[2]))

    def in_expr(self, items: list) -> Op:
        return Op("IN", (items[0], *items[1]))

    def not_in_expr(self, items: list) -> Op:
        return Op("NOT IN", (items[0], *items[1]))

    def arith(self, items: list) -> Op:
        return Op(str(items[1]), (items[0], items[2]))

    def signed_product(self, items: list) -> tuple:
        number: Literal = items[0]
        sign = number.lexical[0]
        expr: Any = Literal(number.lexical[1:], number.datatype)
        for i in range(1, len(items), 2):
            expr = Op(str(items[i]), (expr, items[i + 1]))
        return (sign, expr)

    def signed_arith(self, items: list) -> Op:
        sign, expr = items[1]
        return Op(sign, (items[0], expr))

    def not_expr(self, items: list) -> Op:
        return Op("!", (items[0],))

    def unary_expr(self, items: list) -> Op:
        return Op("u" + str(items[0]), (items[1],))

    def iri_or_function(self, items: list) -> Any:
        if len(items) == 1:
            return items[0]
        args, distinct = items[1]
        return FunctionCall(items[0], tuple(args), distinct)

    def function_call(self, items: list) -> FunctionCall:
        args, distinct = items[1]
        return FunctionCall(items[0], tuple(args), distinct)

    def arg_list(self, items: list) -> tuple:
        distinct = False
        args = []
        for item in items:
            if type(item) is Token:
                if item.type == "DISTINCT":
                    distinct = True
                continue
            args.append(item)
        return (args, distinct)

    def expression_list(self, items: list) -> list:
        return [i for i in items if not (type(i) is Token and i.type == "NIL")]

    def builtin_call(self, items: list) -> Any:
        return items[0]

    def call(self, items: list) -> Call:
        name = str(items[0]).upper()
        name = _ALIASES.get(name, name)
        args = []
        for item in items[1:]:
            if type(item) is Token and item.type == "NIL":
                continue
            if type(item) is list:  # expression_list of COALESCE / CONCAT
                args.extend(item)
            else:
                args.append(item)
        return Call(name, tuple(args))

    def exists(self, items: list) -> Exists:
        return Exists(translate_group(items[1]), False)

    def not_exists(self, items: list) -> Exists:
        return Exists(translate_group(items[1]), True)

    def aggregate(self, items: list) -> Aggregate:
        name = str(items[0]).upper()
        distinct = False
        arg: Any = None
        separator = " "
        for item in items[1:]:
            if type(item) is Token:
                if item.type == "DISTINCT":
                    distinct = True
                elif item.type == "STAR":
                    arg = None
                continue
            if type(item) is str and arg is not None:
                separator = item
            else:
                arg = item
        return Aggregate(name, arg, distinct, separator)

    # ------------------------------------------------------------------ query forms

    def select_modifier(self, items: list) -> _Tag:
        return _Tag("modifier", str(items[0]).upper())

    def select_item(self, items: list) -> tuple:
        if len(items) == 1:
            return (items[0], None)
        return (items[1], items[0])

    def select_projection(self, items: list) -> Any:
        if len(items) == 1 and type(items[0]) is Token:
            return "*"
        return list(items)

    def select_clause(self, items: list) -> _Tag:
        modifier = None
        projection = items[-1]
        if len(items) == 2:
            modifier = items[0].value
        return _Tag("select", (modifier, projection))

    def from_default(self, items: list) -> _Tag:
        return _Tag("from", items[0])

    def from_named(self, items: list) -> _Tag:
        return _Tag("from_named", items[0])

    # ------------------------------------------------------------------ version clauses

    def dataset_clause(self, items: list) -> _Tag:
        return items[0]

    def ref(self, items: list) -> str:
        token = items[0]
        if type(token) is Token and token.type == "IRIREF":
            return _unescape(str(token)[1:-1])
        return token  # a string, already unescaped

    def at_clause(self, items: list) -> _Tag:
        return _Tag("at", items[0])

    def changes_clause(self, items: list) -> _Tag:
        return _Tag("changes", (items[0], items[1] if len(items) > 1 else None))

    def versions_clause(self, items: list) -> _Tag:
        return _Tag("versions", None)

    @staticmethod
    def _version(items: list) -> tuple[str | None, Any]:
        """The ``AT`` ref and a function wrapping the WHERE pattern for CHANGES / VERSIONS."""
        tags = [i for i in items if type(i) is _Tag and i.tag in ("at", "changes", "versions")]
        kinds = [t.tag for t in tags]
        for kind in set(kinds):
            if kinds.count(kind) > 1:
                raise QuerySyntaxError(f"a query has at most one {kind.upper()} clause")
        found = {t.tag: t.value for t in tags}
        if "changes" in found and ("at" in found or "versions" in found):
            other = "AT" if "at" in found else "VERSIONS"
            raise QuerySyntaxError(f"CHANGES cannot be combined with {other} (CHANGES FROM <a> TO <b> names both commits)")
        at = found.get("at")
        if "changes" in found:
            start, end = found["changes"]
            return None, lambda pattern: Changes(pattern, start, end)
        if "versions" in found:
            return at, lambda pattern: Versions(pattern, at)
        return at, None

    def where_clause(self, items: list) -> GroupSyntax:
        return items[0]

    def group_condition(self, items: list) -> tuple:
        return (items[0], None)

    def group_as(self, items: list) -> tuple:
        return (items[0], items[1])

    def group_clause(self, items: list) -> _Tag:
        return _Tag("group", list(items))

    def having_clause(self, items: list) -> _Tag:
        return _Tag("having", list(items))

    def order_asc(self, items: list) -> tuple:
        return (items[1], True)

    def order_desc(self, items: list) -> tuple:
        return (items[1], False)

    def order_condition(self, items: list) -> tuple:
        return (items[0], True)

    def order_clause(self, items: list) -> _Tag:
        return _Tag("order", list(items))

    def limit_clause(self, items: list) -> _Tag:
        return _Tag("limit", _count(items[0]))

    def offset_clause(self, items: list) -> _Tag:
        return _Tag("offset", _count(items[0]))

    def limit_offset_clauses(self, items: list) -> list:
        return list(items)

    def solution_modifier(self, items: list) -> list:
        tags: list = []
        for item in items:
            if type(item) is list:
                tags.extend(item)
            else:
                tags.append(item)
        return tags

    @staticmethod
    def _select_syntax(where: GroupSyntax, modifiers: list, projection: Any = "*", modifier: str | None = None) -> SelectSyntax:
        sel = SelectSyntax(where, projection, modifier)
        for tag in modifiers:
            if tag.tag == "group":
                sel.group_by = tag.value
            elif tag.tag == "having":
                sel.having = tag.value
            elif tag.tag == "order":
                sel.order_by = tag.value
            elif tag.tag == "limit":
                sel.limit = tag.value
            elif tag.tag == "offset":
                sel.offset = tag.value
        return sel

    @staticmethod
    def _dataset(items: list) -> Dataset:
        default = tuple(i.value for i in items if type(i) is _Tag and i.tag == "from")
        named = tuple(i.value for i in items if type(i) is _Tag and i.tag == "from_named")
        return Dataset(default, named)

    def _versioned(self, items: list) -> dict:
        at, wrap = self._version(items)
        return {"at": at, "wrap": wrap}

    def sub_select(self, items: list) -> Any:
        modifier, projection = items[0].value
        sel = self._select_syntax(items[1], items[2], projection, modifier)
        sel.values = items[3] if len(items) > 3 else None
        pattern, _ = translate_select(sel)
        return pattern

    def select_query(self, items: list) -> dict:
        modifier, projection = items[0].value
        sel = self._select_syntax(items[-2], items[-1], projection, modifier)
        return {"form": "SELECT", "select": sel, "dataset": self._dataset(items), **self._versioned(items)}

    def ask_query(self, items: list) -> dict:
        sel = self._select_syntax(items[-2], items[-1])
        return {"form": "ASK", "select": sel, "dataset": self._dataset(items), **self._versioned(items)}

    def construct_query(self, items: list) -> dict:
        sel = self._select_syntax(items[-2], items[-1])
        return {"form": "CONSTRUCT", "select": sel, "template": items[0], "dataset": self._dataset(items), **self._versioned(items)}

    def construct_where(self, items: list) -> dict:
        template = next((i for i in items if type(i) is list and all(type(t) is Triple for t in i)), [])
        modifiers = items[-1]
        sel = self._select_syntax(GroupSyntax([TriplesSyntax(list(template))]), modifiers)
        return {"form": "CONSTRUCT", "select": sel, "template": template, "dataset": self._dataset(items), **self._versioned(items)}

    def describe_query(self, items: list) -> dict:
        targets = [i for i in items if type(i) in (Var, IRI)]
        star = any(type(i) is Token and i.type == "STAR" for i in items)
        where = next((i for i in items if type(i) is GroupSyntax), GroupSyntax([]))
        sel = self._select_syntax(where, items[-1])
        return {"form": "DESCRIBE", "select": sel, "describe": "*" if star else targets, "dataset": self._dataset(items), **self._versioned(items)}

    def query(self, items: list) -> Query:
        form = next(i for i in items if type(i) is dict)
        values = items[-1] if type(items[-1]) is Values else None
        sel: SelectSyntax = form["select"]
        sel.values = values
        kind = form["form"]
        pattern = translate_group(sel.where)
        if form["wrap"] is not None:
            if kind == "DESCRIBE":
                raise QuerySyntaxError("DESCRIBE cannot be combined with CHANGES or VERSIONS")
            pattern = form["wrap"](pattern)
        if kind == "SELECT":
            pattern, vars_ = translate_modifiers(pattern, sel)
            return self._query("SELECT", pattern, form, vars_=vars_, order=sel.order_by)
        if kind in ("ASK", "CONSTRUCT"):
            sel.projection = "*"
            pattern, vars_ = translate_modifiers(pattern, sel)
            template = tuple(self._template(t) for t in form.get("template", ()))
            return self._query(kind, pattern, form, vars_=vars_, template=template)
        sel.projection = "*"
        pattern, vars_ = translate_modifiers(pattern, sel)
        return self._query(kind, pattern, form, vars_=vars_, describe=form["describe"])

    def _query(self, form: str, pattern: Any, parts: dict, *, vars_: tuple = (), template: tuple = (), describe: Any = (), order: list = ()) -> Query:
        order_vars = tuple(e.name for e, _ in order if type(e) is Var)
        if describe == "*":
            describe = vars_
        return Query(
            form,
            pattern,
            vars=vars_,
            template=template,
            describe=tuple(describe),
            dataset=parts["dataset"],
            base=self.base,
            prefixes=dict(self.prefixes),
            order_vars=order_vars,
            at=parts["at"],
        )

    @staticmethod
    def _template(triple: Triple) -> Triple:
        """Blank nodes of a CONSTRUCT template stay blank nodes (fresh per solution)."""

        def fix(node: Any) -> Any:
            if type(node) is Var and node.name.startswith("."):
                return BNode(node.name[1:])
            return node

        return Triple(fix(triple.s), fix(triple.p), fix(triple.o))

    def request(self, items: list) -> Query | UpdateRequest:
        return items[0]


# ---------------------------------------------------------------------------- errors

_FRIENDLY = {
    "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefix",
    "VAR1": "a variable",
    "VAR2": "a variable",
    "BLANK_NODE_LABEL": "a blank node",
    "ANON": "'[]'",
    "NIL": "'()'",
    "LANGTAG": "a language tag",
    "INTEGER": "an integer",
    "DECIMAL": "a decimal",
    "DOUBLE": "a double",
    "STRING_LITERAL1": "a string",
    "STRING_LITERAL2": "a string",
    "STRING_LITERAL_LONG1": "a string",
    "STRING_LITERAL_LONG2": "a string",
    "INTEGER_POSITIVE": "a number",
    "INTEGER_NEGATIVE": "a number",
    "DECIMAL_POSITIVE": "a number",
    "DECIMAL_NEGATIVE": "a number",
    "DOUBLE_POSITIVE": "a number",
    "DOUBLE_NEGATIVE": "a number",
    "FUNC0": "a function",
    "FUNC1": "a function",
    "FUNC2": "a function",
    "FUNC3": "a function",
    "FUNC23": "a function",
    "FUNC34": "a function",
    "FUNCN": "a function",
    "AGG1": "an aggregate",
    "$END": "the end of the query",
}


def _describe_terminal(parser: Lark, name: str) -> str:
    if name in _FRIENDLY:
        return _FRIENDLY[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    if pattern.type == "str":
        text = pattern.value
        return f"'{text.upper() if text.isalpha() and len(text) > 1 else text}'"
    match = re.fullmatch(r"\(\?i:([A-Za-z_]+)\)\\b", pattern.value)
    if match:
        return f"'{match.group(1).upper()}'"
    if name == "A":
        return "'a'"
    return name.lower()


def _syntax_error(parser: Lark, text: str, error: UnexpectedInput, start: str = "query") -> QuerySyntaxError:
    line = getattr(error, "line", None)
    column = getattr(error, "column", None)
    if isinstance(error, UnexpectedToken):
        token = error.token
        expected = sorted({_describe_terminal(parser, name) for name in error.expected})
        if token.type == "$END":
            return QuerySyntaxError("unexpected end of query", line=_last_line(text), column=_last_column(text), token=None, expected=expected)
        return QuerySyntaxError(f"unexpected {str(token)!r}", line=token.line, column=token.column, token=str(token), expected=expected)
    if isinstance(error, UnexpectedCharacters):
        snippet = text[error.pos_in_stream : error.pos_in_stream + 12].split("\n")[0]
        try:  # what the parser would accept here (the lexer alone knows only every terminal)
            interactive = parser.parse_interactive(text[: error.pos_in_stream], start=start)
            interactive.exhaust_lexer()
            names = interactive.accepts()
        except UnexpectedInput:
            names = error.allowed or ()
        allowed = sorted({_describe_terminal(parser, name) for name in names})
        return QuerySyntaxError(f"unexpected text {snippet!r}", line=line, column=column, token=snippet, expected=allowed)
    if isinstance(error, UnexpectedEOF):
        expected = sorted({_describe_terminal(parser, name) for name in error.expected})
        return QuerySyntaxError("unexpected end of query", line=_last_line(text), column=_last_column(text), expected=expected)
    return QuerySyntaxError(str(error), line=line, column=column)


def _last_line(text: str) -> int:
    return text.count("\n") + 1


def _last_column(text: str) -> int:
    return len(text) - (text.rfind("\n") + 1) + 1


def _decode_codepoints(text: str) -> str:
    """Replace ``\\uXXXX`` escapes before parsing, as SPARQL specifies (section 19.2),
    except those that would yield a character with a meaning of its own (quotes, ``>``,
    backslash...): string and IRI rules decode those later."""

    def sub(match: re.Match) -> str:
        char = chr(int(match.group(1) or match.group(2), 16))
        if char in "\"'<>{}|^`\\" or ord(char) <= 0x20:
            return match.group(0)
        return char

    return _CODEPOINT_RE.sub(sub, text)


def _parse(text: str, start: str, base: str | None) -> Any:
    parser = grammar_parser()
    if "\\u" in text or "\\U" in text:
        text = _decode_codepoints(text)
    check_nesting(text)  # before lark and the transformer recurse over a deep tree
    with guard_recursion("parsing"):
        try:
            tree: Tree = parser.parse(text, start=start)
        except UnexpectedInput as error:
            raise _syntax_error(parser, text, error, start) from None
        try:
            with path_vars_numbered():
                return _QueryTransformer(base).transform(tree)
        except VisitError as error:
            if isinstance(error.orig_exc, (QuerySyntaxError, RecursionError)):
                raise error.orig_exc from None
            raise


def parse_query(text: str, *, base: str | None = None) -> Query:
    """Parse SPARQL query text into a :class:`~query.algebra.Query`.

    Raises :class:`QuerySyntaxError` (line, column, token, expected) for invalid text and
    :class:`UnknownPrefixError` for an undeclared prefix. The last :data:`PARSED_QUERIES`
    texts are remembered (an application repeats its queries, and parsing takes longer
    than a small query's run), so the result is shared: treat it as immutable.
    """
    return _parse_query_cached(text, base)


PARSED_QUERIES = 256
"""How many parsed query texts :func:`parse_query` keeps (least recently used dropped)."""


def _parse_query_text(text: str, base: str | None) -> Query:
    # Queries only: an update's blank nodes must be fresh per request.
    return _parse(text, "query", base)


def string_value(token: str) -> str:
    """The value of a SPARQL string token, quotes included (``'a\\tb'`` -> ``a<TAB>b``)."""
    quote = 3 if token[:3] in ('"""', "'''") else 1
    return _unescape(token[quote:-quote])


_SHAPES = ShapeCache(_parse_query_text, string_value)


@lru_cache(maxsize=PARSED_QUERIES)
def _parse_query_cached(text: str, base: str | None) -> Query:
    return _SHAPES.parse(text, base)


def parse_update(text: str, *, base: str | None = None) -> UpdateRequest:
    """Parse a SPARQL 1.1 Update request into a :class:`~query.updates.UpdateRequest`
    (errors as :func:`parse_query`)."""
    return _parse(text, "update", base)


def parse_request(text: str, *, base: str | None = None) -> Query | UpdateRequest:
    """Parse a query or an update request (what ``datae query`` and the REPL accept)."""
    return _parse(text, "request", base)
