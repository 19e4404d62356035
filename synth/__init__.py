"""ledgerlm.synth: real filings -> canonical facts -> indices -> FinIndices-style datasets."""
