"""Channel layers for bench/load.py's diagnosis only (MERCURY_CHANNEL_LAYER=bench.layers.StampedRedisChannelLayer,
or bench.layers.StampedBatchedRedisChannelLayer for mercury.channel_layer's).

A layer stamping each streamed frame's message (MERCURY_STREAM_TIMESTAMPS) as the serving process takes it off
Redis: a frame's time between the channel layer and its page's consumer then splits into Redis and the process's
receive loop, and waiting in the consumer's own queue behind its earlier messages.
"""

from __future__ import annotations

import time
from typing import Any

from channels_redis.core import RedisChannelLayer

from mercury.channel_layer import BatchedRedisChannelLayer


def _stamped(message: Any, stamps: int = 3) -> Any:
    """The message with the time now added to its stamps, if it is a streamed frame with `stamps` of them."""
    frame = isinstance(message, dict) and message.get("type") == "game.stream"
    if frame and len(message.get("at", ())) == stamps:
        message = {**message, "at": [*message["at"], time.time()]}
    return message


class StampedRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]
    async def receive_single(self, channel: str) -> Any:
        channel_name, message = await super().receive_single(channel)
        return channel_name, _stamped(message)


class StampedBatchedRedisChannelLayer(BatchedRedisChannelLayer):
    """Also stamps a frame as the sender's send writes it for Redis (`serialize`): the Redis hop splits into the
    sender's own send (its thread's turn at the lock among the worker's drive threads) and the rest."""

    def serialize(self, message: dict[str, Any]) -> bytes:  # just before the sender's round trip
        return super().serialize(_stamped(message))  # type: ignore[no-any-return]

    def deserialize(self, message: bytes) -> Any:  # as the batch comes off Redis
        return _stamped(super().deserialize(message), stamps=4)
