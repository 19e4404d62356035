"""Conventions an index's answer depends on, derived from its formula, stated once in one wording.

    python -c "from ledgerlm.synth.indices.registry import load_registry; r = load_registry(); print(r['roic'].hint_text('zh'))"

Issue 11 ("ambiguities to remove"): every with-hint prompt states the conventions the answer uses, and
no-hint prompts state them too (without the formula), so a question never has two defensible answers:
- balances: beginning = previous fiscal-year end (FY, H1, Q3 YTD), previous quarter end (standalone
  quarter), one year earlier (TTM); average = (beginning + ending) / 2;
- days: 90 per quarter (90 / 180 / 270 / 360), also in 52/53-week years; annualisation x 12 / months;
- standalone quarter = YTD(n) - YTD(n-1), Q4 = annual - nine-month YTD; TTM = YTD + last annual - prior YTD;
- debt: financial debt = borrowings as presented (finance and operating leases excluded), interest-bearing
  debt = financial debt + lease liabilities + long-term payables (CAS 有息负债);
- EBIT = pretax income + interest expense (the only EBIT of the registry); NOPAT = operating income x
  (1 - income tax / pretax income), the effective rate applied as reported also for loss-makers;
- invested capital = parent equity + interest-bearing debt (financing approach, parent equity; zh 投入资本（筹资法，归母权益）);
- working-capital change = ending - beginning (current assets - current liabilities);
- per-share values on the latest stock-split basis; quarter shares time-weighted by the days of the year-to-date reports
  (the headers date them); quarter EPS = net income / those shares, unrounded (a synth prompt shows no 3-month column).

`fill_defaults(registry)` also derives each index's accepted period kinds, its no-hint flag and its
Chinese hint (the formula written with the Chinese names of its lines and indices) where the YAML gives none.
"""
from __future__ import annotations

import dataclasses
import re
import functools

from ledgerlm.synth.indices.concepts import is_concept
from ledgerlm.synth.indices.formula import BinOp, Call, Name, Neg, Num, Node
from ledgerlm.synth.statements.periods import parse_period
from ledgerlm.synth.statements.taxonomy import concept_info

ALL_KINDS = ("FY", "Q", "H1", "Q3YTD", "TTM")

