"""The game's record: one transaction per turn, its rows, checkpoints, snapshots and resume."""
