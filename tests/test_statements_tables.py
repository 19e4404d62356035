"""Statement tables (HTML / LaTeX, English / Chinese) and rendering round trips."""
from __future__ import annotations

import pytest

from ledgerlm.synth.statements import sources, taxonomy
from ledgerlm.synth.statements.render import FORMATS, parse_rendered, render_statement
from ledgerlm.synth.statements.tables import load_tables_text, parse_amount, parse_period_header, parse_unit_header

# A CAS consolidated balance sheet as annual reports print it (hand-made, balanced; 单位：元).
CAS_BALANCE_HTML = """<html><body>
<p>示例制造股份有限公司（600000）</p>
<p>合并资产负债表</p>
<p>编制单位：示例制造股份有限公司　　　　单位：元　币种：人民币</p>
<table>
<tr><td>项目</td><td>2023年12月31日</td><td>2022年12月31日</td></tr>
<tr><td>流动资产：</td><td></td><td></td></tr>
<tr><td>货币资金</td><td>1,250,000,000.00</td><td>1,100,000,000.00</td></tr>
<tr><td>交易性金融资产</td><td>—</td><td>—</td></tr>
<tr><td>应收票据</td><td>80,000,000.00</td><td>75,000,000.00</td></tr>
<tr><td>应收账款</td><td>420,000,000.00</td><td>390,000,000.00</td></tr>
<tr><td>预付款项</td><td>35,000,000.00</td><td>30,000,000.00</td></tr>
<tr><td>存货</td><td>610,000,000.00</td><td>560,000,000.00</td></tr>
<tr><td>其他流动资产</td><td>25,000,000.00</td><td>20,000,000.00</td></tr>
<tr><td>流动资产合计</td><td>2,420,000,000.00</td><td>2,175,000,000.00</td></tr>
<tr><td>非流动资产：</td><td></td><td></td></tr>
<tr><td>长期股权投资</td><td>300,000,000.00</td><td>280,000,000.00</td></tr>
<tr><td>固定资产</td><td>1,800,000,000.00</td><td>1,700,000,000.00</td></tr>
<tr><td>在建工程</td><td>150,000,000.00</td><td>210,000,000.00</td></tr>
<tr><td>使用权资产</td><td>60,000,000.00</td><td>70,000,000.00</td></tr>
<tr><td>无形资产</td><td>240,000,000.00</td><td>250,000,000.00</td></tr>
<tr><td>递延所得税资产</td><td>30,000,000.00</td><td>25,000,000.00</td></tr>
<tr><td>非流动资产合计</td><td>2,580,000,000.00</td><td>2,535,000,000.00</td></tr>
<tr><td>资产总计</td><td>5,000,000,000.00</td><td>4,710,000,000.00</td></tr>
<tr><td>流动负债：</td><td></td><td></td></tr>
<tr><td>短期借款</td><td>400,000,000.00</td><td>450,000,000.00</td></tr>
<tr><td>应付票据</td><td>150,000,000.00</td><td>130,000,000.00</td></tr>
<tr><td>应付账款</td><td>520,000,000.00</td><td>480,000,000.00</td></tr>
<tr><td>合同负债</td><td>90,000,000.00</td><td>85,000,000.00</td></tr>
<tr><td>应付职工薪酬</td><td>70,000,000.00</td><td>65,000,000.00</td></tr>
<tr><td>应交税费</td><td>45,000,000.00</td><td>40,000,000.00</td></tr>
<tr><td>其他应付款</td><td>35,000,000.00</td><td>30,000,000.00</td></tr>
<tr><td>一年内到期的非流动负债</td><td>120,000,000.00</td><td>100,000,000.00</td></tr>
<tr><td>流动负债合计</td><td>1,430,000,000.00</td><td>1,380,000,000.00</td></tr>
<tr><td>非流动负债：</td><td></td><td></td></tr>
<tr><td>长期借款</td><td>600,000,000.00</td><td>650,000,000.00</td></tr>
<tr><td>应付债券</td><td>300,000,000.00</td><td>300,000,000.00</td></tr>
<tr><td>租赁负债</td><td>50,000,000.00</td><td>60,000,000.00</td></tr>
<tr><td>递延所得税负债</td><td>20,000,000.00</td><td>18,000,000.00</td></tr>
<tr><td>非流动负债合计</td><td>970,000,000.00</td><td>1,028,000,000.00</td></tr>
<tr><td>负债合计</td><td>2,400,000,000.00</td><td>2,408,000,000.00</td></tr>
<tr><td>所有者权益（或股东权益）：</td><td></td><td></td></tr>
<tr><td>实收资本（或股本）</td><td>1,000,000,000.00</td><td>1,000,000,000.00</td></tr>
<tr><td>资本公积</td><td>500,000,000.00</td><td>500,000,000.00</td></tr>
<tr><td>盈余公积</td><td>300,000,000.00</td><td>250,000,000.00</td></tr>
<tr><td>未分配利润</td><td>700,000,000.00</td><td>452,000,000.00</td></tr>
<tr><td>归属于母公司所有者权益（或股东权益）合计</td><td>2,500,000,000.00</td><td>2,202,000,000.00</td></tr>
<tr><td>少数股东权益</td><td>100,000,000.00</td><td>100,000,000.00</td></tr>
<tr><td>所有者权益（或股东权益）合计</td><td>2,600,000,000.00</td><td>2,302,000,000.00</td></tr>
<tr><td>负债和所有者权益（或股东权益）总计</td><td>5,000,000,000.00</td><td>4,710,000,000.00</td></tr>
</table></body></html>"""


