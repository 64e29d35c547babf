"""Choosing the permessage-deflate cases (``--case ID`` or a pattern, ``--quick``), and
the cases by group, as ``wsbench list`` shows them, for both sides."""

from __future__ import annotations

from typing import Sequence, TypeVar

from ..conformance.script import chosen_ids
from . import pmd_client_cases as client_cases, pmd_server_cases as server_cases

T = TypeVar("T", client_cases.Case, server_cases.DeflateServerCase)

# a few cases of every group, a few seconds per program
CLIENT_QUICK = ("pmd-answer-plain", "pmd-answer-server-max-window-bits-16", "pmd-answer-extension-not-offered",
                "pmd-text-1kib-x3-takeover", "pmd-binary-64kib-x3-no-takeover", "pmd-window-bits-9",
                "pmd-fragmented-text-64kib-4", "pmd-rsv1-continuation", "pmd-not-deflate")
SERVER_QUICK = ("pmd-offer-plain", "pmd-offer-server-no-context-takeover", "pmd-decline-server-max-window-bits-16",
                "pmd-echo-text-1kib-x3-takeover", "pmd-echo-binary-64kib-x3-no-takeover", "pmd-window-bits-9",
                "pmd-fragmented-text-64kib-4", "pmd-rsv1-continuation", "pmd-not-deflate")


def _chosen(cases: Sequence[T], quick: tuple[str, ...], ids: list[str] | None, with_quick: bool) -> list[T]:
    wanted = chosen_ids([c.id for c in cases], quick, ids, with_quick)
    return [c for c in cases if c.id in wanted]


def clients(ids: list[str] | None, quick: bool = False) -> list[client_cases.Case]:
    """The client cases named (ids or shell patterns), the quick subset with ``quick``; all
    when neither. Raises KeyError with a name that matches no case."""
    return _chosen(client_cases.CASES, CLIENT_QUICK, ids, quick)


def servers(ids: list[str] | None, quick: bool = False) -> list[server_cases.DeflateServerCase]:
    return _chosen(server_cases.CASES, SERVER_QUICK, ids, quick)


def by_group(cases: Sequence[T], groups: dict[str, str]) -> dict[str, list[T]]:
    """The cases by group, in ``groups``' order, each group as "pmd-messages (compressed messages)"."""
    return {f"{g} ({name})": [c for c in cases if c.group == g] for g, name in groups.items()
            if any(c.group == g for c in cases)}
