"""Heuristic Policy for ``blackjack``: a simplified basic strategy (hit or stick only; no doubling or splitting).

Hard totals: always hit on 11 or less, stick on 17 or more, and on 12-16 stick against a weak dealer card (2-6)
and hit against a strong one (7-10 or ace). Soft totals (a usable ace): hit on 17 or less, stick on 19 or more,
and on soft 18 stick unless the dealer shows 9, 10 or an ace.
"""

from typing import Any

STICK, HIT = 0, 1


class BasicStrategy:
    def act(self, observation: Any) -> Any:
        player_sum, dealer_card, usable_ace = (int(v) for v in observation)
        if usable_ace:
            if player_sum <= 17:
                return HIT
            if player_sum == 18:
                return HIT if dealer_card in (9, 10, 1) else STICK
            return STICK
        if player_sum <= 11:
            return HIT
        if player_sum >= 17:
            return STICK
        return STICK if 2 <= dealer_card <= 6 else HIT


def make_policy(context: Any) -> Any:
    return BasicStrategy()
