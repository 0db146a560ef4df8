"""Where the wizard network and the colour areas count a top differently (docs/vision.md,
"Wizards"): the top is withheld unless the areas over-count on printed colours and the network
is sure it sees fewer."""

from __future__ import annotations

import pytest

from companion.vision.detector import DetectorConfig
from companion.vision.detector.wizards import fused_wizards

CFG = DetectorConfig()


def sure(margin: float) -> float:
    """How sure (raw) the detector takes a top with this wizard margin."""
    return CFG.wizard_sure(margin)


def test_a_disagreement_on_a_plain_top_is_bounded_and_withheld() -> None:
    counts, margin = fused_wizards(({"yellow": 2}, 0.999), {"yellow": 3}, 0.0, CFG, "plain")
    assert counts == {"yellow": 2}  # the network's counts are the top's
    assert sure(margin) == pytest.approx(CFG.wizard_disagree)


@pytest.mark.parametrize("top", ["crest", "crest-space", "fountain"])
def test_the_network_sure_of_fewer_on_printed_colours_is_not_bounded(top: str) -> None:
    # the crest disc and mark, or a fountain's water, add to a colour's area: one yellow
    # wizard on a crest space measures as two
    counts, margin = fused_wizards(({"yellow": 1}, 0.99), {"yellow": 2}, 0.0, CFG, top)
    assert counts == {"yellow": 1}
    assert sure(margin) == pytest.approx(0.99)


def test_the_network_seeing_more_or_unsure_on_a_crest_is_still_bounded() -> None:
    more = fused_wizards(({"yellow": 1, "blue": 1}, 0.999), {"yellow": 1}, 0.0, CFG, "crest")
    assert sure(more[1]) == pytest.approx(CFG.wizard_disagree)
    unsure = fused_wizards(({"yellow": 1}, 0.9), {"yellow": 2}, 0.0, CFG, "crest")
    assert sure(unsure[1]) == pytest.approx(CFG.wizard_disagree)
    # one colour fewer and another more is no over-count either
    swap = fused_wizards(({"orange": 1}, 0.999), {"yellow": 1}, 0.0, CFG, "crest-space")
    assert sure(swap[1]) == pytest.approx(CFG.wizard_disagree)


def test_clipped_pixels_still_cap_a_released_top() -> None:
    _, margin = fused_wizards(({}, 0.999), {"blue": 2}, 0.3, CFG, "fountain")
    assert margin == pytest.approx(0.2)  # what the clipped pixels hide is unknown


def test_agreeing_counts_keep_the_networks_sureness() -> None:
    _, margin = fused_wizards(({"red": 1}, 0.8), {"red": 1}, 0.0, CFG, "plain")
    assert sure(margin) == pytest.approx(0.8)
