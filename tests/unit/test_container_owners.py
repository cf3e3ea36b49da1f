"""Which containers `evalkit sandbox prune` may take: those whose owner process is dead. A live
owner (this test process) keeps its containers; a pid that has died, or that the system has since
given to a process started at another time, does not; another host's process is not ours to judge."""

import os
import subprocess

from evalkit.sandbox.docker.containers import (
    LABEL_OWNER,
    LABEL_OWNER_START,
    container_labels,
    owner_alive,
    owner_label,
    process_start,
)


def dead_process_labels() -> dict[str, str]:
    child = subprocess.Popen(["sleep", "0.1"])
    started = process_start(child.pid)
    child.wait()
    return {LABEL_OWNER: owner_label(child.pid), LABEL_OWNER_START: started}


def test_this_live_process_owns_its_containers():
    labels = container_labels("r", "t", "agent")
    assert labels[LABEL_OWNER_START] == process_start(os.getpid())
    assert owner_alive(labels)


def test_a_dead_owner_does_not():
    assert not owner_alive(dead_process_labels())


def test_a_pid_now_held_by_another_process_does_not():
    labels = {**container_labels("r", "t", "agent"), LABEL_OWNER_START: "1"}  # this pid, started at another time
    assert not owner_alive(labels)


def test_labels_without_a_start_time_fall_back_to_the_pid():
    assert owner_alive({LABEL_OWNER: owner_label()})
    assert not owner_alive({LABEL_OWNER: dead_process_labels()[LABEL_OWNER]})


def test_another_hosts_process_or_an_unreadable_label_is_left_alone():
    assert owner_alive({LABEL_OWNER: "some-other-host:1"})
    assert owner_alive({})
