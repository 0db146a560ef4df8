"""Which parts of the companion are installed, imported lazily with a clear reason when missing.

The service wires parts that are built independently (rules core, tracker, journal, detector,
renderer, hardware, web). A part that cannot be imported is reported by name — on the terminal,
in ``/healthz`` and on the host page — and the service runs with what is there instead of crashing.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from types import ModuleType

PART_MODULES: dict[str, str] = {
    "rules": "companion.rules",
    "bots": "companion.sim.bots",
    "tracker": "companion.tracking.tracker",
    "journal": "companion.journal",
    "sources": "companion.vision.sources",
    "camera": "companion.vision.camera",
    "geometry": "companion.vision.geometry",
    "markers": "companion.vision.markers",
    "render": "companion.sim.render",
    "profile": "companion.vision.profile",
    "detector": "companion.vision.detector",
    "stability": "companion.vision.stability",
    "hardware": "companion.hardware",
    "web": "companion.web.app",
    "qr": "companion.web.qr",
}
"""Part name -> module that provides it."""


@dataclass(frozen=True)
class PartStatus:
    name: str
    module: str
    ok: bool
    reason: str = ""


class Parts:
    """Lazy, cached imports of the parts, remembering why a part is missing.

    :param disabled: part names to treat as missing (tests use it to prove the service keeps
        running without a part).
    """

    def __init__(self, disabled: frozenset[str] = frozenset()) -> None:
        self._disabled = disabled
        self._cache: dict[str, ModuleType | None] = {}
        self._status: dict[str, PartStatus] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> ModuleType | None:
        """The part's module, or None when it is missing (reason in :meth:`status`)."""
        with self._lock:
            if name in self._cache:
                return self._cache[name]
            module_name = PART_MODULES[name]
            module: ModuleType | None = None
            if name in self._disabled:
                status = PartStatus(name, module_name, False, "disabled")
            else:
                try:
                    module = importlib.import_module(module_name)
                    status = PartStatus(name, module_name, True)
                except ImportError as exc:
                    status = PartStatus(name, module_name, False, f"not installed yet ({exc})")
                except Exception as exc:  # a part that fails at import is reported, not fatal
                    status = PartStatus(
                        name, module_name, False, f"fails to import: {type(exc).__name__}: {exc}"
                    )
            self._cache[name] = module
            self._status[name] = status
            return module

    def has(self, name: str, *attributes: str) -> bool:
        """True when the part is importable and provides every attribute named."""
        module = self.get(name)
        if module is None:
            return False
        missing = [a for a in attributes if not hasattr(module, a)]
        if missing:
            with self._lock:
                self._status[name] = PartStatus(
                    name, PART_MODULES[name], False, f"lacks {', '.join(missing)}"
                )
            return False
        return True

    def status(self, name: str) -> PartStatus:
        self.get(name)
        with self._lock:
            return self._status[name]

    def missing_line(self, *names: str) -> str:
        """``"tracker (companion.tracking.tracker: not installed yet …)"`` for each missing part."""
        out = []
        for n in names:
            s = self.status(n)
            if not s.ok:
                out.append(f"{n} ({s.module}: {s.reason})")
        return "; ".join(out)

    def report(self) -> dict[str, dict[str, object]]:
        for n in PART_MODULES:
            self.get(n)
        with self._lock:
            return {
                n: {"ok": s.ok, "module": s.module, "reason": s.reason}
                for n, s in self._status.items()
            }
