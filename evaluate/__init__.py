"""ledgerlm.evaluate: one evaluator for FinIndices, MacroLens and EPSBench. Not Hugging Face `evaluate`."""
