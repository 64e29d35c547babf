"""The TLS track in a report (runs of ``wsbench run --tls on|both``): what each cell
negotiated, as the client and the server told it, and what TLS costs, from ``ws://`` and
``wss://`` cells of the same interleaved run.

A server ``NAME/wss`` is the TLS twin of ``NAME`` (runner.tls_axis), so a pair of cells
``(workload, NAME, client)`` and ``(workload, NAME/wss, client)`` differ in TLS alone.
"""

from __future__ import annotations

import statistics
from typing import Any

from ..doc import Grid, Section
from .derived import median_text, ratio_text, twin_pairs
from ..ranking import label, values
from ..model import Cell, Run

TWIN = "/wss"
SOURCE_NOTE = ("version, cipher and group as the client tells them (c), or, where its runtime cannot tell, as "
               "the server printed them for the cell's connections (s; servers/README.md, WSBENCH-TLS)")


def header(run: Run) -> list[str]:
    """The report's facts line about TLS: the axis, the certificate, what was negotiated."""
    tls = run.settings.get("tls")
    if not tls:
        return []
    if run.conformance is not None and not run.workloads:
        failing = tls.get("failure_certificates") or {}
        return [f"TLS: the conformance peer over wss://, certificate {tls.get('certificate')} ({tls.get('key_type')}, "
                f"for {', '.join(tls.get('names') or [])}), signed by the test CA {tls.get('ca')}, the only CA the "
                "clients trust" + (f"; the TLS-failure cases present {', '.join(failing.values())}" if failing else "")]
    agreed = sorted({_negotiated(c)[0] for c in run.cells if c.server.endswith(TWIN) and c.ok_samples} - {"–"})
    return [f"TLS: servers over {'ws:// and wss://, interleaved' if tls.get('mode') == 'both' else 'wss://'}; "
            f"certificate {tls.get('certificate')} ({tls.get('key_type')}, for {', '.join(tls.get('names') or [])}), "
            f"signed by the test CA {tls.get('ca')}, the only CA the clients trust; certificate and host name "
            f"verified on every connection; negotiated: {'; '.join(agreed) or 'not told'}"]


def sections(run: Run) -> list[Section]:
    if not run.settings.get("tls"):
        return []
    return [s for s in (_cost(run), _negotiated_section(run)) if s is not None]


def _first(cell: Cell, key: str) -> dict[str, Any]:
    for s in cell.ok_samples:
        value = s.extra.get(key)
        if isinstance(value, dict):
            return value
    return {}


def _negotiated(cell: Cell) -> tuple[str, str]:
    """("TLSv1.3, TLS_AES_256_GCM_SHA384, x25519", "c"/"s"/"c+s"): the client's account
    where it gives one, else the server's."""
    client, server = _first(cell, "tls"), _first(cell, "server_tls")
    fields = ("version", "cipher", "group")
    parts, sources = [], set()
    for f in fields:
        if client.get(f):
            parts.append(str(client[f]))
            sources.add("c")
        elif server.get(f):
            parts.append(str(server[f]))
            sources.add("s")
        else:
            parts.append("?")
    if not sources:
        return "–", ""
    return ", ".join(parts), "+".join(sorted(sources))


def _resumed(cell: Cell) -> str:
    counts = [(s.extra["server_tls"].get("resumed"), s.extra["server_tls"].get("connections"))
              for s in cell.ok_samples if isinstance(s.extra.get("server_tls"), dict)]
    known = [(r, n) for r, n in counts if r is not None and n]
    if not known:
        return "not told"
    resumed, total = sum(r for r, _ in known), sum(n for _, n in known)
    return f"{resumed:,} of {total:,}"


def _negotiated_section(run: Run) -> Section | None:
    grid = Grid(["workload", "client", "server", "negotiated", "told by", "resumed (server's count)",
                 "client's TLS library", "server's TLS library"], right={5})
    for cell in run.cells:
        if not cell.server.endswith(TWIN) or not cell.ok_samples:
            continue
        agreed, source = _negotiated(cell)
        client, server = _first(cell, "tls"), _first(cell, "server_tls")
        client_lib = client.get("library") or ("cannot tell: " + client["cannot_tell"] if client.get("cannot_tell")
                                               else "cannot tell")
        grid.add([cell.workload, label(run, "clients", cell.client), label(run, "servers", cell.server), agreed,
                  source or "–", _resumed(cell), client_lib, server.get("library") or "cannot tell (prints nothing)"])
    if not grid.rows:
        return None
    return Section("TLS: what was negotiated", [
        f"Per wss:// cell: {SOURCE_NOTE}. \"resumed\" counts the cell's connections whose TLS session the "
        "server says was resumed (all repetitions). A runtime that cannot tell says so; nothing is assumed.",
        grid])


