"""Write ``docs/conformance.md``: the W3C SPARQL suites' pass / fail / skip counts by
category, and every failure and skip with its reason.

Run from the repository root: ``.venv/bin/python -m tests.conformance_report``
(``--output PATH`` to write elsewhere, ``--print`` to show the table only).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from pathlib import Path


from tests import conformance

DEFAULT_OUTPUT = conformance.ROOT / "docs" / "conformance.md"


def build_report() -> str:
    suite = conformance.ensure_suite()
    if suite is None:
        raise SystemExit("the W3C SPARQL suite is missing and could not be downloaded")
    cases = conformance.collect(suite)
    started = time.time()
    by_category: dict[str, Counter] = defaultdict(Counter)
    by_kind: dict[str, Counter] = defaultdict(Counter)
    failures, skips = [], []
    for case, outcome in conformance.run_all(cases):
        by_category[case.category][outcome.status] += 1
        by_kind["update" if conformance.is_update(case) else "query"][outcome.status] += 1
        if outcome.status == "fail":
            failures.append((case, outcome))
        elif outcome.status == "skip":
            skips.append((case, outcome))
    elapsed = time.time() - started
    total = Counter()
    for counts in by_category.values():
        total.update(counts)
    lines = [
        "# SPARQL conformance",
        "",
        "The W3C SPARQL 1.0 (`dawg-data-r2`) and SPARQL 1.1 (`sparql11`) test suites, as shipped",
        "in rdflib 7.6.0 (fetched by `../shared/scripts/get_sparql_suite.sh` into",
        "`.cache/sparql-suite`), run against datae: each test's data is loaded into a fresh fstore",
        "repository, the query runs through `query.execute`, and the result is compared as the",
        "suite says (result sets as multisets up to blank-node renaming, in order where ORDER BY",
        "fixes it; graphs by isomorphism; booleans; CSV text). Syntax tests check that the parser",
        "accepts or rejects the query. Update evaluation tests run the request as one commit",
        "(`query.Session`, as `datae query` does) on a store holding the test's data and compare",
        "the whole resulting dataset (default and named graphs) with the expected one by",
        "isomorphism; update syntax tests check `parse_update`.",
        "",
        "Regenerate with `.venv/bin/python -m tests.conformance_report`; the same tests run under",
        "pytest as `tests/test_sparql_w3c.py`.",
        "",
        f"**Total: {total['pass']} pass, {total['fail']} fail, {total['skip']} skip** "
        f"({sum(total.values())} tests, {elapsed:.0f} s).",
        "",
        f"- query tests (evaluation, syntax, result formats): {by_kind['query']['pass']} pass, "
        f"{by_kind['query']['fail']} fail, {by_kind['query']['skip']} skip",
        f"- update tests (SPARQL 1.1 Update evaluation and syntax): {by_kind['update']['pass']} pass, "
        f"{by_kind['update']['fail']} fail, {by_kind['update']['skip']} skip",
        "",
        "| category | pass | fail | skip |",
        "|---|---:|---:|---:|",
    ]
    for category in sorted(by_category):
        counts = by_category[category]
        lines.append(f"| {category} | {counts['pass']} | {counts['fail']} | {counts['skip']} |")
    lines += ["", "## Failures", ""]
    if not failures:
        lines.append("None.")
    for case, outcome in failures:
        first = outcome.reason.strip().splitlines()[0] if outcome.reason.strip() else ""
        lines.append(f"- `{case.id}` ({case.name}): {first}")
    lines += ["", "## Skips by reason", ""]
    reasons: dict[str, list] = defaultdict(list)
    for case, outcome in skips:
        reasons[outcome.reason].append(case.id)
    for reason, ids in sorted(reasons.items(), key=lambda item: (-len(item[1]), item[0])):
        if len(ids) > 6:
            lines.append(f"- {reason}: {len(ids)} tests")
        else:
            lines.append(f"- {reason}: " + ", ".join(f"`{i}`" for i in ids))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--print", action="store_true", help="print the report instead of writing it")
    args = parser.parse_args(argv)
    report = build_report()
    if args.print:
        print(report)
        return
    args.output.write_text(report, encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
