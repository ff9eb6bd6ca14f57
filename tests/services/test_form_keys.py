"""The move forms' idempotency keys: unique in a process and across a fork, and drawn without a system call."""

from __future__ import annotations

import os

import pytest

from simulations.services.policy import form_keys
from simulations.services.policy.form_keys import new_form_key


def test_keys_are_unique_in_a_process() -> None:
    keys = [new_form_key() for _ in range(20_000)]
    assert len(set(keys)) == len(keys)
    assert all(len(k) <= 64 for k in keys)  # a Submission keeps 64 characters


def test_a_key_does_not_read_the_kernels_random_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each read released the GIL, and a render waited to get it back (the module's docstring)."""

    def no_urandom(n: int) -> bytes:
        raise AssertionError("os.urandom called for a form key")

    monkeypatch.setattr(form_keys.os, "urandom", no_urandom)
    assert new_form_key() != new_form_key()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_repeat_its_parents_keys() -> None:
    """Servers that fork their workers (gunicorn) import first: without a new prefix in the child, parent and
    child would hand out the same keys from the same count."""
    new_form_key()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next key, then out without running the parent's clean-up
        try:
            os.write(write, new_form_key().encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 200).decode()
    os.close(read)
    os.waitpid(pid, 0)
    parent = new_form_key()
    assert child and child != parent
    assert child[:16] != parent[:16]
