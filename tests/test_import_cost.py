"""What ``import fstore`` loads (issue 25.4): the tables plug in when a store opens, not
when fstore is imported, and heavy optional dependencies load only when used: dulwich
when a Kart repository is read, pyarrow for Arrow / Parquet, pandas for frames. Each check
runs in a fresh interpreter, since this process has imported everything already. No timing
is asserted (a loaded machine would make it flaky): the modules loaded are what costs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.locations import PROJECT

HEAVY = ("dulwich", "pyarrow", "pandas", "pyoxigraph", "rich", "lark", "starlette", "uvicorn")


def _loaded(code: str) -> dict:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); it prints
    a JSON value, returned."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PROJECT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_HEAVY_LOADED = f"sorted(m for m in {HEAVY!r} if m in sys.modules)"


def test_import_fstore_loads_no_heavy_dependency():
    assert _loaded(f"import fstore, sys, json; print(json.dumps({_HEAVY_LOADED}))") == []


def test_import_fstore_loads_no_table_module():
    loaded = _loaded("import fstore, sys, json; print(json.dumps(sorted(m for m in sys.modules "
                     "if m.startswith('fstore.tables.'))))")
    assert loaded == []


def test_a_public_table_name_loads_its_module_only_when_used():
    code = ("import sys, json, fstore.tables as t; before = 'fstore.tables.schema' in sys.modules; "
            "s = t.Schema; print(json.dumps([before, 'fstore.tables.schema' in sys.modules, s.__module__, "
            f"'Schema' in dir(t), {_HEAVY_LOADED}]))")
    assert _loaded(code) == [False, True, "fstore.tables.schema", True, []]


def test_opening_and_using_a_table_loads_no_heavy_dependency():
    code = ("import sys, json, tempfile, fstore, fstore.tables as tables\n"
            "repo = fstore.open(tempfile.mkdtemp())\n"
            "with repo.transaction('main', message='t') as tx:\n"
            "    tables.create(tx, 't', [{'id': 'k', 'name': 'k', 'dataType': 'integer', 'primaryKeyIndex': 0}]).insert({'k': 1})\n"
            "rows = list(repo.at('main').table('t').rows())\n"
            "repo.close()\n"
            f"print(json.dumps([rows, {_HEAVY_LOADED}]))")
    assert _loaded(code) == [[{"k": 1}], []]


def test_reading_a_kart_repository_is_what_loads_dulwich():
    code = ("import sys, json, fstore.tables as tables\n"
            "before = 'dulwich' in sys.modules\n"
            "try:\n"
            "    tables.KartRepo('/nonexistent/kart')\n"
            "except Exception:\n"
            "    pass\n"
            "print(json.dumps([before, 'dulwich' in sys.modules]))")
    assert _loaded(code) == [False, True]


def test_opening_a_store_loads_no_table_module_until_a_table_is_used():
    code = ("import sys, json, tempfile, fstore\n"
            "repo = fstore.open(tempfile.mkdtemp())\n"
            "at_open = sorted(m for m in sys.modules if m.startswith('fstore.tables.'))\n"
            "with repo.transaction('main', message='t') as tx:\n"
            "    fstore.add(tx, None, fstore.IRI('urn:s'), fstore.IRI('urn:p'), 'o')\n"
            "after_quads = sorted(m for m in sys.modules if m.startswith('fstore.tables.'))\n"
            "assert [c.message for c in repo.log('main')] == ['t']\n"
            "import fstore.tables as tables\n"
            "names = tables.list_tables(repo.at('main'))\n"
            "repo.close()\n"
            "print(json.dumps([at_open, after_quads, names, 'fstore.tables.store' in sys.modules]))")
    assert _loaded(code) == [["fstore.tables.mapping", "fstore.tables.plugin"],
                             ["fstore.tables.mapping", "fstore.tables.plugin"], [], True]
