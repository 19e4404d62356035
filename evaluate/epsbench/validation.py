"""Flag release rows whose ground truth looks inconsistent, instead of scoring them silently.

    python -m ledgerlm.evaluate.epsbench.validation      # prints the flags for the embedded release

Checks (each compares the ground truth with the schema's own year-ago values from the filings):
  pretax_scale / operating_scale  pretax or operating income >= 100x both the year-ago value and
                                  EPS x the year-ago share count: reported in thousands, not millions
  shares_scale                    diluted_shares / (year-ago shares x 10^6) >= 100 or <= 0.01
  eps_split_scale                 annualised P/E = price / (4 |EPS|) < 3 while the share count grew
                                  >= 1.8x since the year-ago quarter (after removing powers of 1000):
                                  EPS on the pre-split scale against a post-split price
The embedded release trips these on CMG, COIN, NFLX, PLTR 2026Q1 and SMCI 2026Q3 (see
release/README.md). `ledgerlm score ... --exclude-flagged` leaves them out of the metrics.
"""
from __future__ import annotations

import ast
import math
from dataclasses import asdict, dataclass

from ledgerlm.evaluate.epsbench.calculator import Schema, compile_formulas, operating_node, pretax_node
from ledgerlm.evaluate.epsbench.release import Release, load_release

SCALE_RATIO = 100.0  # a units slip is a factor of 1000; real quarter-on-quarter moves stay far below 100x
MIN_PE = 3.0  # annualised price / EPS below this is implausible for these large caps without a split
SPLIT_RATIO = 1.8  # share-count growth since the year-ago quarter that signals a split


@dataclass(frozen=True)
class Flag:
    id: str
    check: str
    field: str
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def share_leaf(schema: Schema) -> str | None:
    """The diluted share-count leaf that `eps` divides by."""
    tree = ast.parse(schema.formulas["eps"], mode="eval")
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in schema.baseline]
    return next((n for n in names if "share" in n), None)


def validate_instance(release: Release, instance_id: str) -> list[Flag]:
    truth, price = release.truth.get(instance_id), release.prices.get(instance_id)
    if truth is None:
        return [Flag(instance_id, "missing_truth", "ground_truth", "no ground-truth row")]
    if price is None:
        return [Flag(instance_id, "missing_price", "close_price", "no price row: PDE cannot be computed")]
    schema = release.schema(instance_id)
    nodes = compile_formulas(schema.formulas, schema.baseline, schema.path).evaluate(schema.baseline)
    shares_leaf = share_leaf(schema)
    base_shares = schema.baseline.get(shares_leaf) if shares_leaf else None  # millions
    implied_income = abs(truth.eps * base_shares) if truth.eps is not None and base_shares else 0.0
    flags = []
    for check, field, value, node in (("pretax_scale", "pretax_income", truth.pretax, pretax_node(schema.formulas)),
                                      ("operating_scale", "operating_income", truth.operating, operating_node(schema.formulas))):
        if value is None or node is None:
            continue
        reference = max(abs(nodes[node]), implied_income)
        if reference > 0 and abs(value) >= SCALE_RATIO * reference:
            flags.append(Flag(instance_id, check, field,
                              f"{field} {value:,.0f} is {abs(value) / reference:,.0f}x the year-ago {node} "
                              f"({nodes[node]:,.1f}) and EPS x shares: looks like thousands, not USD millions"))
    if truth.diluted_shares and base_shares:
        ratio = truth.diluted_shares / (base_shares * 1e6)
        if ratio >= SCALE_RATIO or ratio <= 1 / SCALE_RATIO:
            flags.append(Flag(instance_id, "shares_scale", "diluted_shares",
                              f"diluted_shares {truth.diluted_shares:,.0f} is {ratio:,.3g}x the year-ago count "
                              f"({base_shares:,.1f} million): off by ~10^{round(math.log10(ratio))}"))
        split = ratio / 10 ** (3 * round(math.log10(ratio) / 3))
        if truth.eps and price / (4 * abs(truth.eps)) < MIN_PE and split >= SPLIT_RATIO:
            flags.append(Flag(instance_id, "eps_split_scale", "eps_gaap_diluted",
                              f"EPS {truth.eps} against price {price} (annualised P/E {price / (4 * abs(truth.eps)):.1f}) "
                              f"after a ~{split:.0f}:1 share-count change: EPS looks pre-split, price post-split"))
    return flags


def validate_release(release: Release) -> list[Flag]:
    return [flag for inst in release.instances for flag in validate_instance(release, inst.id)]


if __name__ == "__main__":
    for flag in validate_release(load_release()):
        print(f"{flag.id:14s} {flag.check:16s} {flag.message}")