# (key, en, zh): key is an operator, builtin or index id found anywhere in the formula closure
NOTES = [
    ("begin", "Beginning balance = the balance at the previous fiscal year end for FY, H1 and Q3 YTD periods, at the previous "
              "quarter end for a standalone quarter, one year earlier for a TTM period; average = (beginning + ending) / 2.",
     "期初余额：年度、半年度及前三季度累计期间取上年末余额，单季度取上季末余额，TTM 期间取一年前的期末余额；平均余额 =（期初 + 期末）/ 2。"),
    ("begin_year_start", "Beginning balance here = the balance at the previous fiscal year end for every period (a standalone "
                         "quarter and a TTM period included: the start of the fiscal year the period ends in).",
     "此处期初余额一律取上一财年末余额（单季度与 TTM 期间亦同：取该期间结束所在财年的年初余额）。"),
    ("avg", "Balance sheet lines are averaged, (beginning + ending) / 2, wherever the index reads one over a period "
            "(turnover, days, returns on average capital): never the period-end balance alone.",
     "涉及的资产负债表项目均取平均余额（期初 + 期末）/ 2（周转率、周转天数、平均资本回报等），不以期末余额代替。"),
    ("growth", "Growth (YoY / QoQ) = (current - prior) / |prior| x 100%: a relative change, also for a ratio (not a difference in "
               "percentage points); the absolute value of the prior figure keeps the sign of the change when it is negative.",
     "增长率（同比 / 环比）=（本期 − 上期）/ |上期| × 100%：为相对变化率，比率指标亦同（不是百分点之差）；上期为负时分母取绝对值，"
     "以保持变化方向的符号。"),
    ("days_in_period", "Days in period = 90 per quarter (90, 180, 270 or 360 days), also in 52/53-week years; not calendar days.",
     "期间天数按每季度 90 天计（90、180、270 或 360 天），52/53 周财年亦同，不按日历天数。"),
    ("annualize", "Annualised = value x 12 / months of the period (3, 6, 9 or 12; 52/53-week years are not adjusted).",
     "年化 = 数值 × 12 / 期间月数（3、6、9 或 12 个月；52/53 周财年不调整）。"),
    ("standalone", "Standalone quarter Qn = YTD(n) - YTD(n-1); Q4 = annual - nine-month YTD.",
     "单季度 Qn = 第 n 季累计数 − 第 n−1 季累计数；第四季度 = 全年 − 前三季度累计。"),
    ("ttm", "TTM = current YTD + last annual - prior-year same YTD (at a fiscal year end: the annual figure); a ratio or "
            "after-tax figure over a TTM period applies its formula to the TTM values of its lines, not to each period's result.",
     "TTM = 本期累计 + 上一年度全年 − 上年同期累计（年末即全年数）；TTM 期间的比率或税后指标先将各项目取 TTM 数，再代入公式计算，"
     "而非对各期计算结果取 TTM。"),
    ("financial_debt", "Financial debt = current debt (the total short-term debt line when the balance sheet shows one, otherwise "
                       "short-term borrowings/commercial paper + short-term bank loans (with notes payable where the balance sheet "
                       "shows them as one line) + current portion of long-term debt + convertible notes due within a year, a line of "
                       "its own and not part of a long-term debt total) + non-current long-term debt and bonds, each plus the "
                       "non-recourse debt of consolidated VIEs, each at its carrying amount (not a principal / gross line); a total "
                       "short-term debt line is taken whole (current finance-lease obligations inside it are not taken out); "
                       "a debt line the balance sheet does not show counts as 0; lease "
                       "liabilities (finance and operating) are not financial debt, except inside a balance sheet's one "
                       "\"debt and capital lease obligations\" total, which is used as financial debt where the balance sheet "
                       "shows debt only as that total.",
     "金融性负债 = 流动债务（资产负债表列示短期债务合计时取该合计，否则取短期借款/商业票据 + 短期银行借款（资产负债表将其与应付票据合并列示时取该合并行）"
     "+ 一年内到期的长期债务 + 一年内到期的可转换债券（单独列示，不包含在长期债务合计中））"
     "+ 非流动长期借款及应付债券，各含合并可变利益实体的无追索权债务，均取账面价值（不取长期债务本金）；短期债务合计整体计入"
     "（其中已含的一年内到期融资租赁负债不予扣除）；资产负债表未列示的债务科目按 0 计；租赁负债（融资及经营租赁）不计入金融性负债，"
     "但资产负债表仅以一行“债务及资本租赁负债合计”列示债务时，以该合计作为金融性负债（其中含资本租赁）。"),
    ("lease_lines", "Lease liabilities = operating and finance lease liabilities, current and non-current; a lease line the "
                    "balance sheet does not show counts as 0.",
     "租赁负债 = 经营租赁及融资租赁负债（含流动与非流动部分）；资产负债表未列示的租赁科目按 0 计。"),
    ("lease_in_short_term_debt", "A total short-term debt line, where the balance sheet shows one, already includes the current "
                                 "finance-lease obligations (not added again).",
     "资产负债表列示短期债务合计时，该合计已含一年内到期的融资租赁负债，不再重复加计。"),
    ("interest_bearing_debt", "Interest-bearing debt = financial debt + lease liabilities (operating and finance, current and "
                              "non-current) + long-term payables (a line the balance sheet does not show counts as 0); a total short-term "
                              "debt line, where the balance sheet shows one, "
                              "already includes the current finance-lease obligations (not added again); payables, notes payable, "
                              "contract liabilities, taxes and payroll payable are non-interest-bearing.",
     "带息债务 = 金融性负债 + 租赁负债（经营及融资租赁，含流动部分）+ 长期应付款（资产负债表未列示的科目按 0 计）；资产负债表列示短期债务合计时，该合计已含一年内到期的融资租赁负债，"
     "不再重复加计；应付账款、应付票据、合同负债、应交税费、应付职工薪酬为无息负债。"),
    ("net_financial_debt", "Net financial debt = financial debt - cash and cash equivalents - short-term investments (a "
                           "short-term investments line the balance sheet does not show counts as 0).",
     "净金融性负债 = 金融性负债 − 货币资金 − 交易性金融资产（短期投资；资产负债表未列示时按 0 计）。"),
    ("net_debt", "Net debt (interest-bearing basis) = interest-bearing debt - cash and cash equivalents; short-term investments "
                 "are not deducted.",
     "净债务（带息口径）= 带息债务 − 货币资金；交易性金融资产（短期投资）不扣除。"),
    ("ebit", "EBIT = income before income taxes + interest expense (the one EBIT definition used throughout).",
     "息税前利润（EBIT）= 利润总额 + 利息费用（全数据集统一口径）。"),
    ("ebitda", "EBITDA = operating income + depreciation and amortization (operating-income basis, D&A from the cash flow "
               "statement).",
     "EBITDA = 营业利润 + 折旧与摊销（营业利润口径，折旧摊销取自现金流量表）。"),
    ("nopat", "NOPAT = operating income x (1 - income tax / income before income taxes), the effective rate applied as reported "
              "(also when pretax income is a loss).",
     "税后净营业利润（NOPAT）= 营业利润 ×（1 − 所得税费用 / 利润总额），实际税率按报表数直接使用（亏损时亦同）。"),
    ("invested_capital_equity", "Invested capital = equity attributable to the parent + interest-bearing debt (minority interests "
                                "excluded).",
     "投入资本（筹资法，归母权益）= 归属于母公司所有者权益 + 带息债务（不含少数股东权益）。"),
    ("working_capital_change", "Change in working capital = working capital at period end - at the beginning of the period "
                               "(working capital = current assets - current liabilities).",
     "营运资本变动 = 期末营运资本 − 期初营运资本（营运资本 = 流动资产 − 流动负债）。"),
    ("tangible_net_assets", "Tangible net assets = equity attributable to the parent - intangible assets - goodwill - deferred tax "
                            "assets (the CAS convention: deferred tax assets are deducted too; a line the balance sheet does not "
                            "show counts as 0).",
     "有形净资产 = 归属于母公司所有者权益 − 无形资产 − 商誉 − 递延所得税资产（递延所得税资产亦扣除；资产负债表未列示的科目按 0 计）。"),
    ("shares", "Per-share values and share counts are on the latest filing's stock-split basis; the weighted-average shares "
               "of a standalone quarter, Q4 or TTM period are time-weighted from the year-to-date reports by their calendar days, "
               "as the column headers date them (both the first and the last day counted; a JSON block's start and end; "
               "share-days = each report's weighted-average shares x its days, added and subtracted like flows, over the days "
               "of the window); share counts themselves are never added or subtracted.",
     "每股指标与股数统一按最新一期报告的拆股口径；单季度、第四季度及 TTM 期间的加权平均股数按累计期间报告以日历天数时间加权"
     "（天数按列标题所注日期计算，起止两日均计入；JSON 报告取 start/end 字段：各报告的加权平均股数×天数像流量一样相加减，"
     "再除以该期间天数）；股数本身不做加减。"),
    ("eps_quarters", "A standalone Q2-Q4 quarter's EPS is its net income / those shares, unrounded, while Q1, a report of its "
                     "own, is the EPS its report shows; EPS themselves are never added or subtracted.",
     "第二至第四季度单季每股收益 = 单季度净利润 / 上述股数，不做四舍五入；第一季度本身即一期报告，取其报告列示的每股收益；"
     "每股收益本身不做加减。"),
    ("net_income_common_basis", "Net income here is net income available to common shareholders (the parent's share where "
                                "the statement shows no such line), in every period, Q1 included: the EPS a report shows is "
                                "not used.",
     "此处净利润取归属于普通股股东的净利润（报表未列示时取归属于母公司所有者的净利润），各期（含第一季度）均按净利润 / "
     "加权平均股数计算，不取报告列示的每股收益。"),
    ("net_income_parent_basis", "Net income here is the parent's share (net income attributable to the company's "
                                "shareholders), not the group's.",
     "此处净利润取归属于母公司所有者的净利润，而非合并净利润。"),
    ("net_income_group_basis", "Net income here is consolidated net income, noncontrolling interests included (not the "
                               "parent's share).",
     "此处净利润取合并净利润（含少数股东损益），而非归属于母公司的净利润。"),
    ("equity_parent_basis", "Equity here is equity attributable to the parent (noncontrolling interests excluded).",
     "此处权益取归属于母公司所有者权益（不含少数股东权益）。"),
    ("equity_group_basis", "Equity here is total equity, noncontrolling interests included.",
     "此处权益取所有者权益合计（含少数股东权益）。"),
    ("shares_outstanding", "Balance-sheet per-share amounts divide by the shares outstanding at the period end (not "
                           "weighted-average shares).",
     "资产负债表类每股指标除以期末流通股数（非加权平均股数）。"),
    ("cash_per_share", "Cash per share uses cash and cash equivalents only (short-term investments and marketable securities "
                       "are not included).",
     "每股现金仅取货币资金（现金及现金等价物），不含短期投资及交易性金融资产。"),
    ("tangible_book_value_per_share", "Tangible book value = equity attributable to the parent - goodwill - intangible assets "
                                      "(deferred tax assets are not deducted).",
     "有形账面价值 = 归属于母公司所有者权益 − 商誉 − 无形资产（不扣除递延所得税资产）。"),
    ("shares_diluted", "Per-share amounts divide by the diluted weighted-average shares of the period (not basic shares, "
                       "not shares outstanding at the period end).",
     "每股指标除以期间稀释加权平均股数（非基本股数，非期末流通股数）。"),
    ("shares_basic", "Basic per-share amounts divide by the basic weighted-average shares of the period.",
     "基本每股指标除以期间基本加权平均股数。"),
]
_OPERATOR_KEYS = {"begin": {"begin", "avg"}, "avg": {"avg"}, "standalone": {"standalone", "quarter"}}
_SHARE_CONCEPTS = {"shares_basic", "shares_diluted"}
_LEASE_CONCEPTS = {"lease_liabilities", "lease_liabilities_current", "finance_lease_liabilities", "finance_lease_liabilities_current"}
_EPS_CONCEPTS = {"eps_basic", "eps_diluted"}  # EPS of a standalone quarter or TTM is built from shares: the same rule
_ZH_PREFIX = {"prior_year": "上年同期", "prior_quarter": "上一季度", "ytd": "年初至今累计", "standalone": "单季度",
              "quarter": "单季度", "ttm": "TTM ", "begin": "期初", "end": "期末", "avg": "平均", "annualize": "年化"}
