"""Tests of groupcf.embeddings: numpy evaluation, bounds, and the MIP formulation on every
installed backend (gurobi-ml style: fix the inputs, solve, compare with the model)."""
from __future__ import annotations

import copy
import itertools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from groupcf.embeddings import EmbeddingConstr, ReLUNetwork, add_predictor_constr, get_embedding, register
from groupcf.exceptions import InvalidInputError, SolverNotInstalledError, UnsupportedModelError
from groupcf.features.domain import InputDomain
from groupcf.solvers.base import VarType

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = nn = None

BACKENDS = ["highs", "pyomo", "gurobi"]
MAX_SIZE = 1500          # vars / rows per model: stays under gurobi's pip licence (2000)
TOL = 1e-6


# ---------------------------------------------------------------------------- helpers
def new_backend(name: str, **options):
    from groupcf.solvers import make_backend

    try:
        return make_backend(name, **options)
    except SolverNotInstalledError as exc:
        pytest.skip(f"backend {name!r} not installed: {exc}")


@pytest.fixture(params=BACKENDS)
def backend_name(request):
    new_backend(request.param)            # skips visibly when not installed
    return request.param


def add_inputs(backend, domain: InputDomain) -> np.ndarray:
    vtype = [VarType.BINARY if i else VarType.CONTINUOUS for i in domain.integer]
    return np.asarray(backend.add_vars(domain.n, lb=domain.lb, ub=domain.ub, vtype=vtype))


def add_onehot_rows(backend, x_idx, domain: InputDomain) -> None:
    for g in domain.onehot:
        backend.add_row(x_idx[g], np.ones(len(g)), 1.0, 1.0)


def mlp_logit(model, X):
    """The MLP's own output pre-activation: its forward pass with an identity output."""
    m = copy.deepcopy(model)
    m.out_activation_ = "identity"
    return m.predict_proba(X)[:, 1]


def torch_logit(net, X):
    """The net's own logit(s): its forward pass without a final Sigmoid / Softmax."""
    if isinstance(net, nn.Sequential) and isinstance(net[-1], (nn.Sigmoid, nn.Softmax)):
        net = net[:-1]
    with torch.no_grad():
        out = copy.deepcopy(net).double()(torch.from_numpy(np.asarray(X, dtype=float))).numpy()
    return out[:, 0] if out.shape[1] == 1 else out[:, 1] - out[:, 0]


def reference_score(model, X):
    if isinstance(model, LogisticRegression):
        return model.decision_function(X)
    if isinstance(model, MLPClassifier):
        return mlp_logit(model, X)
    return torch_logit(model, X)


def all_points(domain: InputDomain) -> np.ndarray:
    """Every point of a small binary / one-hot domain."""
    in_group = np.zeros(domain.n, dtype=bool)
    choices = []
    for g in domain.onehot:
        in_group[g] = True
        allowed = [h for h in g if domain.ub[h] >= 0.5]
        choices.append([("g", list(g), h) for h in allowed])
    for h in np.flatnonzero(~in_group):
        choices.append([("b", h, v) for v in range(int(domain.lb[h]), int(domain.ub[h]) + 1)])
    pts = []
    for combo in itertools.product(*choices):
        z = np.zeros(domain.n)
        for kind, where, v in combo:
            if kind == "g":
                z[v] = 1.0
            else:
                z[where] = v
        pts.append(z)
    return np.array(pts)


# ---------------------------------------------------------------------------- data / models
# a 14-column domain: one-hot groups of 4, 3, 3 columns and 4 free binary columns
DOMAIN = InputDomain.box(14, onehot=[range(0, 4), range(4, 7), range(7, 10)])
# a tiny one for enumeration: groups of 3, 3, 2 and 2 binaries -> 72 points
TINY = InputDomain.box(10, onehot=[range(0, 3), range(3, 6), range(6, 8)])


