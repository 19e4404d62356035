"""MacroLens as a harness `Benchmark`: one task per paper task, `macrolens_t1` .. `macrolens_t7`.

    ledgerlm eval --model baseline:naive --tasks macrolens_t1,macrolens_t2 --task_args ladder=A..E,horizon=5,budget=50 \
        --output_path runs/ml_naive
    ledgerlm eval --model hf --model_args pretrained=PATH --tasks macrolens_t2 --data DeepAuto-AI/MacroLens --output_path runs/ml

`--data`: a local release folder, a Hub id, or nothing / `fixture` (the offline test panel, seed 42).
`--model`: any backend, or a reference baseline `baseline:naive|persistence|sector_median|...` (`make_sampler`).
`--task_args` (all optional): granularity=daily|weekly|monthly, ladder=A..E | ACE | E (T1/T2/T4/T5 context
levels), budget=N|full (instances of this task; or per task, T1=200|T4=200), lookback=N, horizon=N, t3_instances=latest|test,
b_min=N, b_max=N (cluster-bootstrap replicates), paper_seed=N.
Seeds: `--seed` (the runner's one seed, default 0) seeds generation. The paper fixes seed 42 for what
defines the benchmark - company holdout, stratified subsample, the fixture panel, baselines and the
cluster bootstrap (§5.1, App. F) - so those use `paper_seed` (default 42), not `--seed`.
Generation defaults (task YAML evaluate/tasks/macrolens/): 512 new tokens, T1 12 per horizon step + 64.
Scoring (`scoring.score_row`, per sample) and the summary (`scoring.score_rows`: metrics per task x level with
cluster-bootstrap CIs, strata, the Table 11 ladder) are the pre-harness ones (tests/test_eval_golden.py).
"""
from __future__ import annotations

from functools import cached_property
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness.base import Benchmark, Metric, Request, RunContext, Summary
from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.baselines import BaselineSampler
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.macrolens.instances import TASKS, TaskConfig, build
from ledgerlm.evaluate.macrolens.metrics import PRIMARY
from ledgerlm.evaluate.macrolens.prompts import LADDER, LADDER_TASKS, build_messages
from ledgerlm.evaluate.macrolens.sampling_plan import parse_budgets
from ledgerlm.evaluate.macrolens.scoring import BOOTSTRAP_SEED, SCORER_VERSION, NO_CI, ladder_table, score_row, score_rows
from ledgerlm.evaluate.tasks import load_task
from ledgerlm.inference.sampling import Completion

TASK_ARGS = ("granularity", "ladder", "budget", "lookback", "horizon", "t3_instances", "b_min", "b_max", "paper_seed")
SCORE_FIELD = ("per-instance primary loss (lower is better): T1 MSE, T2/T5 APE %, T3/T6 mean APE %, T4 |error| %, "
               "T7 mean APE %")


def task_name(paper_task: str) -> str:
    """T2 -> macrolens_t2."""
    return f"macrolens_{paper_task.lower()}"


def parse_ladder(text: str) -> list[str]:
    """'A..E', 'A,C,E', 'ACE', 'A|C|E' or one letter -> levels in ladder order."""
    text = str(text).strip().upper()
    if ".." in text:
        a, _, b = text.partition("..")
        if a not in LADDER or b not in LADDER or LADDER.index(a) > LADDER.index(b):
            raise InputError(f"bad ladder range {text!r}", field="ladder")
        return list(LADDER[LADDER.index(a): LADDER.index(b) + 1])
    levels = [x for x in text.replace(",", "").replace("|", "").replace(" ", "")]
    if not levels or any(x not in LADDER for x in levels):
        raise InputError(f"ladder levels must be among {LADDER}, got {text!r}", field="ladder")
    return [lv for lv in LADDER if lv in levels]


