"""What an emulated GPU does with the work units it runs (AMD queues, NVIDIA channels) when one fails.

A unit has `step() -> bool` (made progress), `stopped`, `error` and `name`. A step that raises stops that
unit only and becomes an event for the kernel driver listening (`listener`): "memory_fault", "hang" or
"error". The host process never sees the exception unless no driver listens.
"""
from __future__ import annotations

from gputwin.errors import GpuFault, GpuHang, MemoryFault


class UnitRunner:
    """Mixin for a GPU with `listener`, `stats.events` and a vendor event type built by `_event`."""

    QUIET_KIND = ""        # the event kind that reports progress (an interrupt), never a failure

    def _event(self, kind: str, unit, error: BaseException | None):
        raise NotImplementedError

    def _step(self, unit) -> bool:
        try:
            return unit.step()
        except MemoryFault as e:
            self._stop(unit, self._event("memory_fault", unit, e))
        except GpuHang as e:
            self._stop(unit, self._event("hang", unit, e))
        except Exception as e:  # noqa: BLE001 - any emulator failure stops the unit, never the host
            self._stop(unit, self._event("error", unit, e))
        return False

    def _stop(self, unit, event) -> None:
        unit.stopped, unit.error = True, event.error
        if isinstance(event.error, GpuFault) and event.error.queue is None:
            event.error.queue = unit.name
        self.report(event)

    def report(self, event) -> None:
        self.stats.events.append(event.kind)
        if self.listener is not None:
            self.listener(event)
        elif event.kind != self.QUIET_KIND:
            raise event.error
