"""Deliberation (seed 004): personas review submitted code under the chairperson's state machine.

Pure parts (no Django, no litellm): `machine`, `quorum`, `state`, `scenario`, `report`, `offline`, `prompts`.
`checks` runs the real static-analysis tools in child processes; `amendments` checks amended code before the
machine sees it. The platform side: `platform` (the kind contract), `turns` (AI steps and headless play through
the shared driver), `pages`/`forms`/`presenters` (the browser), `export`.
"""