class MacroLens(Benchmark):
    """MacroLens (T1-T7): forecasting, valuation, scenario and statement tasks; --data: release folder, Hub id or `fixture`"""
    name = "macrolens"
    task_arg_names = TASK_ARGS  # bare --task_args keys of a several-task run go to the tasks that take them
    version = SCORER_VERSION

    def __init__(self, task: str, *, seed: int = 0, data: str | None = None, **task_args: Any):
        super().__init__(task, seed=seed, data=data, **task_args)
        paper = {task_name(t): t for t in TASKS}
        if task not in paper:
            raise InputError(f"task {task!r}: name one MacroLens task or several, comma-separated: {', '.join(paper)}",
                             field="--tasks")
        self.spec = load_task(task)  # evaluate/tasks/macrolens/<task>.yaml: select, version, generation_kwargs, metrics, group_by
        self.paper_task = self.spec.select["task"]  # T1..T7
        self.version = self.spec.version  # = SCORER_VERSION (tests/test_eval_tasks.py)
        self.primary_metric = PRIMARY[self.paper_task]
        self.paper_seed = int(task_args.get("paper_seed", BOOTSTRAP_SEED))
        self.granularity = str(task_args.get("granularity", "daily"))
        self.levels = parse_ladder(task_args.get("ladder", "E")) if self.paper_task in LADDER_TASKS else ["-"]
        budget = task_args.get("budget")  # N | full | per task: T1=12|T4=12 (or T1=12,T4=12 from Python)
        text = None if budget is None else str(budget).replace("|", ",")
        budgets = parse_budgets(text if text is None or "=" in text else f"{self.paper_task}={text}")
        t3 = str(task_args.get("t3_instances", "latest"))
        if t3 not in ("latest", "test"):
            raise InputError(f"t3_instances={t3!r}: latest or test", field="--task_args")
        self.cfg = TaskConfig(granularity=self.granularity, lookback=_int(task_args, "lookback"), horizon=_int(task_args, "horizon"),
                              budgets=budgets, t3_instances=t3, seed=self.paper_seed)
        self.b_min, self.b_max = _int(task_args, "b_min") or 1000, _int(task_args, "b_max") or 10_000
        self.higher_is_better = {}
        self.drops: dict[str, int] = {}

    @classmethod
    def task_names(cls) -> list[str]:
        return [task_name(t) for t in TASKS]

    def generation_defaults(self) -> dict[str, Any]:
        """The task YAML's generation_kwargs; `max_gen_toks: null` (T1): 12 tokens per horizon step + 64."""
        own = None if self.spec.generation_kwargs.max_gen_toks else 12 * self.cfg.H() + 64
        return self.spec.generation_params(max_tokens=own).as_dict()

    def config(self) -> dict[str, Any]:
        return {"task": self.task, "paper_task": self.paper_task, "release": self.source, "granularity": self.granularity,
                "ladder": self.levels, "budget": self.cfg.budgets.get(self.paper_task), "horizon": self.cfg.H(), "lookback": self.cfg.L(),
                "t3_instances": self.cfg.t3_instances, "b_min": self.b_min, "b_max": self.b_max, "paper_seed": self.paper_seed}

    @property
    def source(self) -> str:
        return "fixture" if self.data in (None, "fixture") else str(self.data)

    @cached_property
    def release(self) -> D.Release:
        if self.data in (None, "fixture"):
            return D.load_release(str(cached_fixture_dir(self.paper_seed)), self.granularity)
        return D.load_release(str(self.data), self.granularity)

    def make_sampler(self, spec: str, options: dict[str, Any]):
        if not spec.startswith("baseline:"):
            return None
        sampler = BaselineSampler(spec, self.release, self.paper_seed)
        sampler.check([self.paper_task])
        return sampler

    def load(self) -> list[dict[str, Any]]:
        insts, self.drops = build(self.paper_task, self.release, self.cfg)
        rows = []
        for level in self.levels:
            for inst in insts:
                messages = build_messages(inst, level if level != "-" else "E", self.granularity)
                rows.append({"id": f"{inst['id']}@{level}", "task": self.paper_task, "level": level, "messages": messages,
                             "target": inst["target"], "meta": inst["meta"], "cluster": inst["cluster"], "strata": inst["strata"],
                             "ticker": inst["ticker"], "anchor": inst["anchor"], "_instance": inst})
        return rows

    def build_request(self, instance: dict[str, Any]) -> Request:
        return Request(messages=instance["messages"])

    def instance_items(self, instances):
        return [i["_instance"] for i in instances]  # what reference baselines predict from

    def score(self, instance: dict[str, Any], response: Completion) -> dict[str, Any]:
        row = {k: instance[k] for k in ("id", "task", "level", "target", "meta", "cluster", "strata", "ticker", "anchor")}
        row.update(prompt=instance["messages"][-1]["content"], response=response.text, reasoning=response.reasoning)
        if response.error:
            row["transport_error"] = response.error
        return score_row(row)

    def summarize(self, samples: list[dict[str, Any]], ctx: RunContext) -> Summary:
        rows = [dict(s) for s in samples]
        summary = score_rows(rows, b_min=self.b_min, b_max=self.b_max, seed=self.paper_seed)
        for levels in summary.values():
            for s in levels.values():
                s["drops"] = dict(self.drops)
        detail = results_detail(summary, ctx.model_id, self.config())
        detail["group_by"] = list(self.spec.group_by)  # for `ledgerlm compare/report`
        listed = self.spec.higher_is_better  # the task YAML's metrics and directions
        levels = summary.get(self.paper_task, {})
        metrics: dict[str, Metric] = {}
        for level, s in levels.items():
            suffix = "" if len(levels) == 1 else f"_{level}"
            n = s["counts"]["n"]
            for name, iv in s["metrics"].items():
                if name in listed:
                    metrics[name + suffix] = Metric(iv["value"], n, None, (iv["ci_low"], iv["ci_high"]))
                    self.higher_is_better[name + suffix] = listed[name]
            for name in sorted(NO_CI & set(s["counts"]) - {"n", "n_clusters"}):
                if name in listed:
                    metrics[name + suffix] = Metric(s["counts"][name], n)
                    self.higher_is_better[name + suffix] = listed[name]
        if len(levels) > 1:
            self.primary_metric = f"{PRIMARY[self.paper_task]}_{self.levels[-1]}"
        return Summary(metrics=metrics, detail=detail, text=summary_text(summary, detail["ladder_text"]))


