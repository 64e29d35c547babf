"""Reading a file that must hold one JSON object, with a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import WsbenchError


def read_object(path: Path, name: str, missing: str = ": file not found", hint: str = "") -> dict[str, Any]:
    """The object in ``path``; errors start with ``name`` (how the user knows the file),
    go on with ``missing`` when it is not there, and end with ``hint`` (e.g. "; run:
    make setup")."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise WsbenchError(f"{name}{missing}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise WsbenchError(f"{name}: not readable JSON ({exc}){hint}") from None
    if not isinstance(data, dict):
        raise WsbenchError(f"{name}: not a JSON object{hint}")
    return data
