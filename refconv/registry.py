"""Backend discovery through the ``refconv.backends`` entry-point group.

Built-in backends register through the very same group as third-party plugins: an entry point
``name = "package.module:backend"`` naming a :class:`refconv.variant.Backend` object (or a
zero-argument callable returning one).
"""
from __future__ import annotations

import fnmatch
import functools
from importlib.metadata import entry_points

from .variant import Backend, Variant
from .variant_id import VariantId

GROUP = "refconv.backends"


class BackendLoadError:
    """Stands in for a backend whose entry point failed to import."""

    def __init__(self, name: str, error: BaseException):
        self.name, self.error = name, error

    def reason(self) -> str:
        return f"failed to load: {type(self.error).__name__}: {self.error}"


@functools.lru_cache(maxsize=None)
def backends() -> dict:
    """``{name: Backend | BackendLoadError}`` for every entry point of the group, sorted by name."""
    found = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in found:
            continue
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, Backend):
                obj = obj()
            if not isinstance(obj, Backend):
                raise TypeError(f"entry point {ep.value} gave {type(obj).__name__}, expected refconv.Backend")
            if obj.name != ep.name:
                raise ValueError(f"entry point {ep.name!r} names a backend called {obj.name!r}")
            found[ep.name] = obj
        except Exception as e:  # a broken plugin must not take the others down
            found[ep.name] = BackendLoadError(ep.name, e)
    return found


class VariantsError:
    """Records a backend whose lazy ``variants()`` raised (or returned another backend's
    variants): the backend loaded, but it has no usable variants."""

    def __init__(self, name: str, error: BaseException):
        self.name, self.error = name, error

    def reason(self) -> str:
        return f"variants() failed: {type(self.error).__name__}: {self.error}"


_variants_failed: dict[str, VariantsError] = {}


@functools.lru_cache(maxsize=None)
def _variants_of(name: str) -> tuple:
    b = backends()[name]
    if isinstance(b, BackendLoadError):
        return ()
    try:
        vs = tuple(b.variants())
        for v in vs:
            if not isinstance(v, Variant):
                raise TypeError(f"backend {name!r} returned {type(v).__name__}, expected refconv.Variant")
            if v.backend != name:
                raise ValueError(f"backend {name!r} returned variant {v.id} of backend {v.backend!r}")
        ids = [v.id for v in vs]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:   # two variants under one id: a run would show two rows no one can tell apart
            raise ValueError(f"backend {name!r} returned the variant id(s) {', '.join(twice)} more than once; "
                             "accepted: each variant of a backend has its own op/name")
    except Exception as e:  # a broken plugin must not take the others down: see broken()
        _variants_failed[name] = VariantsError(name, e)
        return ()
    return vs


def broken(backend: str | None = None) -> dict[str, str]:
    """``{name: reason}`` of the backends (matching the glob ``backend``) that cannot give any
    variant: their entry point failed to import, or their ``variants()`` raised.  They are shown
    as unavailable wherever variants are listed (``refconv list``, ``refconv check``, pytest)."""
    out = {}
    for name, b in backends().items():
        if backend and not fnmatch.fnmatchcase(name, backend):
            continue
        _variants_of(name)
        why = b if isinstance(b, BackendLoadError) else _variants_failed.get(name)
        if why is not None:
            out[name] = why.reason()
    return out


def variants(op: str | None = None, backend: str | None = None, name=None) -> list[Variant]:
    """All variants, optionally filtered by op, backend and a variant-name glob (``fnmatch``);
    ``name`` may also be a glob over the full id (``"filter2d/*/CM_*"``), or a list of such globs
    (a variant matching any of them is kept; registry order, each variant once)."""
    names = [name] if isinstance(name, str) else list(name or [])
    out = []
    for bname in backends():
        if backend and not fnmatch.fnmatchcase(bname, backend):
            continue
        for v in _variants_of(bname):
            if op and not fnmatch.fnmatchcase(v.op, op):
                continue
            if names and not any(fnmatch.fnmatchcase(v.name, n) or fnmatch.fnmatchcase(v.id, n) for n in names):
                continue
            out.append(v)
    return out


def get(variant_id: str) -> Variant:
    """The variant with full id ``op/backend/name``; ``KeyError`` naming the known ids otherwise."""
    vid = VariantId.parse(variant_id)
    for v in variants(op=vid.op, backend=vid.backend):
        if v.name == vid.name:
            return v
    known = ", ".join(v.id for v in variants(op=vid.op)) or "none"
    raise KeyError(f"no variant {variant_id!r}; known for op {vid.op!r}: {known}")


def backend_reason(name: str) -> str | None:
    """Why backend ``name`` cannot run here (``None`` when it can).  The reason may be a
    :class:`refconv.variant.MissingTarget`: a target the user explicitly asked for is missing."""
    b = backends()[name]
    if isinstance(b, BackendLoadError):
        return b.reason()
    _variants_of(name)
    if name in _variants_failed:
        return _variants_failed[name].reason()
    return b.available()


def target(name: str):
    """The :class:`refconv.variant.Target` backend ``name`` runs on now, or None when it does not
    say (or cannot be asked: not installed, unavailable, its ``target()`` raised)."""
    b = backends().get(name)
    if not isinstance(b, Backend) or b.target is None or backend_reason(name):
        return None
    try:
        return b.target()
    except Exception:
        return None


def simulated_reason(variant, profile) -> str | None:
    """Why ``profile`` refuses ``variant`` (it draws GPU-scale problems and the variant's backend
    runs on a simulator), or None."""
    if not getattr(profile, "real_targets_only", False):
        return None
    t = target(variant.backend)
    if t is not None and t.simulated:
        hint = real_target(variant.backend)
        return (f"profile {profile.name!r} draws seed-scale problems (3072² images, 125 GiB Kronecker "
                f"products); {variant.backend} runs on {t.name}, a simulator, where that takes days: use "
                f"--profile ci or dev there" + (f", or a real target ({hint})" if hint else ""))
    return None


def _loaded() -> list[Backend]:
    return [b for b in backends().values() if isinstance(b, Backend)]


def env_prefixes() -> tuple[str, ...]:
    """The prefixes of the environment variables a worker process inherits: ``REFCONV_`` and every
    loaded backend's ``Backend.env_prefixes``, sorted, without repeats."""
    return tuple(sorted({"REFCONV_", *(p for b in _loaded() for p in b.env_prefixes)}))


def version_modules() -> tuple[str, ...]:
    """The modules whose versions ``refconv bench`` records for the backends: every loaded
    backend's ``Backend.versions``, in order of backend name, without repeats."""
    return tuple(dict.fromkeys(m for b in _loaded() for m in b.versions))


def real_target(name: str) -> str:
    """``Backend.real_target`` of backend ``name`` (how to select a real target), ``""`` when it
    does not say or is not loaded."""
    b = backends().get(name)
    return b.real_target if isinstance(b, Backend) else ""