_ZH_BUILTINS = {"days_in_period": "期间天数", "months_in_period": "期间月数",
                "interest_bearing_liabilities": "带息负债", "non_interest_bearing_liabilities": "无息负债"}


def closure(index, registry) -> tuple[set[str], set[str], set[str], set[str]]:
    """(operators, builtins, concepts, index ids) the formula reads, through every index it refers to."""
    ops, builtins, concepts, ids = set(), set(), set(), set()
    todo, seen = [index], set()
    while todo:
        ix = todo.pop()
        if ix.id in seen:
            continue
        seen.add(ix.id)
        n = ix.needs
        ops |= set(n.operators)
        builtins |= set(n.builtins)
        concepts |= set(n.concepts)
        for ref in n.indices:
            if ref in registry and not is_concept(ref):
                ids.add(ref)
                todo.append(registry[ref])
        ops |= _functions(ix.ast)
    return ops, builtins, concepts, ids


def _functions(node: Node) -> set[str]:
    if isinstance(node, Call):
        return {node.func}.union(*(_functions(a) for a in node.args))
    if isinstance(node, BinOp):
        return _functions(node.left) | _functions(node.right)
    if isinstance(node, Neg):
        return _functions(node.operand)
    return set()


def _begins_of_ytd_only(index, registry) -> bool:
    """True when every begin(...) of the formula closure reads a year-to-date period: begin(ytd(x))."""
    todo, seen, calls = [index], set(), []
    while todo:
        ix = todo.pop()
        if ix.id in seen:
            continue
        seen.add(ix.id)
        calls += _begin_calls(ix.ast)
        todo += [registry[r] for r in ix.needs.indices if r in registry and not is_concept(r)]
    return bool(calls) and all(isinstance(c.args[0], Call) and c.args[0].func == "ytd" for c in calls)


