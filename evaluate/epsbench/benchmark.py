"""EPSBench as a harness `Benchmark`: the tool-using agent loop is the benchmark's request/response protocol.

    ledgerlm eval --model openai --model_args model=gpt-4o-mini,base_url=URL --tasks epsbench --data DOCS \
        --task_args runs=3 --output_path runs/eps
    ledgerlm eval --model hf --model_args pretrained=PATH --tasks epsbench --task_args runs=1,instances=GOOGL_2026Q1|NVDA_2026Q4,max_turns=4 \
        --output_path runs/eps_hf

`--data`: the release's document store (DOCS/filings/<TICKER>/..., DOCS/news/...; evaluate/epsbench/bench.py
describes it); without it the agent sees only the schema (the paper's "neither" source-removal condition).
`--task_args`: release=FOLDER (default: the embedded release), information=full|filings|news|none,
runs=N (paper: 3; instance PDE = the median over runs), instances=ID|ID|... , max_turns=N (default none,
as the paper), tool_protocol=auto|native|text, exclude_flagged=true, release_config=NAME (wins vs consensus
from the release's scores.csv).
One sample = one (instance, run) conversation, id `TICKER_FQ@sK` (`instance` and `run` fields; `ledgerlm
compare` folds the runs of an instance by median, as the paper). Run k generates with seed `--seed` + k - 1.
Each sample row carries the release-format `record` (t-1.record.json) and the `trajectory`, so
`ledgerlm score --benchmark epsbench --predictions OUT/samples.jsonl` re-scores a run offline.
`summarize` is `scoring.score_records` (the release's main_tables.py aggregation), unchanged.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from functools import cached_property
from typing import Any, Iterator

from ledgerlm.errors import InputError
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.epsbench.agent import AgentConfig, Conversation, iter_conversations, make_record, start_conversation, use_native_tools
from ledgerlm.evaluate.epsbench.analyses import all_tables
from ledgerlm.evaluate.epsbench.release import Release, load_release
from ledgerlm.evaluate.epsbench.scoring import SCORER_VERSION, parse_record, sample_row, score_records, score_row, wins_from_scores_csv
from ledgerlm.evaluate.epsbench.tools import Toolbox
from ledgerlm.evaluate.epsbench.validation import validate_release
from ledgerlm.evaluate.harness.base import Benchmark, Metric, RunContext, Summary
from ledgerlm.evaluate.tasks import load_task

TASK_ARGS = ("release", "information", "runs", "instances", "max_turns", "tool_protocol", "exclude_flagged", "release_config")
INFORMATION = ("full", "filings", "news", "none")
# the paper's information conditions (Table 3) and the release's configuration suffixes
CONDITIONS = {
    "full": ("full", "all sources: filings, the prior earnings call and news (the main experiment)"),
    "filings": ("filings_only", "source removal: news removed (filings and transcripts only)"),
    "news": ("news_only", "source removal: filings and transcripts removed (news only)"),
    "none": ("neither", "source removal: news and filings/transcripts both removed (schema only)"),
}


def information_condition(information: str) -> dict[str, Any]:
    name, text = CONDITIONS[information]
    return {"information": information, "release_config_suffix": name, "paper_condition": text,
            "source_removal": information != "full"}


class EPSBench(Benchmark):
    """tool-using agent forecasts next-quarter EPS (median PDE, compliance, interval score); --data: the release's documents"""
    name = "epsbench"
    task_arg_names = TASK_ARGS  # bare --task_args keys of a several-task run go to the tasks that take them
    version = SCORER_VERSION
    primary_metric = "pde_median"
    higher_is_better = {"pde_median": False, "compliance": True, "coverage": True, "interval_score_mean": False,
                        "format_compliance": True, "catastrophic_rate": False}
    multi_turn = True

    def __init__(self, task: str, *, seed: int = 0, data: str | None = None, **task_args: Any):
        super().__init__(task, seed=seed, data=data, **task_args)
        self.information = str(task_args.get("information") or ("full" if data else "none"))
        if self.information not in INFORMATION:
            raise InputError(f"information={self.information!r}: one of {', '.join(INFORMATION)}", field="--task_args")
        if self.information != "none" and not data:
            raise InputError(f"information={self.information} needs --data (a document folder laid out like the release's)", field="--data")
        self.runs = _int(task_args.get("runs", 3), "runs")
        if self.runs < 1:
            raise InputError("runs must be at least 1", field="--task_args")
        raw = task_args.get("instances")
        self.instance_ids = [x for x in (raw if isinstance(raw, (list, tuple)) else str(raw or "").split("|")) if x]
        self.max_turns = None if task_args.get("max_turns") is None else _int(task_args["max_turns"], "max_turns")
        self.protocol = str(task_args.get("tool_protocol", "auto"))
        if self.protocol not in ("auto", "native", "text"):
            raise InputError(f"tool_protocol={self.protocol!r}: auto, native or text", field="--task_args")
        self.exclude_flagged = bool(task_args.get("exclude_flagged", False))
        self.release_config = task_args.get("release_config")
        self.spec = "model"
        self.task_spec = load_task(task)  # evaluate/tasks/epsbench/epsbench.yaml: version, generation_kwargs, metrics, group_by
        self.version = self.task_spec.version  # = SCORER_VERSION (tests/test_eval_tasks.py)
        self.higher_is_better = self.task_spec.higher_is_better

    def generation_defaults(self) -> dict[str, Any]:
        return self.task_spec.generation_params().as_dict()  # per model request of the agent loop (task YAML epsbench.yaml)

    @property
    def run_labels(self) -> list[str]:
        return [f"s{k}" for k in range(1, self.runs + 1)]

    def config(self) -> dict[str, Any]:
        return {"task": self.task, "release": str(self.release.root), "docs": self.data, "information": self.information,
                "information_condition": information_condition(self.information), "runs": self.runs,
                "instances": self.instance_ids or "all", "max_turns": self.max_turns, "tool_protocol": self.protocol,
                "native_tools": use_native_tools(self.spec, self.protocol), "exclude_flagged": self.exclude_flagged}

    @cached_property
    def release(self) -> Release:
        return load_release(self.task_args.get("release"))

    def make_sampler(self, spec: str, options: dict[str, Any]):
        self.spec = spec  # the tool protocol follows the backend (native tool calls for openai:)
        return None

    def load(self) -> list[dict[str, Any]]:
        wanted = set(self.instance_ids)
        unknown = sorted(wanted - {i.id for i in self.release.instances})
        if unknown:
            raise InputError(f"instances not in the release: {', '.join(unknown)}", field="--task_args")
        chosen = [i for i in self.release.instances if not wanted or i.id in wanted]
        return [{"id": f"{i.id}@{run}", "instance": i.id, "run": run} for run in self.run_labels for i in chosen]

    def instance_items(self, instances):
        return list(instances)

    def converse(self, instances: list[dict[str, Any]], ctx: RunContext) -> Iterator[tuple[dict[str, Any], Conversation]]:
        native = use_native_tools(self.spec, self.protocol)
        agent = AgentConfig(information=self.information, max_turns=self.max_turns, protocol=self.protocol)

        def generate(batch, params, **kwargs):
            return ctx.generate(batch, params, tools=kwargs.get("tools"))

        for k, run in enumerate(self.run_labels):
            rows = {r["instance"]: r for r in instances if r["run"] == run}
            if not rows:
                continue
            params = replace(ctx.params, seed=ctx.params.seed + k)
            convs = []
            for iid in rows:
                inst, schema = self.release.instance(iid), self.release.schema(iid)
                convs.append(start_conversation(inst, schema, Toolbox(schema, inst, self.data, self.information), run, native))
            began = time.time()

            def progress(r, active, done, run=run, total=len(convs), began=began):  # one line per round: long runs show progress
                print(f"epsbench: run {run} round {r}: {active} conversations active, {done}/{total} finished "
                      f"({time.time() - began:.0f} s)", file=sys.stderr, flush=True)

            for conv in iter_conversations(generate, convs, params, agent, native, on_round=progress):
                yield rows[conv.instance.id], conv

    def score(self, instance: dict[str, Any], conv: Conversation) -> dict[str, Any]:
        iid, run = instance["instance"], instance["run"]
        record = make_record(conv, self.release.truth.get(iid), self.spec, (self.release.consensus or {}).get(iid))
        row = sample_row(score_row(self.release, parse_record(record, run), self.flagged.get(iid, [])))
        row.update(id=instance["id"], instance=iid, run=run, response=conv.final_text, answer_text=conv.final_text,
                   prompt=conv.messages[:2], record=record, trajectory=conv.messages)
        if conv.error and conv.error.startswith("backend error:"):
            row["transport_error"] = conv.error.removeprefix("backend error:").strip()
        return row

    @cached_property
    def flags(self):
        return validate_release(self.release)

    @cached_property
    def flagged(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for flag in self.flags:
            out.setdefault(flag.id, []).append(flag.check)
        return out

    def summarize(self, samples: list[dict[str, Any]], ctx: RunContext) -> Summary:
        records = sorted(((s["run"], s["record"]) for s in samples), key=lambda rr: (rr[0], str(rr[1].get("ticker")), str(rr[1].get("fiscal_quarter"))))
        results, rows = score_records(self.release, records, self.flags, exclude_flagged=self.exclude_flagged, seed=ctx.seed,
                                      n_boot=ctx.bootstrap_iters, runs=self.run_labels)
        detail = finish_results(self.release, results, rows, self.config(), ctx.seed, self.exclude_flagged, self.release_config)
        n_runs = results["n_runs_expected"]
        known = {
            "pde_median": Metric(results["pde_median"], results["n_instances_finite"], None, _pair(results["pde_median_ci"])),
            "compliance": _proportion(results["n_runs_with_forecast"], n_runs),
            "coverage": _proportion(round((results["coverage"] or 0) * results["n_with_interval"]), results["n_with_interval"]),  # the rows summarize counted
            "interval_score_mean": Metric(results["interval_score_mean"], results["n_with_interval"]),
            "format_compliance": _proportion(results["n_records"] - results["n_format_failures"], results["n_records"]),
            "catastrophic_rate": _proportion(results["n_catastrophic_runs"], n_runs),
        }
        detail["group_by"] = list(self.task_spec.group_by)
        metrics = {m.name: known[m.name] for m in self.task_spec.metrics}  # the task YAML's `metrics`, in its order
        return Summary(metrics=metrics, detail=detail, text=summary_line(results))


def finish_results(release: Release, results: dict, rows: list, config: dict, seed: int, exclude_flagged: bool,
                   release_config: str | None) -> dict[str, Any]:
    """The EPSBench results.json detail (as before the harness): config, paper tables, compare/report keys."""
    results["config"] = {**config, "release": str(release.root), "exclude_flagged": exclude_flagged, "seed": seed}
    if "information_condition" in config:
        results["information_condition"] = config["information_condition"]
    if release.consensus is None and release_config:
        results["consensus_from_scores_csv"] = wins_from_scores_csv(release.root / "data" / "scores.csv", release_config)
    grid = [i.id for i in release.instances if not (exclude_flagged and i.id in results["validation"]["flagged_instances"])]
    results["tables"] = all_tables(release, rows, results["runs"], grid)
    results["score_direction"] = "lower is better (score = PDE, a fraction of price)"
    # for `ledgerlm compare/report`: score is a loss; the runs s1..sN of an instance (field `instance`) fold by median (null = +inf)
    results.update(score_kind="loss", score_name="PDE", score_aggregate="median", score_instance_key="instance", group_by=[])
    return results


def summary_line(results: dict) -> str:
    pct = lambda v: "n/a" if v is None else f"{100 * v:.3f}%"  # noqa: E731
    return (f"epsbench: {results['n_records']} records, {results['n_instances']} instances, median PDE {pct(results['pde_median'])}, "
            f"coverage {results['coverage']}, format compliance {results['format_compliance']}, "
            f"flagged {len(results['validation']['flagged_instances'])}")


def _proportion(k: int, n: int) -> Metric:
    """A rate with its Wilson interval (stats.wilson_ci)."""
    if not n:
        return Metric(None, 0)
    est = stats.wilson_ci(int(k), int(n))
    return Metric(est.value, n, (est.value * (1 - est.value) / (n - 1)) ** 0.5 if n > 1 else None, (est.ci_low, est.ci_high))


def _pair(ci) -> tuple[float, float] | None:
    return None if not ci or ci[0] is None or ci[1] is None else (ci[0], ci[1])


def _int(value: Any, key: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InputError(f"{key}={value!r} is not a whole number", field="--task_args") from None