def test_cas_balance_sheet_html_loads_and_classifies_liabilities():
    df = load_tables_text(CAS_BALANCE_HTML, "cas_balance.html")
    assert set(df["company"]) == {"600000"} and set(df["scope"]) == {"consolidated"}
    assert set(df["unit"]) == {"CNY"} and set(df["statement"]) == {"balance"} and set(df["start"]) == {""}
    assert set(df["end"]) == {"2023-12-31", "2022-12-31"}
    assert "short_term_investments" not in set(df["concept"])  # "—" is missing, not zero
    for end, year in df.groupby("end"):
        v = year.set_index("concept")["value"]
        assert v["total_assets"] == v["total_liabilities"] + v["total_equity"]
        assert v["total_equity"] == v["equity_parent"] + v["minority_interest"]
        liabilities = year[year["concept"].map(lambda c: taxonomy.concept_info(c).interest_bearing is not None)]
        flags = {c: taxonomy.concept_info(c).interest_bearing for c in liabilities["concept"]}
        assert {c for c, f in flags.items() if f} == {"short_term_debt", "current_portion_long_term_debt", "long_term_debt", "bonds_payable", "lease_liabilities"}
        assert {"notes_payable", "accounts_payable", "contract_liabilities", "payroll_payable", "taxes_payable"} <= {c for c, f in flags.items() if f is False}
        # every line item of the liabilities side adds up to the reported totals
        items = liabilities[~liabilities["concept"].isin(["total_liabilities", "current_liabilities", "noncurrent_liabilities"])]
        assert items["value"].sum() == v["total_liabilities"]
    assert df.loc[(df["end"] == "2023-12-31") & (df["concept"] == "short_term_debt"), "value"].item() == 400_000_000.0


def test_cas_table_in_wan_yuan_scales():
    html = CAS_BALANCE_HTML.replace("单位：元", "单位：万元").replace(",000,000.00", "00.00").replace("1,250,000,000.00", "125,000.00")
    df = load_tables_text(html, "cas_wan.html")
    v = df[df["end"] == "2023-12-31"].set_index("concept")["value"]
    assert v["cash"] == 1_250_000_000.0 and v["short_term_debt"] == 400 * 10_000 * 100


