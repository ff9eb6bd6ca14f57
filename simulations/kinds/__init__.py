"""Simulation kinds: each kind's machine, scenario schema, prompts, bots and report live in its own folder."""
