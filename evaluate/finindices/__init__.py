"""FinIndices: answer extraction, scoring, the official-release adapter and reference models."""
from ledgerlm.evaluate.finindices import reference  # noqa: F401  (adds the `wrong_unit` backend to the inference table)
