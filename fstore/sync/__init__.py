"""Sync: how commits travel between stores (``docs/sync.md``, protocol 1), and the merge
requests that travel with them. Nothing here imports the facade (``fstore.repository``,
``fstore.view``, ``fstore.transaction``): sync works on a store's ``Storage`` and, where it
needs more (closing, verify, merge), on the protocols of :mod:`.opener`.

- :mod:`.protocol`: what a store sends (commit payloads, its refs, its ids) and how a store
  receives (every commit checked against its id and digest, refs moved last); the sync
  errors.
- :mod:`.wire`: the bytes of the HTTP transport, for both ends: frames, the frame size
  limit, media type, ids and wants, errors by kind. ``datae serve`` and the HTTP client
  encode and decode through it alone.
- :mod:`.remotes`: the fetching and pushing side: connect to a remote, fetch, push, pull,
  clone.
- :mod:`.remote_config`: the remotes a store knows (names, URLs) and its remote-tracking
  branches.
- :mod:`.http_client`: a remote served by ``datae serve`` (``http://``).
- :mod:`.merge_requests`: merge requests, and the copies of a remote's a fetch makes.
- :mod:`.opener`: what sync asks of an open store and of what opens one
  (``fstore.Repository`` is both).
"""