def _begin_calls(node: Node) -> list:
    if isinstance(node, Call):
        return ([node] if node.func == "begin" else []) + [c for a in node.args for c in _begin_calls(a)]
    if isinstance(node, BinOp):
        return _begin_calls(node.left) + _begin_calls(node.right)
    if isinstance(node, Neg):
        return _begin_calls(node.operand)
    return []


def _keys(index, registry) -> set[str]:
    ops, builtins, concepts, ids = closure(index, registry)
    keys = set(builtins) | ids | {index.id}
    for key, members in _OPERATOR_KEYS.items():
        if ops & members:
            keys.add(key)
    if "begin" in keys and ops & {"begin", "avg"} == {"begin"} and _begins_of_ytd_only(index, registry):
        keys.discard("begin")  # begin(ytd(x)): the fiscal year's opening balance in every period (seed-6262 prompt audit:
        keys.add("begin_year_start")  # the general sentence said "previous quarter end" for a standalone quarter)
    keys |= ops & {"annualize", "ttm"}
    if ops & {"prior_year", "prior_quarter"} and "abs" in ops:  # (x - prior(x)) / abs(prior(x)): seed-9001 analyst audit
        keys.add("growth")
    if "interest_bearing_liabilities" in builtins or "non_interest_bearing_liabilities" in builtins:
        keys.add("interest_bearing_debt")
    if ids & {"current_debt", "noncurrent_debt"} or index.id in {"current_debt", "noncurrent_debt"}:
        keys.add("financial_debt")  # what a debt line is, and that one the balance sheet does not show counts as 0
    if "interest_bearing_debt" in keys or "invested_capital_equity" in keys:
        keys |= {"financial_debt", "interest_bearing_debt"}
    elif concepts & _LEASE_CONCEPTS:  # seed-5150 audit: debt plus leases said only that absent debt lines count as 0
        keys.add("lease_lines")
        if "debt_current" in concepts:  # first_of(0 * debt_current, finance lease current): inside the total line
            keys.add("lease_in_short_term_debt")
    if concepts & (_SHARE_CONCEPTS | _EPS_CONCEPTS):
        keys.add("shares")
    if concepts & _EPS_CONCEPTS:  # only a formula that reads EPS takes Q1's as reported (seed-777 analyst audit)
        keys.add("eps_quarters")
    # which net income / equity, where the index reads exactly one of the two (seed-31415 / seed-27182 audits: FCF
    # conversion, equity turnover, cash return on equity, net profit cash content read either way in no-hint prompts)
    for parent, group, name in (("net_income_parent", "net_income", "net_income"), ("equity_parent", "total_equity", "equity")):
        if (parent in concepts) != (group in concepts):
            keys.add(f"{name}_parent_basis" if parent in concepts else f"{name}_group_basis")
    if concepts & {"net_income_common_basic", "net_income_common_diluted"}:  # computed EPS: common shareholders' income
        keys.discard("net_income_parent_basis")
        keys.add("net_income_common_basis")
    if index.result == "per_share":
        keys |= concepts & _SHARE_CONCEPTS  # which weighted-average shares a per-share amount divides by
        if "shares_outstanding" in concepts:  # seed-27182 analyst audit: which shares a balance per-share amount divides by
            keys.add("shares_outstanding")
    return keys


