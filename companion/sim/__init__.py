"""What stands in for the world: never imported by the run-time packages.

* :mod:`companion.sim.render` / :mod:`~companion.sim.render_textures` — the table renderer: a
  camera frame of any ``GameState`` from any pose, light and camera model (hands included).
* :mod:`companion.sim.simtable` / :mod:`~companion.sim.simrender` /
  :mod:`~companion.sim.simulation` — the simulated table and its camera process, the embedded
  default of ``companion run`` without a camera.
* :mod:`companion.sim.bots` and :mod:`companion.sim.simulate` — seeded bot players and the truth
  simulator (noisy observations of a bot game); :mod:`~companion.sim.seeds` — figures over
  many games and seeds (``companion bench tracking --seeds``).
* :mod:`companion.sim.faketable` / :mod:`~companion.sim.webdev` — a self-playing table behind the
  web pages, for page development.
* :mod:`companion.sim.testing` — drive a companion on the simulated table from tests and benches.
* :mod:`companion.sim.docs_images` — the README's pictures, made by the code itself.
"""
