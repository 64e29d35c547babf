"""``wsbench list``: the runtimes, servers, clients, workloads, suites and conformance cases
(the RFC 6455 cases and the TLS-failure set; the server cases by section)."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..conformance import cases, tls_cases
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
    print("conformance cases (wsbench conformance --case ID):")
    for case in cases.CASES:
        print(f"  {case.id:<24} {case.section:<6} {case.title}")
    print("TLS-failure cases (wsbench conformance --tls; --case ID):")
    for case in tls_cases.TLS_CASES:
        print(f"  {case.id:<24} {case.section:<12} {case.title}")
    print(f"server conformance cases ({len(server_cases.CASES)}; wsbench conformance --servers --case ID), by "
          "Autobahn|Testsuite's sections:")
    for group, chosen in server_cases.by_group().items():
        print(f"  {group} {server_cases.GROUPS[group]} ({len(chosen)} cases)")
        for sc in chosen:
            print(f"    {sc.id:<44} {sc.section:<6} {sc.title}")
    return 0
