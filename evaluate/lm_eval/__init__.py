"""lm-evaluation-harness export: `ledgerlm export-lm-eval --data DIR --out TASKDIR` (export.py), scoring hooks (hooks.py).

    ledgerlm export-lm-eval --data runs/finindices --out runs/lmeval_tasks
    lm_eval --model hf --model_args pretrained=MODEL --tasks finindices --include_path runs/lmeval_tasks --apply_chat_template
"""