def notes(index, language: str) -> list[str]:
    """The convention sentences the index's answer depends on, in `language` (en | zh); the keys were found in
    the formula closure when the registry was loaded (`fill_defaults`), with that registry."""
    return list(_notes(tuple(index.conventions), language))


@functools.lru_cache(maxsize=1024)
def _notes(keys: tuple[str, ...], language: str) -> tuple[str, ...]:
    """`notes` by convention keys: every written item asks for its indices' notes (hint or no-hint prompt, and the
    solution), and a few dozen key sets cover the registry."""
    return tuple(en if language == "en" else zh for key, en, zh in NOTES if key in keys)


def joined(sentences: list[str], language: str) -> str:
    return (" " if language == "en" else "").join(sentences)


def hint_text(index, language: str) -> str:
    """Hint + the definitions of the indices it names + conventions, in `language`."""
    base = index.hint if language == "en" else index.hint_zh
    defs = (index.definitions or ((), ()))[0 if language == "en" else 1]
    if defs and language == "en":
        base = f"{base}{'' if base.endswith('.') else '.'} Here {'; '.join(defs)}."
    elif defs:
        base = f"{base}{'' if base.endswith('。') else '。'}其中{'；'.join(defs)}。"
    extra = joined(_notes(tuple(index.conventions), language), language)
    if not extra:
        return base
    if language == "en":
        return f"{base}{'' if base.endswith('.') else '.'} {extra}"
    return f"{base}{'' if base.endswith('。') else '。'}{extra}"


