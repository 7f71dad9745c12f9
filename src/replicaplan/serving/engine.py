"""The engine: a continuous-batching replica (``serving.replica.ReplicaModel``) simulated event to
event, in open loop (``simulate_open``) or closed (``simulate_closed``).

The engine schedules in one of two ways:

* **chunked prefill** (``chunked_prefill=True``, the default, as in vLLM V1, SGLang and
  TensorRT-LLM): each step first carries one token of every decoding sequence, then spends the
  rest of the token budget (``token_budget``, vLLM's ``max_num_batched_tokens``) on prompts,
  the partly prefilled ones first, then new ones from the head of the queue, cutting the last
  prompt to what is left of the budget. This is the order of vLLM's
  ``vllm/v1/core/sched/scheduler.py``, ``Scheduler.schedule``: the running requests first (each
  decode one token, a partial prefill ``min(its remaining tokens, the budget left)``), then the
  waiting ones while the budget lasts. A prompt's first token appears at the end of the step
  that computes its last chunk;
* **separate passes** (``chunked_prefill=False``, vLLM V0's default, removed with V0 in vLLM
  0.11): a **prefill pass** takes the waiting prompts in arrival order while they fit the token
  budget (a prompt larger than it runs alone), the batch and the free cache, lasting
  ``prefill_pass_s`` (the step above with b = 0 and its own floor), and stamps each request's
  first token when it ends; otherwise a **decode step** (P = 0) advances every running sequence
  by one token.

A request is admitted while the batch has room and its prompt (and what it had produced, if it
was preempted) plus one token fits the free cache. vLLM V0 also kept a **watermark** of 1 % of
the blocks free at every admission (``BlockSpaceManager.can_allocate``, vllm/core/block_manager.py);
V1's ``KVCacheManager`` keeps none, so the watermark is 0 with chunked prefill and V0's 1 % with
separate passes unless ``watermark`` says otherwise. When
the next step would still overflow the cache, the newest running sequence is **preempted**: its
cache is dropped and it goes back to the head of the queue, to be prefilled again over its prompt
and the tokens it had produced (vLLM's recompute preemption). A request whose prompt and answer
cannot fit in the cache less the watermark is **rejected** on arrival and counted. A share
``prefix_hit`` of each prompt can be found already in the cache (prefix caching): those tokens
take cache but no compute. Per request the simulator records arrival, first token and last
token (TTFT, TPOT = (end − first token)/(output − 1) and latency follow) and preemptions.

Speed
-----
Between two events (an admission, a prefill chunk, a completion, a preemption, an arrival that
finds room) the batch is constant and its context grows by b tokens a step, so the step times
form an arithmetic series: the simulator jumps over whole runs of decode steps with its
closed-form sum. The cost is a few heap operations per request and one loop turn per step that
carries prompt tokens, not one loop turn per token.

Layer: serving.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from replicaplan.core import _check
from replicaplan.serving.replica import ReplicaModel
from replicaplan.serving.trace import Trace


def _lengths(prompt, output, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    prompt = np.asarray(prompt)
    output = np.asarray(output)
    if prompt.ndim != 1 or output.shape != prompt.shape or prompt.size == 0:
        raise ValueError("prompt and output must be non-empty 1-d arrays of the same length")
    if n is not None and prompt.size < n:
        raise ValueError(f"need lengths for {n} requests, got {prompt.size}")
    if np.any(prompt < 0) or not np.all(np.isfinite(prompt)):
        raise ValueError("prompt lengths must be finite and >= 0")
    if np.any(output < 1) or not np.all(np.isfinite(output)):
        raise ValueError("output lengths must be finite and >= 1")
    return prompt.astype(np.int64), output.astype(np.int64)


def simulate_open(model: ReplicaModel, arrival, prompt, output) -> Trace:
    """Serve requests that arrive at fixed times (open loop): arrivals do not wait for answers.

    ``arrival`` must be non-decreasing seconds; ``prompt`` and ``output`` are token counts.
    """
    arrival = np.asarray(arrival, dtype=float)
    if arrival.ndim != 1 or arrival.size == 0:
        raise ValueError("arrival must be a non-empty 1-d array of times")
    if not np.all(np.isfinite(arrival)) or np.any(np.diff(arrival) < 0):
        raise ValueError("arrival must hold finite, non-decreasing times")
    prompt, output = _lengths(prompt, output, arrival.size)
    times = arrival.tolist()
    # the separate-pass loop reads arrivals from a heap; sorted, the list is one already
    incoming = [] if model.chunked_prefill else [(t, i) for i, t in enumerate(times)]
    return _Engine(model, incoming, prompt, output, arrival.size, think=None, times=times).run()


def simulate_closed(
    model: ReplicaModel, users: int, think_s, prompt, output, start_s=None
) -> Trace:
    """Serve ``users`` virtual users, each sending its next request ``think`` after its last answer.

    ``think_s`` holds one think time per request (request k's user waits think_s[k] after k's
    answer); ``start_s`` the first send time of each user (default: all at 0). The run stops
    after len(prompt) requests; the k-th request to arrive gets the k-th lengths.
    """
    users = _check.integer("users", users, minimum=1)
    prompt, output = _lengths(prompt, output)
    n = prompt.size
    think = np.asarray(think_s, dtype=float)
    if think.shape != (n,) or np.any(think < 0) or not np.all(np.isfinite(think)):
        raise ValueError("think_s must hold one finite time >= 0 per request")
    start = np.zeros(users) if start_s is None else np.asarray(start_s, dtype=float)
    if start.shape != (users,) or np.any(start < 0):
        raise ValueError("start_s must hold one time >= 0 per user")
    incoming = sorted((t, -1 - u) for u, t in enumerate(start.tolist()))
    return _Engine(model, incoming, prompt, output, n, think=think.tolist()).run()


class _Engine:
    """The event loop shared by both load generators.

    ``incoming`` is a heap of (time, key) not yet arrived. Requests are numbered in arrival
    order; in the closed loop, key = −1 − user, and a completion sends that user's next request.
    A running sequence i admitted at decode-step count s_i with g_i tokens already produced has
    produced g_i + (steps − s_i) tokens; its cache holds prompt_i plus those tokens.
    """

    def __init__(self, model, incoming, prompt, output, n, think, times=None):
        self.m = model
        self.incoming = incoming
        self.times = times
        """An open loop's arrival times, sorted (the chunked loop reads them by index)."""
        self.lengths = (prompt[:n], output[:n])
        """The lengths as arrays (``_lengths``'s own copies), for the trace."""
        self.prompt = prompt[:n].tolist()
        self.output = output[:n].tolist()
        self.n = n
        self.think = think
        self.arrival = [0.0] * n
        self.first = [math.nan] * n
        self.end = [math.nan] * n
        self.user_of = [0] * n
        self.produced = [0] * n  # tokens produced when last admitted (or preempted)
        self.admit_step = [0] * n
        self.preempted = [0] * n
        self.rejected = [False] * n
        self.hit = model.prefix_hit_tokens(prompt[:n]).tolist() if model.prefix_hit else [0] * n

    def _costs(self) -> tuple[float, float, float, float]:
        """The step's rates, as ``step_s`` uses them: seconds per token of cache read, the
        weights' read, a token's linear layers computed, and a prompt position attended."""
        m = self.m
        return (
            m.cache_s_per_token,
            m.weight_bytes / m.bandwidth,
            2 * m.params / m.prefill_flops,
            4 * m.attention_width / m.prefill_flops,
        )

    def _weights_s(self):
        """None for a dense model (every step reads ``weight_bytes``); for a mixture of experts,
        seconds of the weights a step over T tokens reads (``ReplicaModel.weight_read_bytes``)."""
        m = self.m
        if not m.experts:
            return None
        return lambda tokens: float(m.weight_read_bytes(tokens)) / m.bandwidth

    def run(self) -> Trace:
        if self.m.chunked_prefill:
            return self._run_chunked()
        m, n = self.m, self.n
        B, K, budget = m.batch, m.kv_capacity_tokens, m.token_budget
        room = K - m.watermark_tokens  # the cache an admission may fill
        finite = not math.isinf(K)
        hit = self.hit
        mkv_bw, weights_s, per_token, per_attended = self._costs()
        read = self._weights_s()
        # a separate pass, as prefill_pass_s: floor, all-reduces, linear layers, attention
        prefill_floor = m.prefill_floor_s + m.comm_fixed_s
        prefill_per_token = m.comm_per_sequence_s
        base = m.step_floor_s
        pop, push = heapq.heappop, heapq.heappush
        prompt, output, produced = self.prompt, self.output, self.produced
        incoming, think, user_of = self.incoming, self.think, self.user_of
        arrival_at, first, end = self.arrival, self.first, self.end
        admit_step = self.admit_step
        base_comm = base + m.comm_fixed_s  # the parts of a decode step every sequence shares
        per_seq = m.comm_per_sequence_s + m.seq_step_s

        t = 0.0
        steps = 0
        arrived = 0
        finished = 0
        waiting: deque = deque()
        running: list = []  # heap of (finish step, i)
        order: list = []  # running requests in admission order (the newest last)
        cached = 0  # tokens in the KV cache

        def finish(i: int, now: float) -> None:
            nonlocal finished
            end[i] = now
            finished += 1
            if think is not None:  # the user sends again; past the n-th never admitted
                push(incoming, (now + think[i], -1 - user_of[i]))

        while finished < n:
            while arrived < n and incoming and incoming[0][0] <= t:
                when, key = pop(incoming)
                i = arrived
                arrived += 1
                arrival_at[i] = when
                user_of[i] = -1 - key
                if prompt[i] + output[i] > room:  # could never fit the cache: turned away
                    self.rejected[i] = True
                    first[i] = when
                    finish(i, when)
                else:
                    waiting.append(i)
            b = len(order)
            if waiting and b < B:
                take, tokens, computed, attended = [], 0, 0, 0
                while waiting and b + len(take) < B:
                    j = waiting[0]
                    need = prompt[j] + produced[j]
                    work = max(need - hit[j], 1)
                    if take and computed + work > budget:
                        break
                    if cached + tokens + len(take) + need + 1 > room:  # prompts and new tokens
                        break
                    take.append(waiting.popleft())
                    tokens += need
                    computed += work
                    start = need - work  # the positions it computes: start + 1 ... need
                    attended += (need * (need + 1) - start * (start + 1)) // 2
                if take:
                    linear = per_token * computed
                    w = weights_s if read is None else read(computed)
                    t += (
                        prefill_floor
                        + prefill_per_token * computed
                        + (linear if linear > w else w)
                        + per_attended * attended
                    )
                    cached += tokens
                    for j in take:
                        produced[j] += 1  # the pass produces each request's next token
                        cached += 1
                        if first[j] != first[j]:  # nan: its first token
                            first[j] = t
                        if produced[j] >= output[j]:
                            cached -= prompt[j] + produced[j]
                            finish(j, t)
                        else:
                            admit_step[j] = steps
                            push(running, (steps + output[j] - produced[j], j))
                            order.append(j)
                    continue
            if not order:  # idle (an empty engine admits any request that was not rejected)
                if waiting:
                    raise RuntimeError("a request that fits the cache was not admitted")
                if arrived < n and incoming:
                    t = max(t, incoming[0][0])
                    continue
                break
            # the next decode step must fit: preempt the newest sequences until it does
            while cached + len(order) > K:
                j = order.pop()
                done = produced[j] + steps - admit_step[j]
                cached -= prompt[j] + done
                produced[j] = done
                self.preempted[j] += 1
                waiting.appendleft(j)
                running = [(s, i) for s, i in running if i != j]
                heapq.heapify(running)
            b = len(order)
            linear = per_token * b
            w = weights_s if read is None else read(b)
            a = base_comm + per_seq * b + (linear if linear > w else w) + cached * mkv_bw
            c = b * mkv_bw  # each step reads b more tokens of cache than the one before
            k = running[0][0] - steps  # steps to the next completion
            if finite and (K - cached) // b < k:
                k = int((K - cached) // b)
            if k < 1:
                k = 1
            span = k * a + c * k * (k - 1) / 2  # the k steps' time
            if b < B and arrived < n and incoming and span >= incoming[0][0] - t:
                # the next arrival comes within them: stop at the first step that reaches it
                k = _steps_until(incoming[0][0] - t, a, c)
                span = k * a + c * k * (k - 1) / 2
            t += span
            steps += k
            cached += k * b
            while running and running[0][0] <= steps:
                _, j = pop(running)
                order.remove(j)
                cached -= prompt[j] + output[j]
                produced[j] = output[j]
                finish(j, t)

        return self._trace(arrived)

    def _trace(self, done: int) -> Trace:
        def floats(values):
            return np.fromiter(values, dtype=float, count=done)

        return Trace(
            floats(self.arrival[:done]),
            floats(self.first[:done]),
            floats(self.end[:done]),
            self.lengths[0][:done],
            self.lengths[1][:done],
            np.fromiter(self.preempted[:done], dtype=np.int64, count=done),
            np.fromiter(self.rejected[:done], dtype=bool, count=done),
        )

    def _run_chunked(self) -> Trace:
        """Chunked prefill: every step carries the decodes, then prompt chunks under the budget.

        Steps that carry prompt tokens are taken one at a time; runs of pure decode steps are
        jumped over as in separate-pass mode. ``filling`` holds the admitted sequences whose
        prompt is not computed yet, in admission order, with ``left`` tokens to go; their cache
        (prompt and recomputed tokens) is taken whole when they are admitted. Chunks go to
        ``filling`` from its head, so the prompts a step completes are always at its head.
        """
        m, n = self.m, self.n
        B, K, budget = m.batch, m.kv_capacity_tokens, m.token_budget
        room = K - m.watermark_tokens
        finite = not math.isinf(K)
        hit = self.hit
        mkv_bw, weights_s, per_token, per_attended = self._costs()
        read = self._weights_s()
        base = m.step_floor_s + m.comm_fixed_s
        comm_per_token = m.comm_per_sequence_s
        per_seq = m.comm_per_sequence_s + m.seq_step_s
        pop, push, sqrt, ceil = heapq.heappop, heapq.heappush, math.sqrt, math.ceil
        prompt, output, produced = self.prompt, self.output, self.produced
        incoming, think, user_of = self.incoming, self.think, self.user_of
        arrival_at, first, end = self.arrival, self.first, self.end
        admit_step, preempted = self.admit_step, self.preempted
        left = [0] * n
        full = [0] * n  # the positions a sequence's prefill ends at: its prompt and recomputed
        inf = math.inf
        # the next arrival's time: read off the sorted times of an open loop, or the heap's head
        # in a closed loop (where a completion can bring one forward)
        times = self.times if think is None else None
        nxt = (times[0] if times else inf) if think is None else incoming[0][0]

        t = 0.0
        steps = 0
        arrived = 0
        finished = 0
        waiting: deque = deque()
        running: list = []  # heap of (finish step, i) of the decoding sequences
        order: list = []  # admitted sequences in admission order (the newest last)
        filling: deque = deque()  # admitted sequences still prefilling, in admission order
        cached = 0
        decoding = 0  # len(order) - len(filling): the sequences a step decodes
        soonest = inf  # running[0][0]: the step at which the next decoding sequence finishes
        pending = 0  # prompt tokens ``filling`` has still to compute: the sum of its ``left``

        def finish(i: int, now: float) -> None:
            nonlocal nxt
            end[i] = now
            if think is not None:  # the user sends again after its think time
                when = now + think[i]
                push(incoming, (when, -1 - user_of[i]))
                if arrived < n and when < nxt:
                    nxt = when

        while finished < n:
            while nxt <= t:
                i = arrived
                arrived += 1
                if times is not None:
                    when = nxt
                    user_of[i] = -1 - i
                    nxt = times[arrived] if arrived < n else inf
                else:
                    when, key = pop(incoming)
                    user_of[i] = -1 - key
                    nxt = incoming[0][0] if arrived < n and incoming else inf
                arrival_at[i] = when
                if prompt[i] + output[i] > room:  # could never fit the cache: turned away
                    self.rejected[i] = True
                    first[i] = when
                    finish(i, when)
                    finished += 1
                else:
                    waiting.append(i)
            while cached + decoding > K:  # the decodes of the next step must fit: preempt
                j = order.pop()
                if filling and filling[-1] == j:  # still prefilling: its progress is lost
                    filling.pop()
                    pending -= left[j]
                    cached -= prompt[j] + produced[j]
                else:
                    done = produced[j] + steps - admit_step[j]
                    cached -= prompt[j] + done
                    produced[j] = done
                    running = [(s, i) for s, i in running if i != j]
                    heapq.heapify(running)
                    soonest = running[0][0] if running else inf
                    decoding -= 1
                preempted[j] += 1
                waiting.appendleft(j)
            # the prompt tokens of the step: the partial prefills first, then the queue's head,
            # in admission order, so they always go to ``filling`` from its head
            room_left = budget - decoding
            if waiting and len(order) < B and pending < room_left:
                spare = room_left - pending
                while spare > 0 and waiting and len(order) < B:
                    j = waiting[0]
                    need = prompt[j] + produced[j]
                    if cached + decoding + need + 1 > room:
                        break
                    waiting.popleft()
                    cached += need
                    full[j] = need
                    work = need - hit[j]
                    left[j] = work = work if work > 1 else 1
                    pending += work
                    order.append(j)
                    filling.append(j)
                    spare -= work
            tokens = pending if pending < room_left else room_left
            if tokens:
                # hand the chunks out from the head of ``filling``: each computes the next
                # positions of its prompt, attending to every position up to its own
                pending -= tokens
                rest, attended, ended = tokens, 0, 0
                for j in filling:
                    lj = left[j]
                    c = lj if lj < rest else rest
                    attended += c * (full[j] - lj) + c * (c + 1) // 2
                    if lj > rest:  # only the last chunk can leave a prompt unfinished
                        left[j] = lj - rest
                        break
                    left[j] = 0
                    ended += 1
                    rest -= lj
                    if not rest:
                        break
                linear = per_token * (decoding + tokens)
                w = weights_s if read is None else read(decoding + tokens)
                t += (
                    base
                    + cached * mkv_bw
                    + per_seq * decoding
                    + comm_per_token * tokens
                    + (linear if linear > w else w)
                    + per_attended * attended
                )
                steps += 1
                cached += decoding
                for _ in range(ended):
                    j = filling.popleft()
                    produced[j] += 1  # the step that ends a prompt samples its next token
                    cached += 1
                    if first[j] != first[j]:
                        first[j] = t
                    if produced[j] >= output[j]:
                        order.remove(j)
                        cached -= prompt[j] + produced[j]
                        finish(j, t)
                        finished += 1
                    else:
                        decoding += 1
                        admit_step[j] = steps
                        done = steps + output[j] - produced[j]
                        push(running, (done, j))
                        if done < soonest:
                            soonest = done
            elif order:
                # a run of pure decode steps, up to the next completion, the cache's end, or the
                # next arrival that could be admitted (none can while others wait: the cache only
                # fills until a completion)
                linear = per_token * decoding
                w = weights_s if read is None else read(decoding)
                a = base + per_seq * decoding + (linear if linear > w else w) + cached * mkv_bw
                c = decoding * mkv_bw
                k = soonest - steps
                if finite and (K - cached) // decoding < k:
                    k = int((K - cached) // decoding)
                if k < 1:
                    k = 1
                span = k * a + c * k * (k - 1) / 2  # the k steps' time
                if decoding < B and not waiting and nxt < inf and span >= nxt - t:
                    # the next arrival comes within them: stop at the first step that reaches it
                    dt = nxt - t
                    if dt <= 0:
                        k = 1
                    else:  # ``_steps_until`` written out: a call here costs the loop ~8 %
                        h = a - c / 2
                        k = ceil((-h + sqrt(h * h + 2 * c * dt)) / c) if c > 0 else ceil(dt / a)
                        while k > 1 and (k - 1) * a + c * (k - 1) * (k - 2) / 2 >= dt:
                            k -= 1
                        while k * a + c * k * (k - 1) / 2 < dt:
                            k += 1
                    span = k * a + c * k * (k - 1) / 2
                t += span
                steps += k
                cached += k * decoding
            else:  # idle
                if waiting:
                    raise RuntimeError("a request that fits the cache was not admitted")
                if nxt < inf:
                    if nxt > t:
                        t = nxt
                    continue
                break
            while soonest <= steps:
                j = pop(running)[1]
                soonest = running[0][0] if running else inf
                order.remove(j)
                decoding -= 1
                cached -= prompt[j] + output[j]
                produced[j] = output[j]
                finish(j, t)
                finished += 1
        return self._trace(arrived)


def _steps_until(dt: float, a: float, c: float) -> int:
    """The fewest steps (at least 1) whose durations a, a + c, a + 2c, ... add up to ≥ dt."""
    if dt <= 0:
        return 1
    if c <= 0:
        k = math.ceil(dt / a)
    else:  # a k + c k (k − 1)/2 ≥ dt
        k = math.ceil((-(a - c / 2) + math.sqrt((a - c / 2) ** 2 + 2 * c * dt)) / c)
    k = max(k, 1)
    while k > 1 and (k - 1) * a + c * (k - 1) * (k - 2) / 2 >= dt:
        k -= 1
    while k * a + c * k * (k - 1) / 2 < dt:
        k += 1
    return k
