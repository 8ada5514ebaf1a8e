"""Test problems and the tuner-protocol driver shared by bench/tuner_quality and
bench/tuner_latency.

Every problem is a minimisation or maximisation with a known optimum; simple regret is
|f(best trial) - f*| measured on the noise-free function (for the noisy problem, at
the trial whose *observed* value was best: what a user would pick).
"""
import json, math, random, shlex, subprocess


def branin(p):
    x1, x2 = p["x1"], p["x2"]
    a, b, c, r, s, t = 1, 5.1 / (4 * math.pi ** 2), 5 / math.pi, 6, 10, 1 / (8 * math.pi)
    return a * (x2 - b * x1 ** 2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s


H6_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
H6_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
H6_ALPHA = [1.0, 1.2, 3.0, 3.2]


def hartmann6(p):
    x = [p["x%d" % i] for i in range(1, 7)]
    total = 0
    for i in range(4):
        inner = sum(H6_A[i][j] * (x[j] - H6_P[i][j] * 1e-4) ** 2 for j in range(6))
        total -= H6_ALPHA[i] * math.exp(-inner)
    return total


def rosenbrock(p):
    x = [p["x%d" % i] for i in range(1, 5)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(3))


def ackley(p):
    x = [p["x%d" % i] for i in range(1, 6)]
    n = len(x)
    s1 = sum(v * v for v in x) / n
    s2 = sum(math.cos(2 * math.pi * v) for v in x) / n
    return -20 * math.exp(-0.2 * math.sqrt(s1)) - math.exp(s2) + 20 + math.e


def levy(p):
    x = [p["x%d" % i] for i in range(1, 5)]
    w = [1 + (v - 1) / 4 for v in x]
    total = math.sin(math.pi * w[0]) ** 2
    for i in range(len(w) - 1):
        total += (w[i] - 1) ** 2 * (1 + 10 * math.sin(math.pi * w[i] + 1) ** 2)
    total += (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)
    return total


OPTIMIZER_PENALTY = {"sgd": 0.3, "momentum": 0.15, "rmsprop": 0.05, "adam": 0.0}


def mixed(p):
    """A synthetic 'accuracy' over all four types and all three scales; max 1.0 at
    learning_rate 10^-2.5, adam, 4 layers, batch 64, dropout 0.2, beta 0.99."""
    loss = ((math.log10(p["learning_rate"]) + 2.5) ** 2 / 4
            + OPTIMIZER_PENALTY[p["optimizer"]]
            + ((p["num_layers"] - 4) / 9) ** 2
            + (math.log2(p["batch_size"]) - 6) ** 2 / 25
            + (p["dropout"] - 0.2) ** 2
            + (math.log10(1 - p["beta"]) + 2) ** 2 / 9)
    return 1.0 - loss


def box(n, lo, hi):
    return [{"parameterName": "x%d" % i, "type": "DOUBLE", "minValue": lo, "maxValue": hi,
             "scaleType": "UNIT_LINEAR_SCALE"} for i in range(1, n + 1)]


MIXED_PARAMS = [
    {"parameterName": "learning_rate", "type": "DOUBLE", "minValue": 1e-05, "maxValue": 1.0,
     "scaleType": "UNIT_LOG_SCALE"},
    {"parameterName": "optimizer", "type": "CATEGORICAL",
     "categoricalValues": ["sgd", "momentum", "rmsprop", "adam"]},
    {"parameterName": "num_layers", "type": "INTEGER", "minValue": 1, "maxValue": 10,
     "scaleType": "UNIT_LINEAR_SCALE"},
    {"parameterName": "batch_size", "type": "DISCRETE",
     "discreteValues": [16, 32, 64, 128, 256, 512], "scaleType": "UNIT_LOG_SCALE"},
    {"parameterName": "dropout", "type": "DOUBLE", "minValue": 0.0, "maxValue": 0.7,
     "scaleType": "UNIT_LINEAR_SCALE"},
    {"parameterName": "beta", "type": "DOUBLE", "minValue": 0.001, "maxValue": 0.999,
     "scaleType": "UNIT_REVERSE_LOG_SCALE"},
]

# name: (params, function, goal, optimum, noise sd)
PROBLEMS = {
    "branin": ([{"parameterName": "x1", "type": "DOUBLE", "minValue": -5.0, "maxValue": 10.0},
                {"parameterName": "x2", "type": "DOUBLE", "minValue": 0.0, "maxValue": 15.0}],
               branin, "MINIMIZE", 0.397887357729738, 0.0),
    "hartmann6": (box(6, 0.0, 1.0), hartmann6, "MINIMIZE", -3.32236801141551, 0.0),
    "rosenbrock4": (box(4, -5.0, 10.0), rosenbrock, "MINIMIZE", 0.0, 0.0),
    "ackley5": (box(5, -10.0, 30.0), ackley, "MINIMIZE", 0.0, 0.0),
    "levy4": (box(4, -10.0, 10.0), levy, "MINIMIZE", 0.0, 0.0),
    "hartmann6_noisy": (box(6, 0.0, 1.0), hartmann6, "MINIMIZE", -3.32236801141551, 0.1),
    "mixed": (MIXED_PARAMS, mixed, "MAXIMIZE", 1.0, 0.0),
}


def random_params(params, rng):
    """Uniform under each parameter's scale: the random-search baseline."""
    out = {}
    for p in params:
        t = p["type"]
        if t == "CATEGORICAL":
            out[p["parameterName"]] = rng.choice(p["categoricalValues"])
        elif t == "DISCRETE":
            out[p["parameterName"]] = rng.choice(p["discreteValues"])
        else:
            lo, hi = p["minValue"], p["maxValue"]
            scale = p.get("scaleType", "UNIT_LINEAR_SCALE")
            u = rng.random()
            if scale == "UNIT_LOG_SCALE":
                v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
            elif scale == "UNIT_REVERSE_LOG_SCALE":
                v = lo + hi - math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
            else:
                v = lo + u * (hi - lo)
            if t == "INTEGER":
                v = rng.randint(int(lo), int(hi))
            out[p["parameterName"]] = v
    return out


def check(params, values):
    """The driver's validity check of one suggestion (tuner-protocol §2.2)."""
    if set(values) != {p["parameterName"] for p in params}:
        raise ValueError("params %s do not name every parameter exactly once" % sorted(values))
    for p in params:
        v = values[p["parameterName"]]
        t = p["type"]
        if t == "CATEGORICAL":
            ok = v in p["categoricalValues"]
        elif t == "DISCRETE":
            ok = any(abs(v - d) <= 1e-9 * max(1, abs(d)) for d in p["discreteValues"])
        else:
            slack = 1e-9 * max(1, abs(p["maxValue"] - p["minValue"]))
            ok = p["minValue"] - slack <= v <= p["maxValue"] + slack
            if t == "INTEGER":
                ok = ok and float(v) == int(v)
        if not ok:
            raise ValueError("invalid value %r for %s" % (v, p["parameterName"]))


class Tuner:
    """One tuner process speaking docs/contracts/tuner-protocol.md."""

    def __init__(self, command):
        self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def call(self, request):
        self.proc.stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("tuner exited on %r" % request.get("op"))
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError("tuner error on %r: %r" % (request.get("op"), reply.get("error")))
        return reply

    def close(self):
        try:
            self.call({"op": "close"})
        finally:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)


