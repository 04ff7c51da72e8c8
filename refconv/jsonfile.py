"""Reading the JSON files refconv writes (check reports, reproducers, bench reports), with one
error per way a file can be wrong, naming the file."""
from __future__ import annotations

import json
from pathlib import Path


def read_json(path, what: str):
    """The document in the JSON file ``path``.  ``FileNotFoundError`` when there is no such file,
    ``ValueError`` when it is not JSON; both name ``what`` (e.g. ``"bench report"``) and the path."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{what} {str(path)!r} does not exist or is not a file")
    try:
        return json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{what} {str(path)!r}: invalid JSON ({e})") from None
