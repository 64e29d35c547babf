"""The report as CSV (results.csv) for spreadsheets and notebooks: one row per cell and
metric, with the summary and every repetition's raw value (empty where it failed)."""

from __future__ import annotations

import csv
import io

from ..metrics import METRICS
from ..ranking import label
from ..results import Run

FIXED = ["workload", "server", "client", "server_label", "client_label", "status", "metric", "header",
         "higher_is_better", "n", "median", "ci95_low", "ci95_high", "cv", "note"]


def render(run: Run) -> str:
    reps = max([run.repetitions] + [s.rep for c in run.cells for s in c.samples])
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(FIXED + [f"rep_{i}" for i in range(1, reps + 1)])
    for cell in run.cells:
        who = [cell.workload, cell.server, cell.client, label(run, "servers", cell.server),
               label(run, "clients", cell.client), cell.status]
        note = cell.na or cell.blocked or "; ".join(cell.errors)
        rows = 0
        for metric in METRICS.values():
            raw = {s.rep: metric.get(s) for s in cell.ok_samples}
            s = cell.summary(metric.name)
            if s is None:
                continue
            rows += 1
            out.writerow(who + [metric.name, metric.header, metric.higher_is_better, s.n, s.median, s.ci95[0],
                                s.ci95[1], "" if s.cv is None else s.cv, note]
                         + ["" if raw.get(i) is None else raw[i] for i in range(1, reps + 1)])
        if not rows:
            out.writerow(who + [""] * (len(FIXED) - len(who) - 1) + [note] + [""] * reps)
    return buf.getvalue()
