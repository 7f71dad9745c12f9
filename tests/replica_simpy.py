"""A plain simpy model of the continuous-batching replica, written step by step.

It shares nothing with ``replicaplan.serving.replica`` but the timing functions of ``ReplicaModel``
(a step of b sequences holding C tokens and prefilling P, a prefill pass over P tokens) and its
parameters: the queue, the prompt chunks or the batched prefill under the token budget, the cache
limit with its watermark, preemption and the per-token decode loop are written here again, in the
most literal way, one simpy timeout per step. Fed the same random draws, it must give the same
per-request times as the event-jumping simulator, in both scheduling modes.
"""

import math
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
        "left",
        "need",
    )

    def __init__(self, index, arrival, prompt, output, user=None):
        self.index, self.arrival, self.prompt, self.output = index, arrival, prompt, output
        self.first = self.end = None
        self.done_tokens = 0
        self.user = user
        self.finished = None
        self.preempted = 0
        self.rejected = False
        self.left = 0  # prompt tokens still to compute (chunked prefill)
        self.need = 0  # the position its prefill ends at (chunked prefill)


class SimpyReplica:
    def __init__(self, env, model):
        self.env, self.model = env, model
        self.queue = deque()
        self.wakeup = env.event()
        self.requests = []
        self.rejected = 0

    def submit(self, request):
        self.requests.append(request)
        room = self.model.kv_capacity_tokens - self.model.watermark_tokens
        if request.prompt + request.output > room:
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
        if self.model.chunked_prefill:
            yield from self.chunked_engine(total)
            return
        env, model, B = self.env, self.model, self.model.batch
        K, budget = model.kv_capacity_tokens, model.token_budget
        room = K - model.watermark_tokens
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
            taken, tokens, work, attended = [], 0, 0, 0
            while self.queue and len(running) + len(taken) < B:
                r = self.queue[0]
                need = r.prompt + r.done_tokens
                compute = max(need - math.floor(model.prefix_hit * r.prompt), 1)
                if taken and work + compute > budget:
                    break
                if cached + tokens + len(taken) + need + 1 > room:
                    break
                taken.append(self.queue.popleft())
                tokens += need
                work += compute
                # it computes positions need - compute + 1 ... need, each attending to its own
                attended += sum(range(need - compute + 1, need + 1))
            if taken:
                yield env.timeout(float(model.prefill_pass_s(work, attended)))
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

    def chunked_engine(self, total):
        """One simpy timeout per step: every decode one token, then prompt chunks in the budget."""
        env, model, B = self.env, self.model, self.model.batch
        K, budget = model.kv_capacity_tokens, model.token_budget
        room = K - model.watermark_tokens
        admitted, completed, cached = [], 0, 0  # admitted: in admission order

        def complete(r):
            nonlocal completed, cached
            r.end = env.now
            cached -= r.prompt + r.done_tokens
            admitted.remove(r)
            completed += 1
            if r.finished is not None:
                r.finished.succeed()

        while completed + self.rejected < total:
            if not admitted and not self.queue:
                self.wakeup = env.event()
                yield self.wakeup
                continue
            decoding = [r for r in admitted if r.left == 0]
            while cached + len(decoding) > K:  # the decodes must fit: preempt the newest
                r = admitted.pop()
                cached -= r.prompt + r.done_tokens
                if r.left == 0:
                    decoding.remove(r)
                r.left = 0
                r.preempted += 1
                self.queue.appendleft(r)
            budget_left = budget - len(decoding)
            chunks = []
            for r in admitted:
                if r.left > 0 and budget_left > 0:
                    take = min(r.left, budget_left)
                    chunks.append((r, take))
                    budget_left -= take
            while budget_left > 0 and self.queue and len(admitted) < B:
                r = self.queue[0]
                need = r.prompt + r.done_tokens
                if cached + len(decoding) + need + 1 > room:
                    break
                self.queue.popleft()
                cached += need
                r.need = need
                r.left = max(need - math.floor(model.prefix_hit * r.prompt), 1)
                admitted.append(r)
                take = min(r.left, budget_left)
                chunks.append((r, take))
                budget_left -= take
            prefill = sum(take for _, take in chunks)
            # a chunk computes the next ``take`` positions of its prompt, each attending to all
            # positions up to its own
            attended = sum(
                sum(range(r.need - r.left + 1, r.need - r.left + take + 1)) for r, take in chunks
            )
            yield env.timeout(float(model.step_s(len(decoding), cached, prefill, attended)))
            for r in decoding:  # one token for each decoding sequence
                r.done_tokens += 1
                cached += 1
            for r, take in chunks:  # a prompt whose last chunk ran samples its next token
                r.left -= take
                if r.left == 0:
                    r.done_tokens += 1
                    cached += 1
                    if r.first is None:
                        r.first = env.now
            for r in decoding + [r for r, _ in chunks]:
                if r.left == 0 and r.done_tokens >= r.output:
                    complete(r)


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
