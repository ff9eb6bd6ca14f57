"""The channel layers: channels_redis's, taking a process's messages off Redis many at a time
(`BatchedRedisChannelLayer`, the scaled set-up), and channels' in-memory layer with cheaper sends
(`LocalChannelLayer`, the embedded default).

## BatchedRedisChannelLayer

A server process receives every page's messages through one Redis key (its process channel), and channels_redis
takes them off it one at a time with four round trips each (restore a backup queue, a blocking pop, a copy to the
backup queue, and after delivery its removal), the next not before the last is done. Under load the process's
event loop is busy, each round trip waits its turn in it, and streamed frames wait in Redis while unread
messages pile up past the layer's capacity and are dropped. Here one round trip takes up to RECEIVE_BATCH waiting messages (a blocking pop only when there are
none) into a buffer of the process's own; channels_redis's receive then hands them to their pages as before.

A group send (every committed turn and streamed frame) is channels_redis's in four round trips: drop the group's
expired members, read its members, drop each member's expired messages, and a script that adds the message where
there is room. Here it is two: the group's clean-up and read in one pipeline, and one script (by its hash) that
drops each member's expired messages and adds the message where there is room, on each Redis server holding
members. Same commands, same order per key, same capacity rule, for less of the sender's CPU. And once the layer knows a group's members (from its last
send to it), it is one: a script that cleans and reads the group as the pipeline does, and adds the message only
if the members are exactly those the sender wrote it for; otherwise it adds nothing and returns the members, and
the sender writes the message for them and tries again. Members change when a page opens or closes, while a
drive sends several messages a turn to the same page.

What is given up is channels_redis's backup queue, which puts a message back when a receive is cancelled after
Redis gave it out. Instead the pop runs in a task of its own that a page's cancelled receive does not cancel (a
page that disconnects while it happens to be the one reading must not lose the others' messages); a process that
dies loses what it had taken, as it loses what its pages had not yet shown. Pages recover a lost message by
themselves (simulations/consumers.py, IDLE_RECHECK).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
import time
from collections import defaultdict, deque
from copy import deepcopy
from typing import Any, Literal

import redis
from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer
from redis.exceptions import NoScriptError

logger = logging.getLogger(__name__)
RECEIVE_BATCH = 200  # messages taken in one round trip, at most

# channels_redis's group-send script with each member's expired messages dropped first (its separate pipeline),
# written once for both scripts below: the members' keys are KEYS[skip + 1 ..], and from ARGV[first + 1] on come a
# message per key, a capacity per key, the time and the expiry.
_ADD_TO_MEMBERS = """
local keys = #KEYS - skip
local current_time = tonumber(ARGV[first + 2 * keys + 1])
local expiry = tonumber(ARGV[first + 2 * keys + 2])
local over_capacity = 0
for i = 1, keys do
    local key = KEYS[skip + i]
    redis.call('ZREMRANGEBYSCORE', key, 0, math.floor(current_time) - expiry)
    if redis.call('ZCOUNT', key, '-inf', '+inf') < tonumber(ARGV[first + keys + i]) then
        redis.call('ZADD', key, current_time, ARGV[first + i])
        redis.call('EXPIRE', key, expiry)
    else
        over_capacity = over_capacity + 1
    end
end
"""
# KEYS: the members' keys; ARGV: a message per key, a capacity per key, the time and the expiry.
GROUP_SEND_LUA = "local skip, first = 0, 0\n" + _ADD_TO_MEMBERS + "return over_capacity\n"
GROUP_SEND_SHA = hashlib.sha1(GROUP_SEND_LUA.encode()).hexdigest()

# The group's clean-up and read (the pipeline's) and, if its members are the ones the sender names, the same sends.
# KEYS: the group, then the members' keys; ARGV: the group's expiry cut-off, the count of members the sender
# knows and those members, then GROUP_SEND_LUA's arguments. Returns {over capacity}, or {-1, the members} when
# they are not the ones named (nothing is added then).
GROUP_SEND_TO_KNOWN_LUA = (
    """
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[1]))
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local known = tonumber(ARGV[2])
if #members ~= known then
    return {-1, members}
end
for i = 1, known do
    if members[i] ~= ARGV[2 + i] then
        return {-1, members}
    end
