"""A plain simpy model of the continuous-batching replica, written step by step.

It shares nothing with ``replicaplan.serving.replica`` but the timing functions of ``ReplicaModel``
(a decode step of b sequences holding C tokens, a prefill pass over P tokens): the queue, the
batched prefill under the token budget, the cache limit, preemption and the per-token decode
loop are written here again, in the most literal way, one simpy timeout per pass. Fed the same
random draws, it must give the same per-request times as the event-jumping simulator.
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
        "preempted",
        "rejected",
    )

    def __init__(self, index, arrival, prompt, output, user=None):
        self.index, self.arrival, self.prompt, self.output = index, arrival, prompt, output
        self.first = self.end = None
        self.done_tokens = 0
        self.user = user
        self.finished = None
        self.preempted = 0
        self.rejected = False


class SimpyReplica:
    def __init__(self, env, model):
        self.env, self.model = env, model
        self.queue = deque()
        self.wakeup = env.event()
        self.requests = []
        self.rejected = 0

    def submit(self, request):
        self.requests.append(request)
        if request.prompt + request.output > self.model.kv_capacity_tokens:
            request.rejected = True  # could never fit the cache
            request.first = request.end = self.env.now
            self.rejected += 1
            if request.finished is not None:
                request.finished.succeed()
            return
        self.queue.append(request)
        if not self.wakeup.triggered:
            self.wakeup.succeed()

    def engine(self, total):
        env, model, B = self.env, self.model, self.model.batch
        K, budget = model.kv_capacity_tokens, model.token_budget
        running, completed, cached = [], 0, 0

        def complete(r):
            nonlocal completed, cached
            r.end = env.now
            cached -= r.prompt + r.done_tokens
            completed += 1
            if r.finished is not None:
                r.finished.succeed()

        while completed + self.rejected < total:
            if not running and not self.queue:
                self.wakeup = env.event()
                yield self.wakeup
                continue
            # a prefill pass over the waiting prompts that fit the budget, the batch and the cache
            taken, tokens = [], 0
            while self.queue and len(running) + len(taken) < B:
                r = self.queue[0]
                need = r.prompt + r.done_tokens
                if taken and tokens + need > budget:
                    break
                if cached + tokens + len(taken) + need + 1 > K:
                    break
                taken.append(self.queue.popleft())
                tokens += need
            if taken:
                yield env.timeout(float(model.prefill_pass_s(tokens)))
                cached += tokens
                for r in taken:
                    r.done_tokens += 1
                    cached += 1
                    if r.first is None:
                        r.first = env.now
                    if r.done_tokens >= r.output:
                        complete(r)
                    else:
                        running.append(r)
                continue
            # the next decode step must fit the cache: preempt the newest sequences
            while cached + len(running) > K:
                r = running.pop()
                cached -= r.prompt + r.done_tokens
                r.preempted += 1
                self.queue.appendleft(r)
            yield env.timeout(float(model.step_s(len(running), cached)))
            cached += len(running)
            still = []
            for r in running:  # one token for each running sequence
                r.done_tokens += 1
                if r.done_tokens >= r.output:
                    complete(r)
                else:
                    still.append(r)
            running = still


def _result(replica):
    reqs = sorted(replica.requests, key=lambda r: r.index)
    return (
        np.array([r.arrival for r in reqs]),
        np.array([r.first for r in reqs]),
        np.array([r.end for r in reqs]),
        np.array([r.preempted for r in reqs]),
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