def _concept_kinds(concepts) -> set[str]:
    """The kinds (flow | stock | per_share | shares) of the concepts a formula reads; a concept the taxonomy does not
    know counts as a flow, and a balance-sheet share count (shares outstanding) is a period-end stock: cash per share
    "for FY2010Q1TTM" asked a point-in-time figure over a TTM window (seed-27182 analyst audit)."""
    kinds = set()
    for c in concepts:
        try:
            info = concept_info(c)
        except KeyError:
            kinds.add("flow")
            continue
        kinds.add("stock" if info.kind == "shares" and info.statement == "balance" else info.kind)
    return kinds


def reads_flows(index, registry) -> bool:
    """Does the formula read a flow (a value over a window, which a standalone quarter or a TTM period is derived for
    from year-to-date reports), rather than balances, per-share amounts and share counts only?"""
    return "flow" in _concept_kinds(closure(index, registry)[2])


PERIOD_KEYS = {"TTM": "ttm", "Q": "standalone"}  # a target period of this kind is derived by this NOTES rule


def period_notes(indices, periods, language: str, *, shared: bool = False) -> list[str]:
    """The period-algebra conventions a question's target periods need and its indices' own notes do not state: a TTM
    or standalone-quarter value of an index that reads flows is derived from year-to-date reports (seed-8087 helper
    audit: 337 rows asked a TTM or quarter of a formula without ttm() or quarter() and never said how it is formed).
    A per-share index gets the TTM rule too (its net income is a TTM flow); its quarters follow the shares note (EPS
    is never subtracted, so the standalone rule, which reads as subtracting, is not added for it). `shared`: leave out
    only what every index states itself (a no-hint table states each sentence once, whichever index owns it).
    Each sentence is one of NOTES, in its place there."""
    flows = any(ix.reads_flows for ix in indices)
    per_share = any("shares" in ix.conventions for ix in indices)
    kinds = {parse_period(p).kind for p in periods}
    keys = {key for kind, key in PERIOD_KEYS.items() if kind in kinds and (flows or (key == "ttm" and per_share))}
    owned = [set(ix.conventions) for ix in indices]
    own = set.intersection(*owned) if shared and owned else set().union(*owned)
    return list(_notes(tuple(sorted(keys - own)), language)) if keys - own else []


