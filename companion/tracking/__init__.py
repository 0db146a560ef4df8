"""The tracker: a belief over full game states, built on the pure rules core (which never
imports this package). Pure like the rules core: no I/O, no clock, no global random."""
