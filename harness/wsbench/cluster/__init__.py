"""``wsbench run --cluster ADDRESS``: one shard per load host, run as tasks of a Dask
distributed cluster against one ``--target`` server (docs/scaling.md).

- ``dask_engine``: the cluster: a scheduler the user operates (over SSH, on Kubernetes) or a
  local one started for the run (``local:N``), its workers and their roles (load hosts,
  the server's host), and their clocks.
- ``start``: one start for all: every shard announces readiness through the engine and
  writes ``GO`` to its client when the one barrier is released; the conductor releases it
  and, on the server's host, reads the server around the union of the phases.
- ``tasks``: what runs on a worker: a shard (the harness's own measurement,
  ``measure.run_client``, with the barrier plugged in where it writes ``GO``), the
  conductor with the server's readings, and a probe of the worker's host.
- ``coordinator``: the coordinator: the interleaved repetitions, each one a barrier across all
  shards; shard runs merged by ``merge.merge_shards`` (the merge of ``wsbench merge``).

Layering: above measure, merge, runner and the model; below the commands.
"""