def _labels(X, rng):
    w = rng.normal(size=X.shape[1])
    s = X @ w + 1.5 * X[:, 0] * X[:, -1] - 1.5 * X[:, 4] * X[:, -2] + 0.3 * rng.normal(size=len(X))
    return (s > np.median(s)).astype(int)


def _fit_models(domain, n, seed):
    rng = np.random.default_rng(seed)
    X = domain.sample(n, rng)
    y = _labels(X, rng)
    models = {"lr": LogisticRegression(C=10).fit(X, y)}
    for name, sizes in (("mlp1", (8,)), ("mlp2", (8, 6)), ("mlp3", (6, 5, 4))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            models[name] = MLPClassifier(sizes, max_iter=300, random_state=seed).fit(X, y)
    if torch is not None:
        torch.manual_seed(seed)
        d = domain.n
        models["torch1"] = nn.Sequential(nn.Linear(d, 8), nn.ReLU(), nn.Linear(8, 6), nn.ReLU(),
                                         nn.Linear(6, 1))
        models["torch2"] = nn.Sequential(nn.Linear(d, 7), nn.ReLU(),
                                         nn.Sequential(nn.Linear(7, 5), nn.ReLU()),
                                         nn.Linear(5, 2), nn.Softmax(dim=-1))
    return models


MODELS = _fit_models(DOMAIN, 400, 0)
TINY_MODELS = _fit_models(TINY, 300, 1)
MODEL_NAMES = ["lr", "mlp1", "mlp2", "mlp3", "torch1", "torch2"]


@pytest.fixture(params=MODEL_NAMES)
def model_name(request):
    if request.param.startswith("torch") and torch is None:
        pytest.skip("torch is not installed")
    return request.param


# ---------------------------------------------------------------------------- numpy
def test_score_matches_model(model_name):
    model = MODELS[model_name]
    X = DOMAIN.sample(500, 3)
    _, emb = get_embedding(model)
    ref = reference_score(model, X)
    np.testing.assert_allclose(emb.score(X), ref, rtol=1e-9, atol=1e-12 * (1 + np.abs(ref).max()))
    if not model_name.startswith("torch"):
        # sigmoid(score) is the model's own probability; predictions agree
        np.testing.assert_allclose(emb.proba(X), model.predict_proba(X)[:, 1], rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(emb.predict(X), model.predict(X))
    assert emb.score(X[0]).shape == (1,)


def test_partial_matches_full(model_name):
    _, emb = get_embedding(MODELS[model_name])
    rng = np.random.default_rng(4)
    X = DOMAIN.sample(300, rng)
    for _ in range(5):
        fixed = np.sort(rng.choice(DOMAIN.n, size=rng.integers(1, DOMAIN.n), replace=False))
        values = X[rng.integers(len(X)), fixed]
        Xf = X.copy()
        Xf[:, fixed] = values
        free = np.setdiff1d(np.arange(DOMAIN.n), fixed)
        part = emb.partial(fixed, values)
        assert part.n_inputs == len(free)
        np.testing.assert_allclose(part.score(Xf[:, free]), emb.score(Xf), rtol=1e-12, atol=1e-12)
    # nothing fixed: same function; everything fixed: a constant
    np.testing.assert_allclose(emb.partial([], []).score(X), emb.score(X))
    const = emb.partial(np.arange(DOMAIN.n), X[0])
    assert const.n_inputs == 0
    np.testing.assert_allclose(const.score(np.zeros((1, 0))), emb.score(X[:1]))
    with pytest.raises(ValueError):
        emb.partial([0, 0], [1.0, 1.0])


# ---------------------------------------------------------------------------- bounds
def test_bounds_contain_preactivations(model_name):
    _, emb = get_embedding(MODELS[model_name])
    X = DOMAIN.sample(2000, 5)
    bounds = emb.bounds(DOMAIN)
    pre = emb.preactivations(X)
    assert len(bounds) == len(pre) == emb.n_layers
    for (L, U), A in zip(bounds, pre):
        assert np.all(A >= L - 1e-9) and np.all(A <= U + 1e-9)


@pytest.mark.parametrize("name", ["lr", "mlp2", "mlp3"])
def test_first_layer_bounds_exact(name):
    _, emb = get_embedding(TINY_MODELS[name])
    # on the domain and on a restricted one (a category forbidden, a binary fixed)
    ub = np.ones(TINY.n)
    ub[1] = 0.0
    lb = np.zeros(TINY.n)
    lb[8] = 1.0
    for dom in (TINY, TINY.restrict(lb=lb, ub=ub)):
        A = emb.preactivations(all_points(dom))[0]
        L, U = emb.bounds(dom)[0]
        np.testing.assert_allclose(L, A.min(axis=0), atol=1e-12)
        np.testing.assert_allclose(U, A.max(axis=0), atol=1e-12)


def test_onehot_bounds_fix_neurons():
    """Neurons whose state is known from the bounds get no binary; the one-hot structure
    is what proves it for neuron 3 (a plain box bound would not)."""
    dom = InputDomain.box(5, onehot=[[0, 1, 2]])
    W1 = np.array([[1.0, 1.0, 1.0, 1.0, 1.0],       # always active
                   [-1.0, -1.0, -1.0, -1.0, -1.0],  # always inactive
                   [1.0, -2.0, 0.5, 1.0, -1.0],     # unstable
                   [1.0, 2.0, 3.0, 0.0, 0.0]])      # active only thanks to the one-hot row
    b1 = np.array([0.5, -1.0, 0.0, -0.5])
    net = ReLUNetwork([(W1, b1), (np.array([[1.0, 2.0, -1.0, 0.5]]), np.array([0.1]))])
    L, U = net.bounds(dom)[0]
    np.testing.assert_allclose(L, [1.5, -4.0, -3.0, 0.5])
    np.testing.assert_allclose(U, [3.5, -2.0, 2.0, 2.5])
    L_box, _ = net.bounds(InputDomain.box(5))[0]      # without the one-hot structure
    assert L_box[3] == -0.5
    be = new_backend("highs")
    x = add_inputs(be, dom)
    c = net.add_to(be, x, dom)
    assert c.n_binaries == 1 and c.n_fixed_inactive == 1 and c.n_fixed_active == 2
    assert c.hidden[0][1] == -1 and (c.binaries[0] >= 0).tolist() == [False, False, True, False]
    # rows: 2 equalities (active) + 3 big-M rows (unstable) + 1 output row
    assert len(c.rows) == 6
    add_onehot_rows(be, x, dom)
    for z in all_points(dom):
        be.set_bounds(x, z, z)
        sol = be.solve()
        assert sol.x[c.score] == pytest.approx(net.score(z)[0], abs=TOL)
        assert c.get_error(sol) <= TOL


# ---------------------------------------------------------------------------- MIP, fixed inputs
def test_fixed_inputs_match_model(backend_name, model_name):
    """At 60 random valid points (independent copies, several per model), the score
    variable equals the model's own logit."""
    model = MODELS[model_name]
    X = DOMAIN.sample(60, 11)
    ref = reference_score(model, X)
    _, emb = get_embedding(model)
    i = 0
    while i < len(X):
        be = new_backend(backend_name)
        copies = []
        while i < len(X):
            x = add_inputs(be, DOMAIN)
            be.set_bounds(x, X[i], X[i])
            copies.append((i, add_predictor_constr(be, model, x, DOMAIN)))
            i += 1
            per_copy = max(be.num_vars, be.num_rows) / len(copies)
            if max(be.num_vars, be.num_rows) + 1.5 * per_copy > MAX_SIZE:
                break
        sol = be.solve()
        assert sol.status.has_solution, sol
        for k, c in copies:
            assert isinstance(c, EmbeddingConstr)
            assert sol.x[c.score] == pytest.approx(ref[k], abs=TOL), k
            assert c.get_error(sol) <= TOL
            for h in c.hidden:  # post-activations are nonnegative
                assert np.all(sol.x[h[h >= 0]] >= -TOL)


# ---------------------------------------------------------------------------- MIP, optimisation
@pytest.mark.parametrize("name", ["lr", "mlp1", "mlp2", "mlp3", "torch1"])
def test_max_score_equals_brute_force(backend_name, name):
    if name.startswith("torch") and torch is None:
        pytest.skip("torch is not installed")
    model = TINY_MODELS[name]
    pts = all_points(TINY)
    assert len(pts) == 72
    scores = reference_score(model, pts)

    be = new_backend(backend_name, mip_gap=0.0)
    x = add_inputs(be, TINY)
    add_onehot_rows(be, x, TINY)
    c = add_predictor_constr(be, model, x, TINY)
    be.set_objective([c.score], [1.0], sense="max")
    sol = be.solve()
    assert sol.objective == pytest.approx(scores.max(), abs=TOL)
    z = np.round(sol.x[x])
    assert any(np.array_equal(z, p) for p in pts)           # a valid point of the domain
    assert reference_score(model, z[None])[0] == pytest.approx(scores.max(), abs=TOL)
    assert c.get_error(sol) <= 1e-5

    # minimise the score subject to score >= lo (lo between two attained values)
    s = np.unique(np.round(scores, 9))
    lo = 0.5 * (s[len(s) // 2] + s[len(s) // 2 + 1])
    be = new_backend(backend_name, mip_gap=0.0)
    x = add_inputs(be, TINY)
    add_onehot_rows(be, x, TINY)
    c = add_predictor_constr(be, model, x, TINY, lo=lo)
    assert c.lo_row is not None
    be.set_objective([c.score], [1.0], sense="min")
    sol = be.solve()
    assert sol.objective == pytest.approx(scores[scores >= lo].min(), abs=TOL)


# ---------------------------------------------------------------------------- errors / registry
def _unsupported_cases():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y2 = (X[:, 0] > 0).astype(int)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cases = [
            ("MLPClassifier", "tanh", MLPClassifier((3,), activation="tanh", max_iter=20).fit(X, y2)),
            ("MLPClassifier", "3 classes", MLPClassifier((3,), max_iter=20).fit(X, y3)),
            ("LogisticRegression", "3 classes", LogisticRegression().fit(X, y3)),
            ("object", "supported", object()),
        ]
    if torch is not None:
        cases += [
            ("Conv1d", "Conv1d", nn.Sequential(nn.Conv1d(1, 2, 3), nn.ReLU(), nn.Linear(2, 1))),
            ("Tanh", "Tanh", nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))),
            ("3 outputs", "3 outputs", nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 3))),
            ("ReLU", "must end with a Linear", nn.Sequential(nn.Linear(4, 1), nn.ReLU())),
            ("Sigmoid", "last module", nn.Sequential(nn.Linear(4, 3), nn.Sigmoid(), nn.Linear(3, 1))),
            ("Bilinear", "Bilinear", nn.Bilinear(2, 2, 1)),
        ]
    return cases


