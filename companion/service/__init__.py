"""The running companion: threads, queue, heartbeats, the simulated table, record and replay.

* :mod:`companion.service.app` — :class:`~companion.service.app.Companion` wires frame source,
  detector, tracker, journal, web and LEDs (architecture.md, "Threads in the running service").
* :mod:`companion.service.core` — :class:`~companion.service.core.CompanionService`, the one
  queue and the published snapshots (implements ``companion.web.service.TableService``).
* :mod:`companion.sim.simulation` / :mod:`~companion.sim.simtable` — the embedded
  simulated table (seeded bots, rendered frames).
* :mod:`companion.service.record` — ``companion record`` / ``companion replay``.
* :mod:`companion.service.cli` — the command-line entry points.
"""
