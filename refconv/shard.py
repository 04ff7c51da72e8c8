"""``refconv check --shard K/N``: a stable split of the selected variants into ``N`` shards.

A variant belongs to shard ``1 + (first 8 bytes of SHA-256(variant id), big-endian) mod N``.  The
rule depends only on the id and ``N``: the same variant always lands in the same shard, on every
machine and in every Python (no ``hash()`` randomisation), and adding or removing another variant
moves nothing else.  The split is by count of variants, not by their cost, and for a small
selection it can be uneven; when ``N`` exceeds the number of selected variants some shards are
empty.  An empty shard checks nothing and exits 0 (its report says which shard it was, so that
``refconv merge`` can still verify that every shard of the run is there).
"""
from __future__ import annotations

import hashlib
import re
from typing import Sequence, TypeVar

from .errors import UsageError

T = TypeVar("T")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → ``(K, N)`` with ``1 <= K <= N``; ``UsageError`` naming ``--shard`` otherwise."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise UsageError(f"--shard {text!r}: expected K/N, shard K of N, e.g. 2/4")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"--shard {text!r}: K must be between 1 and N and N >= 1 (accepted: 1/{max(n, 1)} .. "
                         f"{max(n, 1)}/{max(n, 1)})")
    return k, n


def shard_of(variant_id: str, n: int) -> int:
    """The shard (1..n) that ``variant_id`` belongs to."""
    digest = hashlib.sha256(variant_id.encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % n


def select(items: Sequence[T], k: int, n: int, key=lambda v: v.id) -> list[T]:
    """The items of shard ``k`` of ``n``, in their original order."""
    return [v for v in items if shard_of(key(v), n) == k]
