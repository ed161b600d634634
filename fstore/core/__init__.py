"""The versioned store's core: its keys and what reads and writes them. It imports only
nstore, :mod:`fstore.errors` and itself (``tests/test_layers.py``).

- :mod:`.storage`: the one owner of the keys, and its bound handles: ``Storage.read()``
  gives a :class:`~.storage.Snapshot` (one consistent state), ``Storage.write()`` a
  :class:`~.storage.Writer` (a snapshot that also writes, committed at the block's end).
- :mod:`.layout`: where each part lives in the one ordered keyspace (``docs/format.md``).
- :mod:`.commits`: commit records, their content-addressed ids, the DAG.
- :mod:`.refs`: branch, tag and remote names and where they live.
- :mod:`.history`: the change records of every commit in one space, and reads at any commit.
- :mod:`.heads`: materialised heads (a snapshot plus a small overlay per branch).
- :mod:`.tables_space`: the tables space over its two homes; :mod:`.rows`: tables' rows by
  table and primary key (format 6); :mod:`.rowcodec`: a feature tuple <-> its row.
- :mod:`.digest`: state digests; :mod:`.counts`: a commit's counts from its records.
- :mod:`.ranges`: ranges of numeric objects a read scans instead of filtering.
"""