@pytest.mark.parametrize("typename, phrase, model", _unsupported_cases(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_unsupported_models_raise(typename, phrase, model):
    with pytest.raises(UnsupportedModelError) as info:
        get_embedding(model)
    msg = str(info.value)
    assert typename in msg and phrase in msg


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_torch_variants():
    torch.manual_seed(3)
    X = DOMAIN.sample(200, 2)
    lin1, lin2, lin3 = nn.Linear(14, 6), nn.Linear(6, 4), nn.Linear(4, 1)
    # consecutive Linears are composed; Identity/Dropout skipped; final Sigmoid dropped
    net = nn.Sequential(lin1, nn.Dropout(0.2), lin2, nn.ReLU(), nn.ReLU(), nn.Identity(), lin3,
                        nn.Sigmoid()).eval()
    _, emb = get_embedding(net)
    assert emb.hidden_sizes == [4]
    with torch.no_grad():
        logit = lin3(torch.relu(lin2(lin1(torch.from_numpy(X).float())))).double().numpy()[:, 0]
        proba = net(torch.from_numpy(X).float()).double().numpy()[:, 0]
    np.testing.assert_allclose(emb.score(X), logit, rtol=1e-5, atol=1e-5)  # float32 model
    np.testing.assert_allclose(emb.proba(X), proba, rtol=1e-5, atol=1e-6)
    # a bare Linear, without bias, is logistic regression
    lin = nn.Linear(14, 1, bias=False)
    _, emb = get_embedding(lin)
    np.testing.assert_allclose(emb.score(X), torch_logit(lin, X), rtol=1e-9, atol=1e-12)


def test_pipeline_unwrap():
    space_mod = pytest.importorskip("groupcf.features.space")
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    n = 80
    df = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n),
                       "member": rng.choice(["yes", "no"], n),
                       "size": pd.Categorical(rng.choice(["S", "M", "L"], n),
                                              categories=["S", "M", "L"], ordered=True)})
    y = ((df.colour == "red") | (df["size"] == "L")).astype(int).to_numpy().copy()
    y[:5] = 1 - y[:5]
    pipe = make_pipeline(space_mod.FeatureSpace(), LogisticRegression(C=10)).fit(df, y)
    space, emb = get_embedding(pipe)
    assert space is pipe[0]
    Z = space.transform(df)
    np.testing.assert_allclose(emb.score(Z), pipe.decision_function(df), rtol=1e-9, atol=1e-12)
    # the space's domain drives the big-M bounds
    dom = space.domain()
    L, U = emb.bounds(dom)[-1]
    s = emb.score(all_points(dom))
    assert L[0] == pytest.approx(s.min()) and U[0] == pytest.approx(s.max())
    # a bare model takes the space given; mismatched widths are caught
    assert get_embedding(pipe[-1], space=space)[0] is space
    other = space_mod.FeatureSpace().fit(df[["colour"]])
    with pytest.raises(InvalidInputError, match="columns"):
        get_embedding(pipe[-1], space=other)
    # anything but (FeatureSpace, classifier) is refused
    bad = make_pipeline(space_mod.FeatureSpace(), StandardScaler(), LogisticRegression()).fit(df, y)
    with pytest.raises(UnsupportedModelError, match="StandardScaler"):
        get_embedding(bad)
    with pytest.raises(UnsupportedModelError, match="FeatureSpace"):
        get_embedding(make_pipeline(StandardScaler(), LogisticRegression()).fit(Z, y))


