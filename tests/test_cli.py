"""The top-level command line lists its commands and refuses unknown ones."""

from companion.cli import main


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("run", "rules", "calibrate", "bench", "record", "replay"):
        assert name in out


def test_unknown_command_exits_2(capsys):
    assert main(["fly-to-the-moon"]) == 2
    assert "unknown command" in capsys.readouterr().err