def test_latex_quarter_table_with_negatives_and_dashes():
    tex = r"""
\begin{table}
\caption{Example Corp. (EXMP) Condensed consolidated statements of operations (in thousands, except per share amounts)}
\begin{tabular}{lrr}
\toprule
 & \multicolumn{2}{c}{Three Months Ended} \\
 & July 1, 2023 & June 25, 2022 \\
\midrule
Net sales & 81,797 & 82,959 \\
Other income/(expense), net & (265) & \textendash{} \\
Diluted & 1.26 & 1.20 \\
\bottomrule
\end{tabular}
\end{table}"""
    df = load_tables_text(tex, "q.tex", fmt="latex")
    got = {(r.concept, r.end): (r.value, r.start, r.unit) for r in df.itertuples()}
    assert got[("revenue", "2023-07-01")] == (81_797_000.0, "2023-04-02", "USD")
    assert got[("nonoperating_income", "2023-07-01")][0] == -265_000.0
    assert ("nonoperating_income", "2022-06-25") not in got
    assert set(df["company"]) == {"EXMP"} and set(df["statement"]) == {"income"}


@pytest.mark.parametrize("text,expected", [("1,234", 1234.0), ("(1,234.5)", -1234.5), ("—", None), ("-", None), ("", None), ("$ 12", 12.0), ("－", None)])
def test_parse_amount(text, expected):
    assert parse_amount(text) == expected


@pytest.mark.parametrize("text,scale", [("单位：元", 1), ("单位：千元", 1e3), ("单位：万元", 1e4), ("(in millions)", 1e6), ("(In thousands, except per share data)", 1e3)])
def test_unit_headers(text, scale):
    assert parse_unit_header(text).scale == scale


@pytest.mark.parametrize("text,start,end", [("2023年度", "2023-01-01", "2023-12-31"), ("2023年12月31日", "", "2023-12-31"),
                                            ("Six Months Ended June 30, 2009", "2009-01-01", "2009-06-30"), ("FY2023", "2023-01-01", "2023-12-31"),
                                            ("FY2023 (2022-09-25 to 2023-09-30)", "2022-09-25", "2023-09-30")])
def test_period_headers(text, start, end):
    got = parse_period_header(text, "balance" if "日" in text else "income")
    assert (got.start, got.end) == (start, end)


@pytest.fixture(scope="module")
def aapl_fy2023_income() -> dict:
    df = sources.load_facts()
    rows = df[(df["company"] == "AAPL") & (df["statement"] == "income") & (df["start"] == "2022-09-25") & (df["end"] == "2023-09-30")]
    assert len(rows) >= 12
    items = [{"concept": r.concept, "label": r.label, "value": r.value} for r in rows.itertuples()]
    return {"company": "AAPL", "period": "FY2023", "statement": "income", "scope": "consolidated", "unit": "USD", "items": items}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scale,language", [(1, "en"), (1e6, "en"), (1e6, "zh"), (1e3, "zh")])
def test_render_parse_round_trip(aapl_fy2023_income, fmt, scale, language):
    text = render_statement(aapl_fy2023_income, fmt, scale=scale, language=language)
    back = parse_rendered(text, fmt)
    assert {k: back[k] for k in ("company", "period", "statement", "scope", "unit")} == {k: aapl_fy2023_income[k] for k in ("company", "period", "statement", "scope", "unit")}
    assert len(back["items"]) == len(aapl_fy2023_income["items"])
    for mine, theirs in zip(aapl_fy2023_income["items"], back["items"]):
        assert theirs["concept"] == mine["concept"] and theirs["value"] == pytest.approx(mine["value"], rel=1e-12)


@pytest.mark.parametrize("fmt", ["html", "latex"])
def test_html_and_latex_reparse_through_table_loader(aapl_fy2023_income, fmt):
    stmt = dict(aapl_fy2023_income, start="2022-09-25", end="2023-09-30")
    text = render_statement(stmt, fmt, scale=1e6)
    df = load_tables_text(text, f"aapl.{fmt}", fmt=fmt)
    assert set(df["company"]) == {"AAPL"} and set(df["end"]) == {"2023-09-30"}
    got = df.set_index("concept")["value"].to_dict()
    expected = {i["concept"]: i["value"] for i in stmt["items"]}
    assert got == pytest.approx(expected, rel=1e-12)
    assert set(df.loc[df["concept"] == "revenue", "start"]) == {"2022-09-25"}
