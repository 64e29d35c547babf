"""Where things live, relative to the repository root."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS_DIR = ROOT / "workloads"
RUNTIMES_FILE = ROOT / "harness" / "runtimes.toml"
REPORTS_DIR = ROOT / "reports"
PROFILES_DIR = ROOT / "profiles"


def relative(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it, for messages."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
