"""The test kit: what the tests of every room share, one implementation each (testkit/README.md).

- ``background``: programs in a process group of their own (readiness line with a
  deadline, killed by process group, Ctrl-C as at a terminal).
- ``wss``: the TLS test certificates (build/tls) and the catalog's programs in TLS mode.
- ``raw_ws``: a WebSocket client by hand and the wire's blocking side; every frame comes
  from the product's ``wsbench.conformance.frames``.
- ``memory_tls``: TLS by hand on a blocking socket (the product's ``MemoryTls``) and a
  threaded wss:// peer that scripts misbehaviour.
- ``fuzz_check``: the fuzz replay check; ``url_table``: the URL tests' table and drivers.

Installed editable into .venv by scripts/setup-python.sh (make setup), beside the harness:
tests import it by name, no ``sys.path`` of their own. The kit may import the product
(``wsbench``); the product never imports the kit."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
