"""Operations on a store, each a function of a handle (a :class:`~fstore.core.storage.Snapshot`
to read, a :class:`~fstore.core.storage.Writer` to write); ``fstore.Repository``'s methods
delegate to them. They never import the facade, sync or the tables (``tests/test_layers.py``):
a merge asks the store's plug-ins for the graph mergers of tables.

- :mod:`.three_way`: three-way merges of one space, conflicts per (graph, subject, predicate).
- :mod:`.merge`: merging a ref into a branch; continuing or aborting a stopped merge.
- :mod:`.merge_state`, :mod:`.conflicts`: a merge stopped on conflicts, and settling them.
- :mod:`.revert`, :mod:`.reset`, :mod:`.show`: the daily loop's look back.
- :mod:`.diff`: the differences between two commits; :mod:`.history`: blame, the history
  of a pattern, the versions of its quads.
- :mod:`.branches`: creating and deleting branches and tags, status, the reflog.
- :mod:`.verify`, :mod:`.stats`, :mod:`.gc`: integrity, counts, garbage collection.
"""