def default_periods(index, registry) -> tuple[str, ...]:
    """Period kinds an index fits, from its formula (see registry.py)."""
    ops, builtins, concepts, _ = closure(index, registry)
    if ops & {"prior_quarter", "standalone", "quarter"}:
        return ("Q",)
    if "ttm" in ops:
        return ("FY", "TTM")
    if "annualize" in ops:
        return ("FY", "Q", "H1", "Q3YTD")
    kinds = _concept_kinds(concepts)
    if kinds and kinds <= {"stock"} and not builtins & {"days_in_period", "months_in_period"}:
        return ("FY", "Q", "H1", "Q3YTD")
    return ALL_KINDS


def zh_name(key: str, registry) -> str:
    """The Chinese name of a formula name: a built-in (期间天数), an index of `registry` (its name_zh), a concept (its
    Chinese label, else its English one), else the key itself. Hints' formulas and worked solutions both name with it."""
    if key in _ZH_BUILTINS:
        return _ZH_BUILTINS[key]
    if key in registry and not is_concept(key) and registry[key].name_zh:
        return registry[key].name_zh
    try:
        info = concept_info(key)
    except KeyError:
        return key
    return info.label_zh or info.label_en or key


def zh_formula(node: Node, registry, top: bool = True) -> str:
    """The formula written with Chinese names: `(营业收入 − 营业成本) / 营业收入`."""
    def name(n: str) -> str:
        return zh_name(n, registry)

    def wrap(child: Node, parent_op: str, right: bool) -> str:
        text = go(child)
        if isinstance(child, BinOp) and (child.op in "+-" and parent_op in "*/" or right and parent_op in "-/" and child.op in ("+-" if parent_op == "-" else "+-*/")):
            return f"({text})"
        return text

    def go(n: Node) -> str:
        if isinstance(n, Num):
            return str(n)
        if isinstance(n, Name):
            return name(n.name)
        if isinstance(n, Neg):
            return f"−{wrap(n.operand, '*', True)}"
        if isinstance(n, BinOp):
            sym = {"+": " + ", "-": " − ", "*": " × ", "/": " / "}[n.op]
            return wrap(n.left, n.op, False) + sym + wrap(n.right, n.op, True)
        if isinstance(n, Call):
            args = [go(a) for a in n.args]
            if n.func == "optional":
                return args[0]
            if n.func == "abs":
                return f"|{args[0]}|"
            if n.func == "first_of":
                return args[0] + "".join(f"（未列示时取 {a}）" for a in args[1:])
            if n.func == "sum_of":
                return "(" + " + ".join(args) + ")"
            if n.func in ("min_of", "max_of"):
                return f"{'min' if n.func == 'min_of' else 'max'}({', '.join(args)})"
            inner = args[0]
            if isinstance(n.args[0], (BinOp, Neg)):
                inner = f"({inner})"
            return _ZH_PREFIX[n.func] + inner
        raise TypeError(f"not a formula node: {n!r}")

    return go(node)


def _names_in_order(node: Node) -> list[str]:
    if isinstance(node, Name):
        return [node.name]
    if isinstance(node, BinOp):
        return _names_in_order(node.left) + _names_in_order(node.right)
    if isinstance(node, Neg):
        return _names_in_order(node.operand)
    if isinstance(node, Call):
        return [n for a in node.args for n in _names_in_order(a)]
    return []


def _definition(sub, language: str) -> tuple[str, set[str]]:
    """`Name = formula` of an index, from its hint, and the names it goes by (its name, the name without a
    parenthesis, the hint's own left-hand side: `Core operating profit`, `Core profit`)."""
    name, hint = (sub.name_en, sub.hint) if language == "en" else (sub.name_zh, sub.hint_zh)
    hint = hint.rstrip("。.")
    lhs = hint.split("=", 1)[0].strip() if "=" in hint else ""
    names = {n for n in (name, re.split(r"\s*[(（]", name)[0], lhs) if n and len(n) <= 60 and n.count(" ") <= 6}
    return (hint if lhs else f"{name} = {hint}"), names


