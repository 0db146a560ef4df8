"""The running companion: threads, queue, heartbeats, record and replay.

* :mod:`companion.service.app` — :class:`~companion.service.app.Companion` wires frame source,
  detector, tracker, journal, web and LEDs (docs/architecture.md, "Threads").
* :mod:`companion.service.core` — :class:`~companion.service.core.CompanionService`, the one
  queue (:mod:`~companion.service.inputs`) and the published snapshots (implements
  ``companion.web.service.TableService``).
* :mod:`companion.service.driver` — the :class:`~companion.service.driver.GameDriver` protocol
  and the frozen state it publishes; :mod:`companion.service.tracked` — the tracker with its
  journal, which implements it.
* :mod:`companion.service.table` — the :class:`~companion.service.table.TableSimulation`
  protocol: the simulated table (``companion.sim``) is handed in by ``companion.cli``, never
  imported here.
* :mod:`companion.service.record` — ``companion record`` / ``companion replay``.
* :mod:`companion.service.cli` — the command-line entry points.
"""
