"""Message Lab (seed 000): a panel of personas works a brief over rounds that create, critique (anonymized),
synthesize, refine and present concepts, with quality gates where a person steers.

Built in steps (issue #12). What stands: the scenario schema and its shipped personas and briefs (`scenario`), and
the seed's three state tables — simulation, round stages, concept lifecycle — as pure data with their transitions
(`state`). Not yet: the machine that applies events, the offline personas, the platform adapter, pages."""
