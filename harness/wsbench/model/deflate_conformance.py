"""The ``deflate_conformance`` section (``wsbench conformance --deflate``, schema 14):
permessage-deflate (RFC 7692) played against the clients (``clients``: a ``Conformance``,
as the ``conformance`` section) or the servers' deflate twins (``servers``: a
``ServerConformance``, as the ``server_conformance`` section); the side not played is
null. The same records as those sections: one results format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .conformance import Conformance
from .server_conformance import ServerConformance


@dataclass
class DeflateConformance:
    clients: Conformance | None = None  # cases pmd-*, verdicts per client (n/a: it cannot compress)
    servers: ServerConformance | None = None  # cases pmd-*, verdicts per server twin NAME/deflate

    def to_json(self) -> dict[str, Any]:
        return {"clients": self.clients.to_json() if self.clients is not None else None,
                "servers": self.servers.to_json() if self.servers is not None else None}

    @staticmethod
    def from_json(d: dict[str, Any]) -> DeflateConformance:
        clients, servers = d.get("clients"), d.get("servers")
        return DeflateConformance(Conformance.from_json(clients) if clients is not None else None,
                                  ServerConformance.from_json(servers) if servers is not None else None)
