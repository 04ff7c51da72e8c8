"""Reading the JSON files refconv writes (check reports, reproducers, bench reports), with one
error per way a file can be wrong, naming the file."""
from __future__ import annotations

import json
from pathlib import Path

from .errors import UsageError


def read_json(path, what: str):
    """The document in the JSON file ``path``: a file the user names, so ``UsageError`` when there
    is no such file or it is not JSON, naming ``what`` (e.g. ``"bench report"``) and the path."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} {str(path)!r} does not exist or is not a file")
    try:
        return json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{what} {str(path)!r}: invalid JSON ({e})") from None
