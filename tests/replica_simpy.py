"""A plain simpy model of the continuous-batching replica, written step by step.

It shares nothing with ``replicaplan.replica`` but the timing functions of ``ReplicaModel``
(TPOT(b) and prefill time): the queue, the admission rule and the per-token decode loop are
written here again, in the most literal way, one simpy timeout per step. Fed the same random
draws, it must give the same per-request times as the event-jumping simulator.
"""

from collections import deque

import numpy as np
import simpy


class _Request:
    __slots__ = (
        "index",
        "arrival",
        "prompt",
        "output",
        "first",
        "end",
        "done_tokens",
        "user",
        "finished",
    )

    def __init__(self, index, arrival, prompt, output, user=None):
        self.index, self.arrival, self.prompt, self.output = index, arrival, prompt, output
        self.first = self.end = None
        self.done_tokens = 0
        self.user = user
        self.finished = None


class SimpyReplica:
    def __init__(self, env, model):
        self.env, self.model = env, model
        self.queue = deque()
        self.wakeup = env.event()
        self.requests = []

    def submit(self, request):
        self.queue.append(request)
        self.requests.append(request)
        if not self.wakeup.triggered:
            self.wakeup.succeed()

    def engine(self, total):
        env, model, B = self.env, self.model, self.model.batch
        running, completed = [], 0
        while completed < total:
            if not running and not self.queue:
                self.wakeup = env.event()
                yield self.wakeup
                continue
            admitted = []
            while self.queue and len(running) + len(admitted) < B:
                admitted.append(self.queue.popleft())
            duration = sum(float(model.prefill_s(r.prompt)) for r in admitted)
            if running:
                duration += float(model.tpot(len(running)))
            yield env.timeout(duration)
            for r in running:  # one decode token for each running sequence
                r.done_tokens += 1
            for r in admitted:  # the prefill produced the first token
                r.first = env.now
                r.done_tokens = 1
            still = []
            for r in running + admitted:
                if r.done_tokens >= r.output:
                    r.end = env.now
                    completed += 1
                    if r.finished is not None:
                        r.finished.succeed()
                else:
                    still.append(r)
            running = still


def _result(replica):
    reqs = sorted(replica.requests, key=lambda r: r.index)
    return (
        np.array([r.arrival for r in reqs]),
        np.array([r.first for r in reqs]),
        np.array([r.end for r in reqs]),
    )


def simpy_open(model, arrival, prompt, output):
    """Open loop: requests arrive at the given times. Returns (arrival, first token, end)."""
    env = simpy.Environment()
    replica = SimpyReplica(env, model)

    def source():
        for i, t in enumerate(arrival):
            yield env.timeout(t - env.now)
            replica.submit(_Request(i, env.now, int(prompt[i]), int(output[i])))

    env.process(source())
    env.process(replica.engine(len(arrival)))
    env.run()
    return _result(replica)


def simpy_closed(model, users, think, prompt, output, start):
    """Closed loop: each user sends, waits for the answer, thinks, sends again (n requests)."""
    env = simpy.Environment()
    replica = SimpyReplica(env, model)
    n = len(prompt)
    counter = {"sent": 0}

    def user(u):
        yield env.timeout(start[u])
        while counter["sent"] < n:
            k = counter["sent"]
            counter["sent"] += 1
            r = _Request(k, env.now, int(prompt[k]), int(output[k]), user=u)
            r.finished = env.event()
            replica.submit(r)
            yield r.finished
            yield env.timeout(think[k])

    for u in range(users):
        env.process(user(u))
    env.process(replica.engine(n))
    env.run()
    return _result(replica)