def results_detail(summary: dict, model: str, config: dict) -> dict[str, Any]:
    """The MacroLens part of results.json (as before the harness): tasks, ladder, flat metrics, compare/report keys."""
    table, text = ladder_table(summary)
    flat = {f"{t}/{lv}/{m}": v["value"] for t, lvs in summary.items() for lv, s in lvs.items() for m, v in s["metrics"].items()}
    return {"benchmark": "macrolens", "scorer_version": SCORER_VERSION, "model": model, "config": config, "tasks": summary,
            "ladder": table, "ladder_text": text, "metrics": flat, "score_field": SCORE_FIELD, "score_kind": "loss",
            "score_name": "primary loss", "group_by": ["task", "level"]}


def summary_text(summary: dict, ladder_text: str) -> str:
    lines = []
    for task, lvs in summary.items():
        for lv, s in lvs.items():
            m = s["metrics"][s["primary"]]
            extra = ", ".join(f"{k} {v:.4g}" for k, v in s["counts"].items() if k in ("parse_pct", "n_nonresponse", "n_unparsed_fields"))
            lines.append(f"{task} [{lv}] n={s['counts']['n']} {s['primary']} {m['value']:.4g} [{m['ci_low']:.4g}, {m['ci_high']:.4g}] "
                         f"B={m['B']}; {extra}")
    if ladder_text:
        lines.append("\nContext ladder (within-model trend, primary metric; lower is better):\n" + ladder_text)
    return "\n".join(lines)


def _int(args: dict, key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InputError(f"{key}={value!r} is not a whole number", field="--task_args") from None
