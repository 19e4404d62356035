"""Inference layer below evaluate/ and synth/distill/: samplers, backends, the completion cache, retries.

    python -c "from ledgerlm.inference.sampling import make_sampler; print(make_sampler('oracle').model_id)"

`sampling` (Sampler interface, GenerationParams, Completion) · `backends` (hf, vllm, openai, oracle) ·
`cache` (one completion cache) · `ratelimit` (retry/backoff helpers) · `reasoning` (split <think> blocks).
Imports only `ledgerlm.errors`; never imports synth/, train/ or evaluate/.
"""
