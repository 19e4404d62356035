"""ledgerlm.train: TRL/PEFT/accelerate fine-tuning (entry point: accelerate launch train/sft.py)."""
