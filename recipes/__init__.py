"""Pure model of an InferenceX-style benchmark repository: parsers, expansion, analysis. No network."""
