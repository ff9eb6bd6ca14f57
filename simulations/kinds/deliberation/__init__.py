"""Deliberation (seed 004): personas review submitted code under the chairperson's state machine.

Pure parts (no Django, no litellm): `machine`, `quorum`, `state`, `scenario`, `report`, `offline`, `prompts`.
`checks` runs the real static-analysis tools in child processes; `run` drives a whole deliberation.
"""