def test_register_custom_model_and_network_passthrough():
    class MyLinear:
        def __init__(self, w, c):
            self.w, self.c = np.asarray(w, float), float(c)

    with pytest.raises(UnsupportedModelError, match="MyLinear"):
        get_embedding(MyLinear([1, 2], 0.5))
    register(MyLinear, lambda m: ReLUNetwork([(m.w[None, :], [m.c])]))
    _, emb = get_embedding(MyLinear([1, 2], 0.5))
    np.testing.assert_allclose(emb.score(np.array([[1.0, 1.0]])), [3.5])
    net = ReLUNetwork([(np.eye(2), None), (np.ones((1, 2)), None)])
    assert get_embedding(net, space=None) == (None, net)


def test_get_error_detects_wrong_score():
    net = ReLUNetwork([(np.array([[1.0, -1.0], [2.0, 1.0]]), [0.5, -1.0]),
                       (np.array([[1.0, -1.0]]), [0.0])])
    dom = InputDomain.box(2)
    be = new_backend("highs")
    x = add_inputs(be, dom)
    c = net.add_to(be, x, dom)
    values = np.zeros(be.num_vars)
    values[x] = [1.0, 0.0]
    values[c.score] = net.score(values[x])[0] + 0.25
    assert c.get_error(values) == pytest.approx(0.25)
    assert "binaries" in repr(c) and "ReLUNetwork" in repr(net)


