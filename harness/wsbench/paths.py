"""Where things live, relative to the repository root."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS_DIR = ROOT / "workloads"
RUNTIMES_FILE = ROOT / "harness" / "runtimes.toml"
REPORTS_DIR = ROOT / "reports"
