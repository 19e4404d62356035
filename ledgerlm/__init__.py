"""ledgerlm: exact financial-statement reasoning for LLMs (synth -> train -> evaluate)."""
__version__ = "0.1.0"