def test_network_validation():
    with pytest.raises(ValueError, match="one output"):
        ReLUNetwork([(np.ones((2, 3)), None)])
    with pytest.raises(ValueError, match="inputs"):
        ReLUNetwork([(np.ones((2, 3)), None), (np.ones((1, 3)), None)])
    net = ReLUNetwork([(np.ones((2, 3)), None), (np.ones((1, 2)), None)])
    with pytest.raises(ValueError, match="columns"):
        net.score(np.ones((4, 2)))
    with pytest.raises(ValueError, match="unbounded"):
        dom = InputDomain(np.zeros(3), np.array([1.0, np.inf, 1.0]), np.zeros(3, bool))
        be = new_backend("highs")
        net.add_to(be, be.add_vars(3), dom)


def test_delta_evaluator_additive_and_score_bounds():
    """The protocol's optional pieces agree with plain scoring: delta evaluation (ReLU
    fold and the generic partial-based default), the additive form, interval bounds."""
    from groupcf.embeddings.base import DeltaEvaluator

    rng = np.random.default_rng(7)
    net = ReLUNetwork([(rng.normal(size=(6, 9)), rng.normal(size=6)),
                       (rng.normal(size=(4, 6)), rng.normal(size=4)),
                       (rng.normal(size=(1, 4)), rng.normal(size=1))])
    z0 = rng.random(9)
    groups = [(np.array([0, 3]), rng.random((5, 2))), (np.array([8]), rng.random((3, 1))),
              (np.array([], dtype=int), np.zeros((2, 0))), (np.array([0, 3]), rng.random((4, 2)))]
    for ev in (net.delta_evaluator(z0), DeltaEvaluator(net, z0)):
        got = ev.score_groups(groups)
        for (cols, Zc), s in zip(groups, got):
            Z = np.repeat(z0[None, :], len(Zc), axis=0)
            Z[:, cols] = Zc
            np.testing.assert_allclose(s, net.score(Z), atol=1e-12)
        assert ev.n_sets == 2                      # one preparation per distinct column set
    assert net.additive() is None and net.n_layers == 3
    lin = ReLUNetwork([(rng.normal(size=(1, 9)), rng.normal(size=1))])
    form = lin.additive()
    X = rng.random((20, 9))
    np.testing.assert_allclose(form.score(X), lin.score(X), atol=1e-12)
    lo, hi = net.score_bounds(np.zeros(9), np.ones(9))
    s = net.score(rng.random((200, 9)))
    assert lo <= s.min() and s.max() <= hi


