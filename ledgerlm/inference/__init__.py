"""Inference layer below evaluate/ and synth/distill/: samplers, backends, the completion cache, retries.

    python -c "from ledgerlm.inference.sampling import make_sampler; print(make_sampler('oracle').model_id)"

`sampling` (Sampler interface, GenerationParams, Completion, make_sampler) · `backends` (one table:
hf, vllm, openai, oracle; layers above add rows with `register_backend`) · `cache` (the one completion
cache + `generate_cached`) · `retry` (the one retry policy) · `ratelimit` (concurrency / rps / tpm) ·
`reasoning` (split <think> blocks) · `text` (lone surrogates, credentials in URLs).
Imports only `ledgerlm.errors`; never imports synth/, train/ or evaluate/ (tests/test_layering.py).
"""
