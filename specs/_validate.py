"""Argument validation shared by the specs.

Every failure raises ``ValueError`` (bad value / shape / option) or ``TypeError`` (bad type or
dtype) whose message names the argument, what was given and what is accepted.  Input arrays of
either byte order are accepted and converted to the machine's (:func:`native`); an array the spec
writes into (``kron_blocks``'s ``out``) must already have the result's native dtype, and a
message about it names the byte order (:func:`dtype_name`).
"""
from __future__ import annotations

import numbers

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
INT_OUT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32))


def _names(dtypes) -> str:
    return "{" + ", ".join(np.dtype(d).name for d in dtypes) + "}"


def dtype_name(dt) -> str:
    """``dt``'s name, with its byte order when that is not the machine's (``float32, big-endian``):
    two dtypes that print the same but differ in byte order must not read as the same."""
    dt = np.dtype(dt)
    if dt.isnative:
        return dt.name
    return f"{dt.name}, {'big' if dt.byteorder == '>' else 'little'}-endian"


def native(a: np.ndarray) -> np.ndarray:
    """``a`` in the machine's byte order (a converted copy when it is not): the specs accept inputs
    of either byte order and compute on native values, so a big-endian float32 image is a float32
    image."""
    if a.dtype.isnative:
        return a
    return a.astype(a.dtype.newbyteorder("="))


def as_array(name: str, x, *, ndims=None, dtypes=None, op: str = "") -> np.ndarray:
    """Return ``x`` as an ndarray after checking its number of dimensions and dtype."""
    where = f"{op}: " if op else ""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{where}{name} must be an array, got {type(x).__name__}")
    try:
        a = np.asarray(x)
    except Exception as e:  # pragma: no cover - exotic objects
        raise TypeError(f"{where}{name} must be an array, got {type(x).__name__} ({e})") from None
    if a.dtype == object:
        raise TypeError(f"{where}{name} must be a numeric array, got dtype object")
    a = native(a)
    if ndims is not None:
        ndims = (ndims,) if isinstance(ndims, int) else tuple(ndims)
        if a.ndim not in ndims:
            raise ValueError(f"{where}{name} must have {' or '.join(map(str, ndims))} dimensions, "
                             f"got shape {a.shape} ({a.ndim} dimensions)")
    if dtypes is not None and a.dtype not in [np.dtype(d) for d in dtypes]:
        raise TypeError(f"{where}{name} has dtype {a.dtype.name}; accepted: {_names(dtypes)}")
    return a


def choice(name: str, value, accepted, op: str = ""):
    where = f"{op}: " if op else ""
    ok = False
    for a in accepted:
        if type(a) is type(value) and a == value:
            ok = True
    if value is None and None in accepted:
        ok = True
    if not ok:
        raise ValueError(f"{where}{name}={value!r} is not accepted; accepted: {tuple(accepted)!r}")
    return value


def boolean(name: str, value, op: str = "") -> bool:
    where = f"{op}: " if op else ""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{where}{name} must be a bool, got {value!r} ({type(value).__name__})")
    return bool(value)


def integer(name: str, value, *, lo=None, hi=None, op: str = "") -> int:
    where = f"{op}: " if op else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}{name} must be an int, got {value!r} ({type(value).__name__})")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
        raise ValueError(f"{where}{name}={v} is out of range; accepted: integers in {rng}")
    return v


def int_pair(name: str, value, *, lo: int, op: str = "") -> tuple:
    """An int or a pair of ints (each ``>= lo``) -> a pair."""
    where = f"{op}: " if op else ""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{where}{name}={value!r}: a pair must have 2 elements, got {len(value)}; "
                             f"accepted: an int >= {lo} or a pair of them")
        return tuple(integer(f"{name}[{k}]", v, lo=lo, op=op) for k, v in enumerate(value))
    v = integer(name, value, lo=lo, op=op)
    return (v, v)


def dtype_arg(name: str, value, accepted, op: str = "") -> np.dtype:
    where = f"{op}: " if op else ""
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"{where}{name}={value!r} is not a dtype; accepted: {_names(accepted)}") from None
    if dt not in [np.dtype(a) for a in accepted]:
        raise TypeError(f"{where}{name}={dt.name} is not accepted; accepted: {_names(accepted)}")
    return dt
