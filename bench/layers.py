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


def _stamped(message: Any) -> Any:
    if isinstance(message, dict) and message.get("type") == "game.stream" and len(message.get("at", ())) == 3:
        message["at"] = [*message["at"], time.time()]
    return message


class StampedRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]
    async def receive_single(self, channel: str) -> Any:
        channel_name, message = await super().receive_single(channel)
        return channel_name, _stamped(message)


class StampedBatchedRedisChannelLayer(BatchedRedisChannelLayer):
    def deserialize(self, message: bytes) -> Any:  # as the batch comes off Redis
        return _stamped(super().deserialize(message))
