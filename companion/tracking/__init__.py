"""The tracker: a belief over full game states, built on the pure rules core (which never
imports this package). Pure like the rules core: no I/O, no clock, no global random.

The modules, from the bottom up (each imports only those above it):

* :mod:`~companion.tracking.noise` — the camera's noise model: expected views, picture costs;
* :mod:`~companion.tracking.options` — :class:`TrackerOptions`, the costs and limits;
* :mod:`~companion.tracking.belief` — hypotheses, their steps, what makes two the same
  (:func:`board_key`, :func:`state_key`) and pruning;
* :mod:`~companion.tracking.words` — actions in players' words (:func:`describe`);
* :mod:`~companion.tracking.candidates` — the transitions a search node can take next;
* :mod:`~companion.tracking.search` — the beam search that explains one frame;
* :mod:`~companion.tracking.reconcile` — every story that explains a frame, and the recheck of
  a frame the camera contradicts twice;
* :mod:`~companion.tracking.anchor` — the way back for a lost belief: the stories that show
  what the last frames read alike, hidden pieces kept where consistent;
* :mod:`~companion.tracking.questions` — questions for the players and what answers mean;
* :mod:`~companion.tracking.commit` — turning what the stories agree on into history;
* :mod:`~companion.tracking.tracker` — :class:`Tracker`, the orchestrator: inputs, updates,
  undo, corrections, the journal's JSON.
"""

from companion.tracking.belief import board_key, state_key
from companion.tracking.commit import Committed
from companion.tracking.noise import NoiseModel
from companion.tracking.options import TrackerOptions
from companion.tracking.questions import Question
from companion.tracking.tracker import Tracker, TrackerUpdate
from companion.tracking.words import describe

__all__ = [
    "Committed",
    "NoiseModel",
    "Question",
    "Tracker",
    "TrackerOptions",
    "TrackerUpdate",
    "board_key",
    "describe",
    "state_key",
]
