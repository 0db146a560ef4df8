"""The tracker's tuning: :class:`TrackerOptions`, the costs (nats) and limits of the belief and
the search, and their JSON form for the journal."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from companion.tracking.noise import NoiseModel


@dataclass(frozen=True, slots=True)
class TrackerOptions:
    """Tuning of the belief and the search. Costs are in nats (see ``tracker_noise``).

    :param noise: the camera's noise model.
    :param keep: at most this many potion families are kept (stories that show the same table
        and differ only in the potions, ``companion.tracking.belief.family_key``), each with
        its plausible potion stories (``potion_margin``, ``potion_stories``)…
    :param keep_per_board: …with the expansion, at most this many of them per board
        (:func:`board_key`) while other boards are within ``margin``.
    :param margin: hypotheses costing more than the best + ``margin`` are dropped.
    :param commit_margin: the stories within this of the best are the ones a commit must agree
        with (``companion.tracking.commit``).
    :param potion_margin: a story that shows the same table as a cheaper one and differs only
        in the potions is dropped when one of its players' counts costs more than this above
        it on its own (nats; ``companion.tracking.belief.doubt_costs``: each player's
        card-or-spell doubt is his own, so several players' spells at once are kept as long as
        each alone is likely): the potion alternatives the tracker keeps and shows are the
        likely ones.
    :param ask_margin: hypotheses within this of the best that differ in hidden pieces make the
        tracker ask the players.
    :param beam: search nodes kept per depth.
    :param quick_depths: transitions of the quick passes tried first; their moves only end on
        spaces the picture changed (or a move of the story touched).
    :param exact: a quick pass ends the search with a story whose picture cost, plus how far
        its hypothesis was behind the best one before the frame, is within this (nats): no
        misread field (3.5-3.9 each), grown from a story about as likely as the best. A bound
        that lets one misread through ends the search with a short wrong story before the full
        pass finds a longer true turn (a spell makes a turn three steps long where the quick
        pass tries two); the distance from the best counts too, since an exact picture can be
        reached from a hypothesis far behind the best, by a wrong story.
    :param depth: search transitions per frame in the full pass (a whole turn and a bit). Its
        moves may end on any space: a tower or a wizard moved on to a space and away again in
        the same turn leaves that space as it was, and the true story goes through it.
    :param module_depth: extra transitions in the full pass when expansion modules are in
        play.
    :param deep_depth: transitions in the deep pass, used after a frame that the full pass left
        unexplained (a frame after two turns).
    :param wait_frames: unexplained stable frames before the mismatching spaces are reported.
    :param min_spaces: an observation must read at least this fraction of the spaces.
    :param max_lag: held steps after which stories that disagree only in what no player can
        see (a card count, the order of moves) are committed (``companion.tracking.commit``).
    :param lag_questions: stories that disagree on what the players can see (hidden pieces,
        potions, whose turn) are never committed on the best's cost: they are held, and the
        players are asked after ``max_lag`` held steps (with ``defer``: when that matters,
        :func:`~companion.tracking.questions.pick_question`).
    :param defer: hold stories that differ in what is hidden (and potions) and ask only when
        it matters (``max_hold``, ``hold_boards``, the end of the game; docs/architecture.md,
        "The tracker"). Off: the players are asked about hidden pieces once a later frame
        confirmed the move, and about held stories after ``max_lag`` steps.
    :param potion_stories: at most this many stories in all (the potion stories of the
        ``keep`` families together; each is a state per held step), but at least a few for
        each kept table (``companion.tracking.belief.POTION_FLOOR``).
    :param max_hold: held steps (accepted frames since the last commit) the belief keeps before
        the players are asked what its stories disagree on: the limit of its memory (every
        held step is a state per story, in memory and in each journal snapshot). About a
        round of play with whole-turn frames: most hidden differences are decided by then (a
        lifted tower shows the wizards under it, a later move only one story allows).
    :param hold_boards: at most this many boards (hidden pieces included) are held within
        ``commit_margin``; more are asked about (each needs its slots among the ``keep``
        hypotheses, with its potion stories).
    :param expect_done: players press DONE at the end of a turn (an unannounced turn end costs
        ``cost_implicit_end``).
    :param board_turns: read turn ends from the board as well as from the DONE button
        (docs/architecture.md, "The tracker"): a complete turn (:func:`~companion.tracking.
        candidates.turn_complete`) stays open in the stories, is shown ended while no press is
        pending and the frames show whole turns, and the next frame's search starts from it
        closed as well (``cost_complete_end``); a late press is placed where the next
        player's move showed the end (``cost_late_done``). Off: turn ends come from the
        button, an unannounced one costs ``cost_implicit_end``.
    :param cost_complete_end: prior cost of an unannounced end of a complete turn (every card
        it allows played, redrawn or ended by a move, R-TURN-2/5/6), searched before the
        next frame's first move: nothing is left for the player to do but a spell, so the
        turn has most likely ended and the DONE press was forgotten. Where the frames show
        every move (``action_pace``), or before the tracker knows their pace, the press
        follows the frame of the last move, and ``cost_implicit_end`` is charged instead.
    :param cost_open_complete: unused (kept so that journals written with it load): a turn
        left open is no longer charged, it is one story with its closed continuation.
    :param cost_late_done: prior cost of a DONE press placed one frame before it reached the
        tracker: the frame showing the next player's first move came before the press, and
        the turn end the story found there unannounced was the press's (its cost refunded).
    :param cost_wrong_guess: prior cost of a release guess naming the wrong tower over a sealed
        witch (R-MOD-WITCH-9; ``ln 5``: players find her 4 times in 5).
    :param cost_after_close: prior cost of each move seen in the same frame after a turn end
        nobody announced (the camera usually sees the board between two turns).
    :param cost_after_done: the same after a turn closed by the DONE button: the press came
        somewhere between two frames, and the next player may well have moved before the
        next still frame. Charged while the frames show whole turns; see ``action_pace``.
    :param action_pace: when the frames so far (at least ``pace_frames`` of them with moves)
        showed at most this many moves each on average, the camera sees the table after every
        move, so the turn's last move was seen before its DONE press and a move in the frame
        after the press is the next player's: ``cost_after_done`` is charged instead for a
        move seen in the same frame *before* the press (``cost_before_done``). (Charged every
        turn after the press, it made stories that shift each turn end by one move cheaper than
        the truth after a few turns, and a game committed whole stretches of wrong states.)
    :param cost_before_done: prior cost of a move seen in the same frame before a DONE press
        (0: with whole-turn frames every turn ends so; set from ``action_pace``).
    :param pace_frames: frames with moves needed before ``action_pace`` is judged.
    :param recheck_cost: a space whose reading two frames in a row disagree with the best
        story by at least this much (nats; a misread field at full confidence costs 3.5-4.6)
        makes the tracker search the two frames again (:mod:`companion.tracking.reconcile`).
    :param recheck_beam: the beam of that search (wider than ``beam``: the true story ranked
        behind the one the camera contradicts).
    :param full_beam: the beam of the full and deep passes, which run on a frame the quick
        passes left without an exact picture (:func:`~companion.tracking.reconcile.explain`;
        wider than ``beam``: a turn whose moves must come in one order ranks behind shorter
        stories that explain more spaces at once and then dead-end).
    :param anchor_frames: successive stable frames that must read a space alike (each with
        at least ``anchor_confidence``) and disagree with every held story there by at least
        ``recheck_cost`` before the belief is re-anchored on the board the camera reads
        (:mod:`companion.tracking.anchor`; 0: never). Camera errors come and go from frame to
        frame, a lost belief's disagreement stays; more than one stop's frames, so one still
        board misread the same way twice is not enough.
    :param anchor_confidence: the least detector confidence (0..1) of a space reading a
        re-anchor may rest on.
    :param frame_budget: transitions (a candidate action tried on a searched state) one
        frame's search may try in all passes (0: no bound), and as many again for a recheck
        (:mod:`companion.tracking.reconcile`): the bound on a frame's time. Each searched
        root gets its share, each level of its search its share of what is left, best-ranked
        nodes first; a frame that ran out is counted (``Tracker.cut_frames``).
    :param cache_entries: the search's caches (applied actions, expected views) are emptied
        before a frame once they hold more than this (0: only past
        ``companion.tracking.search.HARD_APPLIED`` / ``HARD_ENTRIES``, also within a frame):
        their memory is bounded by both.
    :param max_belief: held steps (:func:`~companion.tracking.belief.belief_steps`: every
        story's trail since the last commit, its alternative trails included) the belief keeps
        at most (0: no limit): the costliest stories beyond ``commit_margin`` are dropped
        first (:func:`~companion.tracking.belief.capped`).
    """

    noise: NoiseModel = field(default_factory=NoiseModel)
    keep: int = 16
    margin: float = 12.0
    commit_margin: float = 4.0
    potion_margin: float = 4.0
    max_lag: int = 12
    lag_questions: bool = True
    defer: bool = False
    max_hold: int = 30
    potion_stories: int = 48
    hold_boards: int = 3
    ask_margin: float = 2.5
    beam: int = 30
    beam_per_board: int = 2
    keep_per_board: int = 4
    depth: int = 4
    deep_depth: int = 6
    module_depth: int = 1
    deep_roots: int = 3
    full_roots: int = 6
    quick_depths: tuple[int, ...] = (2,)
    exact: float = 3.0
    wait_frames: int = 3
    min_spaces: float = 0.5
    expect_done: bool = True
    cost_card: float = 0.3
    cost_die_move: float = 0.0
    cost_push: float = 2.5
    cost_spell: float = 1.5
    cost_discard: float = 3.0
    cost_implicit_end: float = 9.0
    board_turns: bool = True
    cost_complete_end: float = 0.7
    cost_open_complete: float = 1.5
    cost_late_done: float = 1.0
    cost_pending_done: float = 0.05
    cost_repair: float = 6.0
    cost_after_close: float = 2.0
    cost_after_done: float = 2.0
    cost_before_done: float = 0.0
    action_pace: float = 1.5
    pace_frames: int = 3
    cost_todo: float = 2.0
    page_share: float = 1 / 6
    cost_raven_before: float = 0.1
    cost_protect: float = 1.0
    cost_wrong_guess: float = 1.6
    recheck_cost: float = 3.0
    recheck_beam: int = 60
    full_beam: int = 60
    anchor_frames: int = 4
    anchor_confidence: float = 0.8
    frame_budget: int = 40000
    cache_entries: int = 10000
    max_belief: int = 1500

    @property
    def cost_page(self) -> float:
        """Prior cost (nats) of a card being a witch page card: ``-ln page_share``."""
        return -math.log(self.page_share)

    def to_json(self) -> dict[str, Any]:
        """Every option by name, the noise model as an object of its fields."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            v = getattr(self, name)
            if isinstance(v, NoiseModel):
                v = {n: getattr(v, n) for n in v.__dataclass_fields__}
            out[name] = v
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrackerOptions:
        """:raises ValueError: for an unknown option name or a bad noise model."""
        kw = dict(data)
        unknown = set(kw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"tracker.options.{sorted(unknown)[0]}: unknown option")
        if "noise" in kw:
            noise = kw["noise"]
            if not isinstance(noise, Mapping):
                raise ValueError("tracker.options.noise: expected an object")
            kw["noise"] = NoiseModel(**noise)
        if "quick_depths" in kw:
            kw["quick_depths"] = tuple(int(d) for d in kw["quick_depths"])
        return cls(**kw)