def study(name, budget, parallel):
    params, _, goal, _, _ = PROBLEMS[name]
    return {"goal": goal, "hyperparameterMetricTag": "value", "maxTrials": budget,
            "maxParallelTrials": parallel, "params": params}


def regret_of(name, trials):
    """trials: [(params, observed value)]; regret at the best observed trial."""
    _, f, goal, optimum, _ = PROBLEMS[name]
    pick = min if goal == "MINIMIZE" else max
    best_params, _ = pick(trials, key=lambda t: t[1])
    return abs(f(best_params) - optimum)


def run_tuner(command, name, budget, parallel, seed):
    params, f, _, _, noise = PROBLEMS[name]
    noise_rng = random.Random(seed * 7919 + 1)
    tuner = Tuner(command)
    trials = []
    try:
        tuner.call({"op": "create", "seed": seed, "study": study(name, budget, parallel)})
        while len(trials) < budget:
            k = min(parallel, budget - len(trials))
            batch = tuner.call({"op": "suggest", "count": k})["trials"]
            if len(batch) != k:
                raise RuntimeError("asked for %d trials, got %d" % (k, len(batch)))
            for t in batch:
                check(params, t["params"])
                value = f(t["params"]) + (noise_rng.gauss(0, noise) if noise else 0.0)
                trials.append((t["params"], value))
                tuner.call({"op": "report", "trial": t["trial"], "value": value})
    finally:
        tuner.close()
    return regret_of(name, trials)


def run_random(name, budget, seed):
    params, f, _, _, noise = PROBLEMS[name]
    rng = random.Random(seed * 104729 + 17)
    noise_rng = random.Random(seed * 7919 + 1)
    trials = []
    for _ in range(budget):
        p = random_params(params, rng)
        trials.append((p, f(p) + (noise_rng.gauss(0, noise) if noise else 0.0)))
    return regret_of(name, trials)