def definitions(index, registry, language: str) -> tuple[str, ...]:
    """The definitions of the indices a hint names without defining them (seed-2718 helper audit: the hint of
    tangible net assets YoY never said that tangible net assets deduct deferred tax assets, and Chinese hints written
    from the formula name 净再投资 / 核心利润 / 有形资产 without their formulas), each once, those they name in turn
    after them. Indices with a convention sentence of their own (NOTES: financial debt, NOPAT, EBIT ...) are left to it."""
    noted = {key for key, _, _ in NOTES}
    out, seen = [], {index.id}

    def visit(ix, text: str) -> None:
        for ref in dict.fromkeys(_names_in_order(ix.ast)):
            if ref in seen or ref in noted or ref not in registry or is_concept(ref):
                continue
            sentence, names = _definition(registry[ref], language)
            low = text.lower()
            if not any(n.lower() in low for n in names):
                continue  # not named: its lines are written out
            if any(re.search(re.escape(n) + r"\s*=", text, re.I) for n in names):
                continue  # defined where it is named
            seen.add(ref)
            out.append(sentence)
            visit(registry[ref], sentence)

    visit(index, index.hint if language == "en" else index.hint_zh)
    return tuple(out)


POSITIVE_BASES = frozenset({"net_income", "net_income_parent", "ebitda", "equity_parent", "total_equity",
                            "invested_capital_equity", "nopat"})


def positive_base(index, registry) -> bool:
    """True for a ratio whose denominator reads net income, EBITDA, equity or invested capital (not through abs()):
    analysts call it not meaningful when that base is zero or negative (debt / EBITDA 0.0 with negative EBITDA, a
    payout ratio of a loss, ROE on negative equity, OCF / net income across loss years: seed-27182 analyst audit), and
    compute() refuses it there (IndexUndefined) instead of asking a number a model should not learn."""
    node = index.ast
    if not (isinstance(node, BinOp) and node.op == "/") or (isinstance(node.right, Call) and node.right.func == "abs"):
        return False
    todo, seen = list(_names_in_order(node.right)), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in POSITIVE_BASES:
            return True
        if name in registry and not is_concept(name):
            todo += _names_in_order(registry[name].ast)
    return False


def fill_defaults(registry) -> None:
    """Derive periods, no_hint and hint_zh for the YAML entries that do not set them (in place)."""
    for index_id, ix in list(registry.items()):
        changes = {}
        if ix.periods is None:
            changes["periods"] = default_periods(ix, registry)
        if not ix.hint_zh:
            body = zh_formula(ix.ast, registry)
            changes["hint_zh"] = f"{ix.name_zh} = {body}" + (" × 100%" if ix.result == "percent" else "")
        if not ix.conventions:
            keys = _keys(ix, registry)
            changes["conventions"] = tuple(key for key, _, _ in NOTES if key in keys)
        if ix.no_hint is None:
            changes["no_hint"] = tuple(ix.applies_to) == ("us-gaap", "ifrs", "cas")  # standard-specific: hint always
        if changes:
            registry[index_id] = dataclasses.replace(ix, **changes)
    for index_id, ix in list(registry.items()):
        if ix.reads_flows is None:
            registry[index_id] = ix = dataclasses.replace(ix, reads_flows=reads_flows(ix, registry))
    for index_id, ix in list(registry.items()):
        if ix.positive_base is None:
            registry[index_id] = ix = dataclasses.replace(ix, positive_base=positive_base(ix, registry))
    for index_id, ix in list(registry.items()):  # every hint_zh is written now
        if ix.definitions is None:
            registry[index_id] = dataclasses.replace(
                ix, definitions=(definitions(ix, registry, "en"), definitions(ix, registry, "zh")))
