"""The channel layer as configured: on Redis, a page that waits a long while between turns keeps its socket.

A consumer's receive is channels_redis's blocking pop of up to 5 s, over and over; redis-py 8 gives each socket
read a 5 s time-out by default, so an idle page's receive could fail with "Timeout reading" and its socket close
(found by tests/reliability/test_school.py). Runs where REDIS_URL is set (CI's second leg).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from channels.layers import get_channel_layer

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")


async def test_a_receive_that_waits_through_several_blocking_pops_gets_the_message() -> None:
    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"
    channel = await layer.new_channel()

    async def send_later() -> None:
        await asyncio.sleep(12)  # two and a half of channels_redis's 5 s pops
        await layer.send(channel, {"type": "game.advanced", "n": 1})

    sender = asyncio.create_task(send_later())
    message = await asyncio.wait_for(layer.receive(channel), timeout=30)
    await sender
    assert message == {"type": "game.advanced", "n": 1}
