"""攻城奇策 (siege race game): dice table, deployment rounds, hand limit, token supply (G2-…)."""

from __future__ import annotations

from companion.packs.siege.rules import (
    ARMY_TABLE,
    DEPLOYMENT_NUMBERS,
    DIE_FACES,
    HAND_LIMIT,
    POPE,
    SUPPLY,
    DeploymentRound,
    Token,
    TokenSupply,
    armies_for,
    armies_for_roll,
    army_distribution,
    cards_to_discard,
    cards_to_draw,
    clockwise_from,
    deal_round,
    next_player,
)

__all__ = [
    "ARMY_TABLE",
    "DEPLOYMENT_NUMBERS",
    "DIE_FACES",
    "HAND_LIMIT",
    "POPE",
    "SUPPLY",
    "DeploymentRound",
    "Token",
    "TokenSupply",
    "armies_for",
    "armies_for_roll",
    "army_distribution",
    "cards_to_discard",
    "cards_to_draw",
    "clockwise_from",
    "deal_round",
    "next_player",
]
