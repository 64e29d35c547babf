"""``wsbench list``: the runtimes, servers, clients, workloads, suites and conformance cases
(the client cases and the server cases, each by Autobahn's sections with every case's RFC
6455 section; the TLS-failure set; the permessage-deflate cases of both sides, by group,
with their RFC 7692 sections)."""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence

from ..catalog import load_catalog
from ..conformance import cases, tls_cases
from ..deflate_conformance import choose, pmd_client_cases as deflate_cases, pmd_server_cases as deflate_server_cases
from ..server_conformance import server_cases
from ..workloads import load_workloads


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    workloads = load_workloads(args.workloads_dir)
    print("runtimes:")
    for rt in catalog.runtimes.values():
        print(f"  {rt.name:<18} {rt.label}")
    for kind, table in (("servers", catalog.servers), ("clients", catalog.clients)):
        print(f"{kind}:")
        for p in table.values():
            state = "ready" if not p.missing() else f"not built ({p.missing()[0]}; run: make setup)"
            guest_of = [s.name for s in workloads.suites.values() if p.name in s.reference_clients]
            extra = "" if p.default else " (only when named" + "".join(
                f"; suite {name}: against the reference server" for name in guest_of) + ")"
            print(f"  {p.name:<18} {p.label:<44} {state}{extra}")
    print("workloads:")
    for w in workloads.workloads.values():
        print(f"  {w.name:<18} {w.description}")
    print("suites:")
    for s in workloads.suites.values():
        print(f"  {s.name:<18} {s.description}")
    print(f"client conformance cases ({len(cases.CASES)}; wsbench conformance --case ID), by "
          "Autobahn|Testsuite's sections:")
    _by_section({g: [(c.id, c.section, c.title) for c in chosen] for g, chosen in cases.by_group().items()})
    print(f"TLS-failure cases ({len(tls_cases.TLS_CASES)}; wsbench conformance --tls --case ID):")
    for case in tls_cases.TLS_CASES:
        print(f"  {case.id:<44} {case.section:<12} {case.title}")
    print(f"server conformance cases ({len(server_cases.CASES)}; wsbench conformance --servers --case ID), by "
          "Autobahn|Testsuite's sections:")
    _by_section({g: [(c.id, c.section, c.title) for c in chosen] for g, chosen in server_cases.by_group().items()})
    _deflate("client", "--deflate", choose.by_group(deflate_cases.CASES, deflate_cases.GROUPS))
    _deflate("server", "--servers --deflate",
             choose.by_group(deflate_server_cases.CASES, deflate_server_cases.SERVER_GROUPS))
    return 0


def _deflate(side: str, flags: str, groups: Mapping[str, Sequence[Any]]) -> None:
    """The permessage-deflate cases of one side, by group: id, RFC 7692 section, title."""
    print(f"{side} deflate conformance cases ({sum(map(len, groups.values()))}; wsbench conformance {flags} --case "
          "ID), permessage-deflate, by group, each with its RFC 7692 section:")
    for group, chosen in groups.items():
        print(f"  {group} ({len(chosen)} cases)")
        for case in chosen:
            print(f"    {case.id:<44} RFC 7692 {case.section:<8} {case.title}")


def _by_section(groups: dict[str, list[tuple[str, str, str]]]) -> None:
    """Each section's line ("6 UTF-8 (370 cases)"), then its cases: id, RFC 6455 section, title."""
    for group, chosen in groups.items():
        print(f"  {cases.group_label(group)} ({len(chosen)} cases)")
        for case_id, section, title in chosen:
            print(f"    {case_id:<44} RFC {section:<6} {title}")