def test_gradient_bound_bounds_every_directional_derivative():
    """Embedding.gradient_bound(d, domain) >= |grad score . d| at every point of the box
    (finite differences inside one linear piece); exact for an additive score; None for a
    model without one (a forest is piecewise constant)."""
    rng = np.random.default_rng(11)
    net = ReLUNetwork([(rng.normal(size=(6, 5)), rng.normal(size=6)),
                       (rng.normal(size=(4, 6)), rng.normal(size=4)),
                       (rng.normal(size=(1, 4)), rng.normal(size=1))])
    dom = InputDomain.box(5, 0.0, 1.0, integer=False)
    for _ in range(5):
        d = rng.normal(size=5)
        G = net.gradient_bound(d, dom)
        Z = rng.random((300, 5))
        h = 1e-7
        slope = (net.score(Z + h * d) - net.score(Z)) / h
        assert np.all(np.abs(slope) <= G + 1e-5)
    lin = ReLUNetwork([(rng.normal(size=(1, 5)), rng.normal(size=1))])
    d = rng.normal(size=5)
    assert lin.gradient_bound(d, dom) == pytest.approx(abs(lin.additive().weights @ d))
    from sklearn.ensemble import RandomForestClassifier

    from groupcf.embeddings import get_embedding

    X = rng.random((60, 5))
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, X[:, 0] > 0.5)
    assert get_embedding(rf)[1].gradient_bound(d, dom) is None
