"""layout.py — how the page lays out the joint cards: the number of columns of their grid.

The page fills the grid row by row; the rule keeps rows as full as possible without a row that
holds a single card (a lone plot under a full row reads as a different kind of thing).
"""
import math

PREFERRED_COLUMNS = 3  # three cards of some 300 px side by side on a 1280 px wide window


def joint_columns(n):
    """The number of columns for n joint cards: the fewest rows of at most PREFERRED_COLUMNS
    cards, spread evenly (ceil(n / rows) columns), then one column more while the last row would
    hold a single card. 1 -> 1, 2 -> 2, 3 -> 3, 4 -> 2 (2 + 2), 5 -> 3 (3 + 2), 6 -> 3,
    7 -> 4 (4 + 3); never a lone card under a fuller row when n > 1. 1 for n < 1."""
    if n <= 1:
        return 1
    rows = math.ceil(n / PREFERRED_COLUMNS)
    cols = math.ceil(n / rows)
    while n % cols == 1:  # the last row (rows of cols filled in order) would hold one card
        cols += 1
    return cols