end
local skip, first = 1, 2 + known
"""
    + _ADD_TO_MEMBERS
    + "return {over_capacity}\n"
)
GROUP_SEND_TO_KNOWN_SHA = hashlib.sha1(GROUP_SEND_TO_KNOWN_LUA.encode()).hexdigest()
# Groups whose members a layer remembers (forgotten all at once past this: one round trip more for each).
KNOWN_GROUPS = 10_000


async def _run_script(connection: Any, script: str, sha: str, keys: list[str], args: list[Any]) -> Any:
    """A script by its hash, sent whole only where the server does not know it yet (new, or restarted)."""
    try:
        return await connection.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        return await connection.eval(script, len(keys), *keys, *args)


def _run_script_blocking(client: Any, script: str, sha: str, keys: list[str], args: list[Any]) -> Any:
    """`_run_script` for a blocking client (a drive thread's; see `group_send_blocking`)."""
    try:
        return client.evalsha(sha, len(keys), *keys, *args)
    except NoScriptError:
        return client.eval(script, len(keys), *keys, *args)


class BatchedRedisChannelLayer(RedisChannelLayer):  # type: ignore[misc]
    def __init__(self, *args: Any, receive_batch: int = RECEIVE_BATCH, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.receive_batch = receive_batch
        self._taken: defaultdict[str, deque[tuple[Any, dict[str, Any]]]] = defaultdict(deque)
        self._taking: dict[str, asyncio.Future[None]] = {}
        self._members: dict[str, list[str]] = {}  # group -> its members as this layer's last send found them
        self._blocking = threading.local()  # .clients: the thread's blocking clients (group_send_blocking)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        """channels_redis's group send in one round trip to a group whose members this layer knows, two otherwise
        (see the module's docstring)."""
        assert self.require_valid_group_name(group), "Group name not valid"
        key = self._group_key(group)
        index = self.consistent_hash(group)
        known = self._members.get(group)
        for _ in range(2):  # the members named, then (if they had changed) the members the script found
            if known is None:
                break
            found = await self._send_to_known(group, key, index, known, message)
            if found is True:
                return
            if found is False:
                break
            known = self._remember(group, [x.decode("utf8") for x in found])
        connection = self.connection(index)
        pipe = connection.pipeline(transaction=False)
        pipe.zremrangebyscore(key, min=0, max=int(time.time()) - self.group_expiry)
        pipe.zrange(key, 0, -1)
        _, members = await pipe.execute()
        names = [x.decode("utf8") for x in members]
        by_connection, message_of, capacity_of = self._map_channel_keys_to_connection(names, message)
        if set(by_connection) <= {index}:
            self._remember(group, names)  # the next send reaches them in one script
        else:
            self._members.pop(
                group, None
            )  # members' queues on other Redis servers: one script cannot reach them
        for server, keys in by_connection.items():
            args = (
                [message_of[k] for k in keys]
                + [capacity_of[k] for k in keys]
                + [time.time(), int(self.expiry)]
            )
            over = await _run_script(self.connection(server), GROUP_SEND_LUA, GROUP_SEND_SHA, keys, args)
            if over > 0:
                logger.info("%s of %s channels over capacity in group %s", over, len(names), group)

    async def _send_to_known(
        self, group: str, key: str, index: int, known: list[str], message: dict[str, Any]
    ) -> bool | list[bytes]:
        """The message to each of `known` if they are the group's members now (True); else the members found
        (nothing sent). False: not sent, some of `known` have their queues on another Redis server than the group's
        (the script reaches one server only)."""
        call = self._known_call(key, index, known, message)
        if call is None:
            return False
        result = await _run_script(
            self.connection(index), GROUP_SEND_TO_KNOWN_LUA, GROUP_SEND_TO_KNOWN_SHA, *call
        )
        return self._known_result(group, known, result)

    def _known_call(
        self, key: str, index: int, known: list[str], message: dict[str, Any]
    ) -> tuple[list[str], list[Any]] | None:
        """GROUP_SEND_TO_KNOWN_LUA's keys and arguments; None if some of `known` have their queues on another Redis
        server than the group's."""
        by_connection, message_of, capacity_of = self._map_channel_keys_to_connection(known, message)
        keys = by_connection.get(index, [])
        if len(keys) != sum(len(k) for k in by_connection.values()):
            return None
        args = [
            int(time.time()) - self.group_expiry, len(known), *known,
            *(message_of[k] for k in keys), *(capacity_of[k] for k in keys), time.time(), int(self.expiry),
        ]  # fmt: skip
        return [key, *keys], args

    @staticmethod
    def _known_result(group: str, known: list[str], result: Any) -> Literal[True] | list[bytes]:
        if result[0] == -1:
            return list(result[1])
        if result[0] > 0:
            logger.info("%s of %s channels over capacity in group %s", result[0], len(known), group)
        return True

    def group_send_blocking(self, group: str, message: dict[str, Any]) -> bool:
        """`group_send` from a thread that runs no event loop (a worker process's drive thread), over a blocking
        connection of the thread's own: the same script, one round trip to members this layer knows, two to a
        group it does not (the script, told of no members, returns them and adds nothing). False: nothing was
        sent, `group_send` must do it (members' queues on several Redis servers, a Sentinel set-up, or members
        that changed twice in a row).

        Why not the coroutine on a loop kept by the thread: `run_until_complete` polls the loop's selector before
        the first step of the send, and that poll lets go of Python's lock. In a worker of a hundred drive threads
        taking turns at the lock, getting it back can take a long time under load, with the frame not yet
        written to Redis. Here nothing lets go of the lock before the
        socket write."""
        assert self.require_valid_group_name(group), "Group name not valid"
        key, index = self._group_key(group), self.consistent_hash(group)
        client = self._blocking_client(index)
        if client is None:
            return False
        known = self._members.get(group, [])
        for _ in range(3):  # the members known, those the script found, those found if they changed meanwhile
            call = self._known_call(key, index, known, message)
            if call is None:
                return False
            keys, args = call
            result = _run_script_blocking(
                client, GROUP_SEND_TO_KNOWN_LUA, GROUP_SEND_TO_KNOWN_SHA, keys, args
            )
            found = self._known_result(group, known, result)
            if found is True:
                return True
            known = self._remember(group, [x.decode("utf8") for x in found])
        return False

    def _blocking_client(self, index: int) -> redis.Redis | None:
        """This thread's blocking client of Redis server `index` (one connection; kept while the thread lives)."""
        clients: dict[int, redis.Redis | None] = self._blocking.__dict__.setdefault("clients", {})
        if index not in clients:
            host = dict(self.hosts[index])
            address = host.pop("address", None)
            if "master_name" in host:
                clients[index] = None  # Sentinel: channels_redis's own pools only
            elif address is not None:
                clients[index] = redis.Redis.from_url(address, single_connection_client=True, **host)
            else:
                clients[index] = redis.Redis(single_connection_client=True, **host)
        return clients[index]

    def _remember(self, group: str, names: list[str]) -> list[str]:
        if len(self._members) >= KNOWN_GROUPS and group not in self._members:
            self._members.clear()
        self._members[group] = names
        return names

    async def receive_single(self, channel: str) -> tuple[Any, dict[str, Any]]:
        """The next message of `channel` and the channel (or channels, for a group) it is for. A process channel
        (ending in "!") is read in batches; any other as channels_redis reads it."""
        if not channel.endswith("!"):
            return await super().receive_single(channel)  # type: ignore[no-any-return]
        taken = self._taken[channel]
        while not taken:
            taking = self._taking.get(channel)
            if taking is None or taking.done():
                taking = self._taking[channel] = asyncio.ensure_future(self._take(channel))
            await asyncio.shield(taking)  # a cancelled receive leaves the pop running: its messages stay here
        # Every message taken but the last goes to its pages' buffers now (the caller buffers the last): one at a
        # time, each would wait for another turn of the event loop, which under load is milliseconds each.
        while len(taken) > 1:
            target, message = taken.popleft()
            for page in target if isinstance(target, list) else [target]:
                self.receive_buffer[page].put_nowait(message)
        return taken.popleft()

    async def _take(self, channel: str) -> None:
        """Move up to receive_batch messages from Redis into this process's buffer (none after a blocking pop's
        time-out)."""
        key = self.prefix + channel
        connection = self.connection(self.consistent_hash(channel))
        members = await connection.zpopmin(key, self.receive_batch)
        if not members:
            popped = await connection.bzpopmin(key, timeout=self.brpop_timeout)
            members = [] if popped is None else [(popped[1], popped[2])]
        taken = self._taken[channel]
        for member, _sent_at in members:
            message = self.deserialize(member)
            taken.append((message.pop("__asgi_channel__", channel), message))


class LocalChannelLayer(InMemoryChannelLayer):
    """channels' in-memory layer (one process: a server with its embedded workers), sending with less work.

    The in-memory layer's `group_send` makes an asyncio task per member and waits for them through
    `as_completed`, and every send, group send and receive first walks every channel and every group membership of
    the process for expired ones: per message, work in proportion to the pages open, on the one event loop every
    page shares. Here a
    group send puts the message on each member's queue in turn (the in-memory send never waits: a full queue
    raises ChannelFull, which a group send ignores, as channels' does), and the walk for expired messages runs at
    most once every CLEAN_INTERVAL seconds (messages expire after `expiry`, 60 s, and groups after a day: a
    second's lateness changes nothing).

    A thread outside the loop (a drive) hands a group message to the loop with `group_send_soon`, without waiting
    for it: call_soon_threadsafe keeps one sender's messages in order, and the loop does the sends when it next
    runs.
    """

    CLEAN_INTERVAL = 1.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cleaned_at = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at >= self.CLEAN_INTERVAL:
            self._cleaned_at = now
            super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.require_valid_group_name(group)
        self._put_to_group(group, message)

    def group_send_soon(self, loop: asyncio.AbstractEventLoop, group: str, message: dict[str, Any]) -> None:
        """`group_send` from another thread, done by `loop` (the one that owns the queues) when it next runs."""
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        loop.call_soon_threadsafe(self._put_to_group, group, message)

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        self._send_now(channel, message)

    def _send_now(self, channel: str, message: dict[str, Any]) -> None:
        """channels' in-memory send, which awaits nothing: a copy of the message on the channel's queue."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        try:
            queue.put_nowait((time.time() + self.expiry, deepcopy(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    def _put_to_group(self, group: str, message: dict[str, Any]) -> None:
        """In the loop's thread."""
        assert isinstance(message, dict), "Message is not a dict"
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            # As channels' group_send: a page that reads nothing (its queue full) does not hold up the others.
            with contextlib.suppress(ChannelFull):
                self._send_now(channel, message)
