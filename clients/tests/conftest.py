"""Shared by the client tests: the native echo server, started once per module."""

from __future__ import annotations

from typing import Iterator

import pytest

from wsbench.catalog import load_catalog
from wsbench.server import RunningServer, start_server


@pytest.fixture(scope="module")
def lws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """lws-echo on a free loopback port (harness/runtimes.toml's `lws`), stopped after the module."""
    server = start_server(load_catalog().servers["lws"], tmp_path_factory.mktemp("lws"))
    try:
        yield server
    finally:
        server.stop()
