"""The report's derived figures as JSON (results.json): the scoreboard and the scores
as numbers, and every section's tables as headers and rows. The measurements themselves
are in the run file it was rendered from."""

from __future__ import annotations

import json
from typing import Any

from ..doc import Bullets, Chart, Grid, Report
from . import derived


class JsonExporter:
    def render(self, report: Report) -> str:
        assert report.run is not None, "the JSON's figures are derived from a run"
        return derived_json(report)


EXPORTER = JsonExporter()


def derived_json(report: Report) -> str:
    run = report.run
    assert run is not None
    board = [{"workload": ln.workload, "server": ln.server, "metric": ln.metric, "median": ln.quickjs.median,
              "rank": ln.rank, "of": ln.of, "loses": ln.loses,
              **{name: None if v is None else {"client": v.client, "advantage": v.advantage, "overlap": v.overlap}
                 for name, v in (("best_jit", ln.best_jit), ("native", ln.native), ("baseline", ln.baseline))}}
             for ln in derived.scoreboard(run)]
    scores = {side: [{"name": s.name, "geomean": s.geomean, "tables": s.groups, "worst": s.worst}
                     for s in derived.scores(run, side)] for side in ("client", "server")}
    sections = [{"title": s.title, "blocks": [_block(b) for b in s.blocks if not isinstance(b, Chart)]}
                for s in report.sections]
    return json.dumps({"title": report.title, "source": report.source, "facts": report.facts,
                       "scoreboard": board, "scores": scores, "sections": sections}, indent=1) + "\n"


def _block(block: Any) -> Any:
    if isinstance(block, Grid):
        return {"headers": block.headers, "rows": block.rows}
    if isinstance(block, Bullets):
        return {"items": block.items}
    return {"text": block}
