"""Social-feed agents (seed 003): a population browses a feed and likes, replies, reshares or composes, each agent
driven by a shared statechart whose guards decide most transitions and a reasoner the ambiguous ones.

Built in steps (issue #14). What stands: the scenario (config.py: the seed's SimulationConfig with its messages,
the population listed or generated, topics, initial posts; `scenarios/town-square.yaml`, which moves to
`scenarios/social_feed/` once the kind is installed), the data model (entities.py), the statechart (its trigger
table, guards and the triggers agents meet), the round flow with checkpoints (rounds.py) and the offline reasoner
and writer (offline.py); `bench/social_feed.py`. Not yet: the platform adapter (runs stored, driven in the
background, a real model's reasoner and writer), pages, and installing it in settings.MERCURY_KINDS."""
