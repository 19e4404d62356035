"""MacroLens metrics, exactly as the paper (§5.1, App. D, App. E.1); inputs are numpy arrays.

    python -m pytest tests/test_macrolens_metrics.py -q

Each task has a table `METRICS[task] = {name: fn(arrays) -> float}` so that the cluster bootstrap can
recompute any metric on a resample (`arrays` is a dict of equal-length numpy arrays, one row per
instance). Conventions:
- APE is capped at 1,000 % (10x) before averaging on T2, T3, T5, T6, T7; MedAPE sits beside every MAPE.
- Unparsed values are scored as a prediction of 0, the paper's convention for every task ("unparsed fields
  default to zero", §6.1 T3; "the evaluator substitutes zero for these non-responses", T4): T2/T3/T5/T6/T7
  APE = 100 %, T4 a 0 % return (matches neither sign), T1 a zero price path; all counted (parse %).
- T3/T6 MAPE is the mean over the 11 fields of each field's MAPE (Table 8 "overall MAPE over the 11-field
  panel"); the cell-pooled mean stays as `mape_pooled`.
- T1 DA is anchor-relative: sign(yhat - c) == sign(y - c), c = last observed close.
- T1 MASE = full-horizon MAE / |y_{t+1} - c| per instance (instances with a zero denominator are skipped).
- T1 winsorised MSE clips a method's squared errors at their own 99th percentile before averaging.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.stats import spearmanr

APE_CAP = 10.0  # 1,000 %: APE is capped at 10x before averaging
BALANCE_TOLERANCE = 0.01  # assets = liabilities + equity within 1 % of assets
WINSOR_QUANTILE = 0.99
STATEMENT_FIELDS = ("revenue", "net_income", "total_assets", "total_liabilities", "stockholders_equity", "operating_income",
                    "cash", "ppe_net", "long_term_debt", "rd_expense", "operating_cash_flow")

Arrays = dict[str, np.ndarray]


def ape(pred: np.ndarray, true: np.ndarray, cap: float = APE_CAP) -> np.ndarray:
    """Absolute percentage error in percent, capped at `cap` x 100 %; NaN where the truth is 0 or missing."""
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(pred - true) / np.abs(true)
    out[~np.isfinite(true) | (true == 0)] = np.nan
    return np.minimum(out, cap) * 100.0


def _mean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


def _median(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.median(x)) if x.size else float("nan")


def zero_if_unparsed(pred: np.ndarray) -> np.ndarray:
    pred = np.array(pred, float)
    pred[~np.isfinite(pred)] = 0.0
    return pred


# ---- T1: close-price trajectory --------------------------------------------------------------------
def winsorized_mse(sq_err: np.ndarray, q: float = WINSOR_QUANTILE) -> float:
    sq_err = np.asarray(sq_err, float).ravel()
    return float(np.minimum(sq_err, np.quantile(sq_err, q)).mean())


def smape(pred: np.ndarray, true: np.ndarray) -> float:
    pred, true = np.asarray(pred, float), np.asarray(true, float)
    denom = np.abs(pred) + np.abs(true)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(denom == 0, 0.0, 200.0 * np.abs(pred - true) / denom)
    return float(terms.mean())


def anchor_da(pred: np.ndarray, true: np.ndarray, last_close: np.ndarray, answered: np.ndarray | None = None) -> float:
    """Fraction (%) of horizon points with sign(yhat - c) == sign(y - c). An unanswered instance (`answered` False: no
    trajectory parsed, scored as the zero path for the error metrics) hits no direction: its zero path would otherwise
    count as "down" and earn every falling horizon point (a refusal scored 100 % against a falling truth, a flat
    forecast 0 %: helper audit of the scorers; the paper's T4 zero convention matches neither sign)."""
    c = np.asarray(last_close, float)[:, None]
    hits = np.sign(pred - c) == np.sign(true - c)
    if answered is not None:
        hits = hits & np.asarray(answered, bool)[:, None]
    return float(hits.mean() * 100.0)


def mase_per_instance(pred: np.ndarray, true: np.ndarray, last_close: np.ndarray) -> np.ndarray:
    """Full-horizon MAE / |y_{t+1} - c|; NaN where the first step did not move."""
    scale = np.abs(true[:, 0] - np.asarray(last_close, float))
    mae = np.abs(pred - true).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(scale > 0, mae / scale, np.nan)


T1: dict[str, Callable[[Arrays], float]] = {
    "mse": lambda a: float(((a["pred"] - a["true"]) ** 2).mean()),
    "mae": lambda a: float(np.abs(a["pred"] - a["true"]).mean()),
    "rmse": lambda a: float(np.sqrt(((a["pred"] - a["true"]) ** 2).mean())),
    "mse_winsorized": lambda a: winsorized_mse((a["pred"] - a["true"]) ** 2),
    "smape": lambda a: smape(a["pred"], a["true"]),
    "da": lambda a: anchor_da(a["pred"], a["true"], a["last_close"], a.get("answered")),
    "mase": lambda a: _mean(mase_per_instance(a["pred"], a["true"], a["last_close"])),
    "parse_pct": lambda a: float(a["parsed"].mean() * 100.0),
}

# ---- T2 / T5: market-cap valuation -----------------------------------------------------------------
def log_mae(pred: np.ndarray, true: np.ndarray) -> float:
    """Mean |log yhat - log y|; predictions below $1 (incl. unparsed zeros) are read as $1."""
    return float(np.abs(np.log(np.maximum(pred, 1.0)) - np.log(np.maximum(true, 1.0))).mean())


def spearman(pred: np.ndarray, true: np.ndarray) -> float:
    if len(pred) < 2 or np.all(pred == pred[0]) or np.all(true == true[0]):
        return float("nan")
    return float(spearmanr(pred, true).statistic)


T2: dict[str, Callable[[Arrays], float]] = {
    "medape": lambda a: _median(ape(zero_if_unparsed(a["pred"]), a["true"])),
    "mape": lambda a: _mean(ape(zero_if_unparsed(a["pred"]), a["true"])),
    "spearman": lambda a: spearman(zero_if_unparsed(a["pred"]), a["true"]),
    "rmse_usd": lambda a: float(np.sqrt(((zero_if_unparsed(a["pred"]) - a["true"]) ** 2).mean())),
    "log_mae": lambda a: log_mae(zero_if_unparsed(a["pred"]), a["true"]),
    "parse_pct": lambda a: float(np.isfinite(a["pred"]).mean() * 100.0),
}


# ---- T3 / T6: 11-field statement generation --------------------------------------------------------
def balance_accuracy(pred: np.ndarray, fields: tuple[str, ...] = STATEMENT_FIELDS) -> float:
    """% of instances, among those whose predicted assets, liabilities and equity all parsed,
    with |A - (L + E)| <= 1 % of |A|."""
    a, l, e = (pred[:, fields.index(k)] for k in ("total_assets", "total_liabilities", "stockholders_equity"))
    ok = np.isfinite(a) & np.isfinite(l) & np.isfinite(e)
    if not ok.any():
        return float("nan")
    return float((np.abs(a[ok] - (l[ok] + e[ok])) <= BALANCE_TOLERANCE * np.abs(a[ok])).mean() * 100.0)


def statement_ape(a: Arrays) -> np.ndarray:
    """APE over the field x instance grid; unparsed cells are scored as 0, missing targets are NaN."""
    return ape(zero_if_unparsed(a["pred"]), a["true"])


def field_mean_mape(a: Arrays) -> float:
    """Mean over fields of the per-field MAPE (fields with no finite target are left out)."""
    per_field = [_mean(col) for col in statement_ape(a).T]
    per_field = [v for v in per_field if np.isfinite(v)]
    return float(np.mean(per_field)) if per_field else float("nan")


def statement_parse_pct(a: Arrays) -> float:
    """% of the whole (field x ticker) prediction grid that parsed to a number (paper §5.1: "the fraction of the
    (field x ticker) prediction grid that yields a parseable numeric value"; §6.1: regressors "emit all 11xN")."""
    return float(np.isfinite(a["pred"]).mean() * 100.0)


def statement_parse_pct_applicable(a: Arrays) -> float:
    """Variant: % of the cells with a target (the filing reports the field) whose prediction parsed: a field the
    filing does not report has nothing to parse, and the prompt asks for null there."""
    applicable = np.isfinite(a["true"])
    if not applicable.any():
        return float("nan")
    return float(np.isfinite(a["pred"])[applicable].mean() * 100.0)


T3: dict[str, Callable[[Arrays], float]] = {
    "mape": field_mean_mape,
    "mape_pooled": lambda a: _mean(statement_ape(a)),
    "medape": lambda a: _median(statement_ape(a)),
    "balance_accuracy": lambda a: balance_accuracy(a["pred"]),
    "parse_pct": statement_parse_pct,
    "parse_pct_applicable": statement_parse_pct_applicable,
    "n_unparsed_fields": lambda a: float((~np.isfinite(a["pred"]) & np.isfinite(a["true"])).sum()),
}
T3.update({f"mape_{f}": (lambda a, j=j: _mean(statement_ape(a)[:, j])) for j, f in enumerate(STATEMENT_FIELDS)})


# ---- T4: scenario-conditioned post-event return (percent) ------------------------------------------
def return_da(pred: np.ndarray, true: np.ndarray) -> float:
    """% of instances whose predicted return has the realised return's sign. A non-response is scored as 0 and "a zero
    prediction matches neither sign" (paper §6.1, T4): a 0 (or unparsed) forecast is a miss even when the realised
    return is exactly 0."""
    pred = zero_if_unparsed(pred)
    return float(((pred != 0) & (np.sign(pred) == np.sign(true))).mean() * 100.0)


T4: dict[str, Callable[[Arrays], float]] = {
    "mae": lambda a: float(np.abs(zero_if_unparsed(a["pred"]) - a["true"]).mean()),
    "da": lambda a: return_da(a["pred"], a["true"]),
    "n_nonresponse": lambda a: float((~np.isfinite(a["pred"])).sum()),
    "parse_pct": lambda a: float(np.isfinite(a["pred"]).mean() * 100.0),
}

# ---- T7: real-estate rent and sale price -----------------------------------------------------------
T7: dict[str, Callable[[Arrays], float]] = {
    "rent_mape": lambda a: _mean(ape(zero_if_unparsed(a["pred"][:, 0]), a["true"][:, 0])),
    "rent_medape": lambda a: _median(ape(zero_if_unparsed(a["pred"][:, 0]), a["true"][:, 0])),
    "price_mape": lambda a: _mean(ape(zero_if_unparsed(a["pred"][:, 1]), a["true"][:, 1])),
    "price_medape": lambda a: _median(ape(zero_if_unparsed(a["pred"][:, 1]), a["true"][:, 1])),
    "parse_pct": lambda a: float(np.isfinite(a["pred"]).mean() * 100.0),
}

METRICS: dict[str, dict[str, Callable[[Arrays], float]]] = {"T1": T1, "T2": T2, "T3": T3, "T4": T4, "T5": T2, "T6": T3, "T7": T7}
PRIMARY = {"T1": "mse", "T2": "medape", "T3": "mape", "T4": "mae", "T5": "medape", "T6": "mape", "T7": "rent_mape"}
LOWER_IS_BETTER = {"mse", "mae", "rmse", "mse_winsorized", "smape", "mase", "medape", "mape", "rmse_usd", "log_mae", "rent_mape",
                   "rent_medape", "price_mape", "price_medape"}
COUNTS = {"n_unparsed_fields", "n_nonresponse"}  # reported as counts, no CI


def instance_loss(task: str, a: Arrays, i: int) -> float:
    """One instance's primary loss (the per-sample `score` that `ledgerlm compare` pairs; lower is better)."""
    row = {k: v[i:i + 1] for k, v in a.items()}
    if task == "T1":
        return float(((row["pred"] - row["true"]) ** 2).mean())
    if task in ("T2", "T5"):
        return float(ape(zero_if_unparsed(row["pred"]), row["true"])[0])
    if task in ("T3", "T6"):
        return _mean(statement_ape(row))  # one instance: the mean over its fields
    if task == "T4":
        return float(abs(zero_if_unparsed(row["pred"])[0] - row["true"][0]))
    return _mean(ape(zero_if_unparsed(row["pred"]), row["true"]))
