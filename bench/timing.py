"""Repeated measurements and how a table cell shows them: median, with min–max when repeated.

Shared by bench/run.py (fresh processes) and bench/peers.py (pages in headless Chromium).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

__all__ = ["Timing"]


@dataclass
class Timing:
    """Repeated values (seconds unless ``unit`` says ms) and the largest peak memory (KiB).

    ``note`` qualifies the figures or, with no figures, says why there are none
    (``> 180 s (timed out)``, ``failed: …``).
    """

    times: list[float] = field(default_factory=list)
    #: Each run's CPU seconds spent in the program itself (user time) and in the kernel on its
    #: behalf (system time: mostly giving it fresh memory), where the run reported them.
    user: list[float] = field(default_factory=list)
    system: list[float] = field(default_factory=list)
    peak_kib: int = 0
    note: str = ""
    unit: str = "s"
    #: The timeout, when the measurement ran out of time (so the true value is above it).
    limit: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    def _fmt(self, value: float) -> str:
        if self.unit == "ms":
            return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
        return f"{value:.2f}"

    def cell(self) -> str:
        if self.note and not self.times:
            return self.note
        if not self.times:
            return "–"
        lo, hi = min(self.times), max(self.times)
        text = f"{self._fmt(self.median)} {self.unit}"
        if len(self.times) > 1:
            text += f" ({self._fmt(lo)}–{self._fmt(hi)})"
        return text + (f" {self.note}" if self.note else "")
