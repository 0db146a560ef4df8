"""Phones that come and go (`companion bench phones`, short): every phone ends on a live
stream, and no live stream skips a state."""

from __future__ import annotations

import pytest

from companion.sim.phones import run


@pytest.mark.long
def test_phones_that_leave_sleep_and_reload_all_end_on_live_streams() -> None:
    # a state every 0.4 s: long enough that a stream thread woken late on a busy test machine
    # still delivers each one (the bench measures the service's real pace)
    figures = run(phones=6, seconds=12.0, churn_s=1.5, quiet_s=4.0, seed=3, period_s=0.4)
    assert figures["versions"] > 20
    assert figures["streams_opened"] > 6  # the churn reconnected phones
    assert figures["stuck_on_polling"] == 0, figures
    assert figures["missed_on_live_streams"] == 0, figures
    assert figures["behind_at_end"] == 0, figures