def _cost(run: Run) -> Section | None:
    pairs = twin_pairs(run, TWIN)
    if not pairs:
        return None
    kinds = {name: w.get("kind") for name, w in run.workloads.items()}
    rates = Grid(["workload", "client", "server", "rate ws://", "rate wss://", "wss ÷ ws rate",
                  "client CPU µs/msg ws → wss", "wss ÷ ws client CPU", "server CPU µs/msg ws → wss",
                  "wss ÷ ws server CPU"], right={3, 4, 5, 6, 7, 8, 9})
    shakes = Grid(["client", "server", "handshakes/s ws → wss", "client CPU µs per handshake ws → wss",
                   "server CPU µs per handshake ws → wss", "resumed on wss (server's count)"], right={2, 3, 4})
    memory = Grid(["workload", "client", "server", "connections", "client peak RSS KiB/conn ws → wss",
                   "client TLS KiB/conn", "server peak RSS KiB/conn ws → wss", "server TLS KiB/conn"],
                  right={3, 4, 5, 6, 7})
    for plain, secure in pairs:
        who = [label(run, "clients", plain.client), label(run, "servers", plain.server)]
        kind = kinds.get(plain.workload)
        if kind == "handshake":
            shakes.add([*who, f"{median_text(plain, 'handshakes_per_s', digits=0)} → "
                              f"{median_text(secure, 'handshakes_per_s', digits=0)}",
                        f"{median_text(plain, 'client_cpu_us_per_msg', digits=0)} → "
                        f"{median_text(secure, 'client_cpu_us_per_msg', digits=0)}",
                        f"{median_text(plain, 'server_cpu_us_per_msg', digits=0)} → "
                        f"{median_text(secure, 'server_cpu_us_per_msg', digits=0)}", _resumed(secure)])
            continue
        metric = "msgs_per_s" if kind == "echo" else None
        if metric:
            rates.add([plain.workload, *who, median_text(plain, metric, digits=0), median_text(secure, metric, digits=0),
                       ratio_text(plain, secure, metric),
                       f"{median_text(plain, 'client_cpu_us_per_msg')} → {median_text(secure, 'client_cpu_us_per_msg')}",
                       ratio_text(plain, secure, "client_cpu_us_per_msg"),
                       f"{median_text(plain, 'server_cpu_us_per_msg')} → {median_text(secure, 'server_cpu_us_per_msg')}",
                       ratio_text(plain, secure, "server_cpu_us_per_msg")])
        conns = int(run.workloads.get(plain.workload, {}).get("params", {}).get("connections", 1) or 1)
        if conns >= 100:
            memory.add([plain.workload, *who, f"{conns:,}", *_per_conn(plain, secure, "client", conns),
                        *_per_conn(plain, secure, "server", conns)])
    blocks: list[Any] = [
        "Each `wss://` cell beside its `ws://` twin from the same interleaved run: the same client, server and "
        "workload, TLS the only difference. Ratios are wss:// over ws:// with their 95 % bootstrap interval "
        "(rate below 1: TLS is slower; CPU above 1: TLS costs more)."]
    for title, grid in (("Throughput and CPU per message", rates), ("Handshakes: a full TLS and WebSocket "
                        "handshake per connection", shakes), ("Memory per connection", memory)):
        if grid.rows:
            blocks += [f"**{title}**", grid]
    if memory.rows:
        blocks.append("Peak RSS per connection is the process's peak RSS over the connections it held (its base "
                      "memory included); \"TLS KiB/conn\" is (peak RSS over wss:// − over ws://) / connections: "
                      "what TLS adds to each connection.")
    return Section("What TLS costs", blocks)


def _per_conn(plain: Cell, secure: Cell, side: str, conns: int) -> list[str]:
    metric = f"{side}_peak_rss_mib"
    a, b = values(plain, metric), values(secure, metric)
    if not a or not b:
        return ["–", "–"]
    ma, mb = statistics.median(a) * 1024 / conns, statistics.median(b) * 1024 / conns
    return [f"{ma:,.1f} → {mb:,.1f}", f"{mb - ma:+,.1f}"]
