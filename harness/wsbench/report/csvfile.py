"""The report as CSV (results.csv) for spreadsheets and notebooks: one row per cell and
metric, with the summary and every repetition's raw value (empty where it failed). The
95 % interval is given for the workload's ranking metric only (the bootstrap of every
metric of every cell would take seconds); the raw values are there for any other."""

from __future__ import annotations

import csv
import io
import statistics

from ..metrics import METRICS
from ..ranking import label, workload_metric
from ..doc import Report
from ..model import Run
from .check_marks import csv_fields

FIXED = ["workload", "server", "client", "server_label", "client_label", "status", "metric", "header",
         "higher_is_better", "n", "median", "ci95_low", "ci95_high", "cv", "note", "conformance", "checks_skipped"]


class CsvExporter:
    def render(self, report: Report) -> str:
        assert report.run is not None, "a CSV is rendered from a run"
        return cells_csv(report.run)


EXPORTER = CsvExporter()


def cells_csv(run: Run) -> str:
    reps = max([run.repetitions] + [s.rep for c in run.cells for s in c.samples])
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(FIXED + [f"rep_{i}" for i in range(1, reps + 1)])
    for cell in run.cells:
        who = [cell.workload, cell.server, cell.client, label(run, "servers", cell.server),
               label(run, "clients", cell.client), cell.status]
        note = cell.na or cell.blocked or "; ".join(cell.errors)
        checks = list(csv_fields(run, cell))
        rows = 0
        ranking = workload_metric(run, cell.workload)
        for metric in METRICS.values():
            raw = {s.rep: v for s in cell.ok_samples for v in [metric.get(s)] if v is not None}
            if not raw:
                continue
            rows += 1
            s = cell.summary(metric.name) if metric.name == ranking else None
            vs = list(raw.values())
            cv = s.cv if s else (statistics.stdev(vs) / statistics.fmean(vs)
                                 if len(vs) > 1 and statistics.fmean(vs) else None)
            out.writerow(who + [metric.name, metric.header, metric.higher_is_better, len(vs), statistics.median(vs),
                                s.ci95[0] if s else "", s.ci95[1] if s else "", "" if cv is None else cv, note, *checks]
                         + ["" if raw.get(i) is None else raw[i] for i in range(1, reps + 1)])
        if not rows:
            out.writerow(who + [""] * (len(FIXED) - len(who) - 3) + [note, *checks] + [""] * reps)
    return buf.getvalue()
