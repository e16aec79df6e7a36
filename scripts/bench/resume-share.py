#!/usr/bin/env python3
"""What share of a cut step's spend its resumed session keeps: a token-cost model, not a
measurement (docs/benchmarks/budget.md, "A cut step: what is really lost").

A step of n turns starts from a 20,000-token context; each turn reads the whole context from
the prompt cache, adds 3,000 tokens to it (written to the cache) and writes 500 tokens. Cut at
turn k, it is resumed after the block's reset: the cache has expired, so the resumed run's
first call writes the whole conversation to the cache again, and its edits (a share `e` of the
k turns; the worktree was reset) are issued again, each a turn on the full context. What the
resumed run does not pay again is kept. Prices: the CLI's default model, per token
(claude-cli.md): input $4, output $20, cache read $0.20, cache write $5 per million.

    python3 scripts/bench/resume-share.py
"""

READ, WRITE, OUT = 0.20e-6, 5e-6, 20e-6
START, GROWTH, OUTPUT = 20_000, 3_000, 500


def turn(ctx: int) -> float:
    return ctx * READ + GROWTH * WRITE + OUTPUT * OUT


def kept_share(n: int, edits: float) -> float:
    """The share kept, over every cut turn k alike, weighted by what the cut attempt spent."""
    kept = spent_all = 0.0
    for k in range(1, n):
        spent = sum(turn(START + i * GROWTH) for i in range(k))
        ctx = START + k * GROWTH
        lost = min(spent, ctx * WRITE + edits * k * turn(ctx))
        kept += spent - lost
        spent_all += spent
    return kept / spent_all


if __name__ == "__main__":
    print("turns  edits  kept")
    for n in (20, 40, 80):
        for e in (0.25, 1 / 3, 0.5):
            print(f"{n:>5}  {e:>5.2f}  {100 * kept_share(n, e):>4.1f}%")
