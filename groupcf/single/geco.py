r"""GeCo: counterfactual explanations by a genetic algorithm (Schleich, Geng, Zhang &
Suciu, "GeCo: Quality Counterfactual Explanations in Real Time", VLDB 2021).

::

    import groupcf as gcf
    p = gcf.plaf
    exp = gcf.explain(x, pipe, method="geco", data=X_train, k=5, random_state=0,
                      constraints=[p.group("education", "occupation"), p.fixed("race"),
                                   p.rule(p.If(p.cf("education") > p.x("education")),
                                          p.Then(p.cf("age") >= p.x("age") + 4))])
    exp.counterfactuals        # the top-k, raw features, best first

Search space and objective
--------------------------
A candidate changes a set of *feature groups* of the instance :math:`x` (a group is one
feature, or a PLAF ``group`` of features changed jointly); every new value (tuple) is
taken from the **active domain** of the reference data, sampled with its frequency.
With :math:`n` features and per-feature distances :math:`d_f` (0/1 for categorical,
binary and ordinal features, :math:`|x_f - x'_f| / \mathrm{range}_f` for numeric ones):

.. math::

    \mathrm{dist}(x, x') = \alpha\,\frac{\ell_0}{n} + \beta\,\frac{\ell_1}{n} + \gamma\,\ell_\infty,
    \qquad \ell_0 = \#\{f : x'_f \ne x_f\},\ \ell_1 = \textstyle\sum_f d_f,\ \ell_\infty = \max_f d_f,

and the fitness to minimise (GeCo's eq. 11), with :math:`p` the model's probability of
the positive class at :math:`x'`:

.. math::

    \mathrm{fitness}(x') = \begin{cases} \mathrm{dist}(x, x') & x' \text{ is a counterfactual } (p \ge \text{threshold}) \\
    \mathrm{dist}(x, x') + 1 + (1 - p) & \text{otherwise.} \end{cases}

With :math:`\alpha + \beta + \gamma = 1` (default :math:`\tfrac13` each), distances lie in
[0, 1], so every counterfactual is fitter than every other candidate. (With weights that sum
to :math:`w > 1` the constant 1 becomes :math:`w`, the largest possible distance, which
keeps that property.)

Two options go beyond the paper (:class:`GeCoParams`): ``distance=`` makes the search
minimise MACE's distance (:mod:`groupcf.formulations.distances`, the definition
:func:`groupcf.metrics.proximity` and the MACE MIP use) instead of the above, and
``refine=True`` polishes the final top-k by a coordinate descent over the active domain.

Algorithm
---------
::

    POP <- INITIALPOP: for every mutable group G, m_init candidates changing G only
    POP <- SELECTFITTEST(POP, q)
    repeat (at most max_generations times)
        CAND <- CROSSOVER(POP) ∪ MUTATE(POP)
        POP  <- SELECTFITTEST(POP ∪ CAND, q)
    until the top-k of POP are counterfactuals and unchanged for 2 generations
    return the top-k counterfactuals (re-checked with the real model)

* INITIALPOP samples, per group, ``m_init`` value tuples other than the instance's.
* MUTATE: every candidate has ``m_mut`` children, each re-sampling one random group
  (a group the candidate already changes may also go back to the instance's value).
* CROSSOVER: the best candidate of each distinct changed-feature set is a parent (the
  ``R`` fittest such parents, ``R(R-1)/2 <= n_crossover``); two parents give the child
  that changes the union of their sets, a group taken whole from the fitter parent
  where it changes it, from the other elsewhere.
* Every new candidate goes through the PLAF action cascade (:mod:`groupcf.plaf`);
  candidates that still violate a rule, duplicates and the instance itself are dropped.
* SELECTFITTEST keeps the ``q`` fittest, **at most** ``max_per_set`` (default 5) **per
  changed-feature set** first — the rest only fill free places. Without this niching
  (``max_per_set=None``) the population of a rejected instance collapses onto many
  tiny, useless changes of one numeric feature (e.g. capital gain 0 -> 114, inside one
  bin: nearly zero distance, no effect on p) and never reaches a counterfactual; with it
  the population spans many change sets, which crossover then combines.
* Stops: GeCo's rule above; ``patience`` generations with an unchanged top-k that
  holds a counterfactual; ``time_limit``; the ``max_generations`` cap (``stats`` says
  which: ``stopped_by``, ``hit_generation_cap``). No counterfactual at the end raises
  :class:`~groupcf.exceptions.NoCounterfactualError`, as MACE does.

Speed
-----
* **Δ-representation.** A candidate is stored as its change from :math:`x`: a boolean
  row ``M`` (which features change) and a row ``V`` of indices of the new values in the
  active domain. Expanded encodings come from per-value tables.
* **Partial evaluation.** Candidates are grouped by changed-feature set; for each set the
  model is partially evaluated once (:meth:`Embedding.partial` folds the unchanged
  features into the first layer's bias, cached per set) and the group's rows are scored
  in one vectorised call over the changed columns only. For a
  :class:`~groupcf.embeddings.ReLUNetwork` (logistic regression, MLP) only the first
  layer differs per set, so the hidden layers run once for all candidates.
* Any other classifier with ``predict_proba`` is a black box: a ``Pipeline(FeatureSpace,
  clf)`` / a bare ``clf`` with ``space=`` gets expanded rows built from the tables, any
  other model (e.g. a pipeline with its own encoder) gets decoded raw rows.

Every returned counterfactual is re-checked with the real model and against the PLAF
rules on raw values. GeCo is a heuristic: ``is_optimal`` is always False.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..embeddings.network import ReLUNetwork
from ..formulations.distances import feature_distances_codes, parse_distance
from ..exceptions import (InvalidInputError, NoCounterfactualError, NotRejectedError,
                          UnsupportedModelError)
from ..models import TrainedModel, logit, resolve_model
from ..plaf import BoundConstraints, Candidates, Constraints, fixed, increasing
from ..results.explanation import Explanation
from ..solvers.base import Status
from .geco_domain import DOMAIN_CACHE, ActiveDomain
from .mace import validate_instance

log = logging.getLogger(__name__)

__all__ = ["GeCo", "GeCoParams", "explain_geco", "geco_distance"]


@dataclass
class GeCoParams:
    """GeCo's hyper-parameters (defaults from the paper where it gives them).

    ``q`` population size, ``k`` counterfactuals returned, ``m_init`` initial samples
    per group, ``m_mut`` children per candidate in MUTATE; ``alpha, beta, gamma`` weight
    l0/n, l1/n and linf; ``max_generations`` is a safety cap (reported in ``stats``);
    ``stable_generations`` the generations the top-k must stay unchanged; ``patience``
    stops a run whose top-k (with at least one counterfactual, not all) has not changed
    for that many generations; ``n_crossover`` bounds the number of parent pairs
    (default ``q``); ``evaluation`` is ``"partial"`` (Δ-sets + partial evaluation) or
    ``"full"`` (whole rows, one call); ``time_limit`` in seconds (None: none).

    Two options beyond the paper (off by default):

    * ``distance``: a MACE distance spec (``"l0"``, ``"l1"``, ``"linf"`` or weights such as
      ``{"l0": 0.1, "l1": 0.9}``, see :mod:`groupcf.formulations.distances`) replaces
      GeCo's distance (``alpha``, ``beta``, ``gamma`` are then unused) in the fitness and
      in the reported ``distances``: per-feature distances read from the FeatureSpace
      (ordinal features ``|Δ code| / (k - 1)`` instead of 0/1, numeric passthrough features
      over the space's range), so GeCo optimises exactly what
      :func:`groupcf.metrics.proximity` measures and what the MACE MIP minimises. Needs a
      model with a FeatureSpace.
    * ``refine``: after the search, polish the top candidates by coordinate descent over
      the active domain: for each changed numeric or ordinal feature (not in a multi-feature
      ``group``) try the observed values closer to the instance's (and undoing the
      change), keep what stays a counterfactual, satisfies the PLAF rules and is nearer;
      repeated while it improves (at most ``refine_passes`` passes). It closes most of the
      gap that frequency-weighted sampling leaves on numeric features with many rare
      values (e.g. a capital gain overshooting the decision boundary).
    """

    k: int = 5
    q: int = 100
    m_init: int = 20
    m_mut: int = 5
    alpha: float = 1 / 3
    beta: float = 1 / 3
    gamma: float = 1 / 3
    max_generations: int = 100
    stable_generations: int = 2
    patience: int = 10
    n_crossover: int | None = None
    max_per_set: int | None = 5
    evaluation: str = "partial"
    time_limit: float | None = None
    distance: object = None
    refine: bool = False
    refine_passes: int = 5

    def validate(self) -> "GeCoParams":
        for name in ("k", "q", "m_init", "m_mut", "max_generations", "stable_generations", "patience",
                     "refine_passes"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise InvalidInputError(f"GeCo parameter {name} must be a positive integer, got {v!r}")
        for name in ("alpha", "beta", "gamma"):
            if not getattr(self, name) >= 0:
                raise InvalidInputError(f"GeCo weight {name} must be >= 0, got {getattr(self, name)!r}")
        if self.evaluation not in ("partial", "full"):
            raise InvalidInputError(f"evaluation must be 'partial' or 'full', got {self.evaluation!r}")
        if self.distance is not None:
            parse_distance(self.distance)          # named InvalidInputError
        return self


def geco_distance(M: np.ndarray, D: np.ndarray, alpha: float = 1 / 3, beta: float = 1 / 3,
                  gamma: float = 1 / 3) -> np.ndarray:
    r"""GeCo's distance :math:`\alpha\,\ell_0/n + \beta\,\ell_1/n + \gamma\,\ell_\infty` of
    each row, from ``M`` (changed features, bool ``(m, n)``) and ``D`` (per-feature
    distances ``(m, n)``: 0/1 categorical, ``|Δ|/range`` numeric)."""
    n = M.shape[1]
    l0 = M.sum(axis=1)
    l1 = D.sum(axis=1)
    linf = D.max(axis=1) if n else np.zeros(len(M))
    return alpha * l0 / n + beta * l1 / n + gamma * linf


# ====================================================================== models
class _RealModel:
    """The user's model for the final re-check (TrainedModel, or a raw black box)."""

    def __init__(self, model, tm: TrainedModel | None, threshold: float):
        self.model, self.tm, self.threshold = model, tm, threshold

    def proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.tm is not None:
            return self.tm.proba(X)
        return np.asarray(self.model.predict_proba(X))[:, 1]

    def is_positive(self, X: pd.DataFrame) -> np.ndarray:
        if self.tm is not None:
            return self.tm.is_positive(X)
        ok = self.proba(X) >= self.threshold
        m = self.model
        if self.threshold == 0.5 and hasattr(m, "predict") and hasattr(m, "classes_"):
            ok &= np.asarray(m.predict(X)) == m.classes_[1]
        return ok


def _resolve(model, space, threshold):
    """``(space, embedding or None, proba_clf or None, real model)``."""
    try:
        tm = resolve_model(model, space=space, threshold=threshold)
        return tm.space, tm.embedding, None, _RealModel(model, tm, threshold)
    except UnsupportedModelError:
        pass
    if not hasattr(model, "predict_proba"):
        raise UnsupportedModelError(
            f"GeCo needs a model with an embedding (LogisticRegression, MLPClassifier, torch) or "
            f"any classifier with predict_proba; {type(model).__name__} has neither")
    from ..features.space import FeatureSpace

    steps = getattr(model, "steps", None)
    if steps is not None:
        ests = [e for _, e in steps if e is not None and not isinstance(e, str)]
        if len(ests) == 2 and isinstance(ests[0], FeatureSpace):
            sp = ests[0]
            return sp, None, ests[1], _RealModel(model, TrainedModel(model, sp, None, threshold), threshold)
        return None, None, None, _RealModel(model, None, threshold)   # raw rows in
    if space is not None:
        if not hasattr(space, "features_"):
            raise InvalidInputError("the FeatureSpace is not fitted: call .fit(X) first")
        return space, None, model, _RealModel(model, TrainedModel(model, space, None, threshold), threshold)
    return None, None, None, _RealModel(model, None, threshold)


class _Scorer:
    """Probability of the positive class (and acceptance) of candidates (M, V)."""

    def __init__(self, domain: ActiveDomain, x: pd.Series, z0, embedding, proba_clf,
                 raw_model, threshold: float, evaluation: str):
        self.domain, self.x, self.z0 = domain, x, z0
        self.embedding, self.proba_clf, self.raw_model = embedding, proba_clf, raw_model
        self.threshold = threshold
        # the score from which the embedding accepts (a forest's score is a probability)
        self.logit_threshold = embedding.score_threshold(threshold) if embedding is not None else logit(threshold)
        self.evaluation = evaluation
        self._partials: dict = {}
        self._base = None            # b1 + W1 z0 for a ReLU network (first-layer fold)
        if embedding is not None and isinstance(embedding, ReLUNetwork):
            W1, b1 = embedding.layers[0]
            self._base = b1 + W1 @ z0
        self.n_sets = 0
        self.n_scored = 0
        n = len(domain)
        self._bits = (np.int64(1) << np.arange(n, dtype=np.int64)) if n <= 62 else None
        if embedding is not None:
            self.kind = f"embedding/{evaluation}"
        elif proba_clf is not None:
            self.kind = "black-box/encoded"
        else:
            self.kind = "black-box/raw"

    def __call__(self, M: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.n_scored += len(M)
        if self.embedding is not None:
            s = self.partial_scores(M, V) if self.evaluation == "partial" else \
                self.embedding.score(self.encode(M, V))
            p = s if getattr(self.embedding, "averaging", False) else 0.5 * (1.0 + np.tanh(0.5 * s))
            return p, s >= self.logit_threshold
        if self.proba_clf is not None:
            p = np.asarray(self.proba_clf.predict_proba(self.encode(M, V)))[:, 1]
        else:
            p = np.asarray(self.raw_model.predict_proba(decode(self.domain, self.x, M, V)))[:, 1]
        return p, p >= self.threshold

    # -- full rows ----------------------------------------------------------------------
    def encode(self, M, V) -> np.ndarray:
        """Expanded rows of the candidates (the instance's encoding, changed blocks
        overwritten from the value tables)."""
        Z = np.repeat(self.z0[None, :], len(M), axis=0)
        for l in np.flatnonzero(M.any(axis=0)):
            f = self.domain.features[l]
            r = np.flatnonzero(M[:, l])
            Z[r[:, None], f.cols[None, :]] = f.enc[V[r, l]]
        return Z

    # -- Δ-sets + partial evaluation -----------------------------------------------------
    def set_ids(self, M) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, inverse)``: one key per distinct changed-feature set, row -> set."""
        if self._bits is not None:
            codes = M.astype(np.int64) @ self._bits
            return np.unique(codes, return_inverse=True)
        packed = np.packbits(M, axis=1)
        uniq, inv = np.unique(packed, axis=0, return_inverse=True)
        return np.array([u.tobytes() for u in uniq], dtype=object), inv

    def _partial(self, key, feats):
        """Per changed-feature set (cached): the model partially evaluated at the
        instance's unchanged features. For a :class:`ReLUNetwork` only the folded first
        layer ``(W1[:, C], b1 + W1[:, F] z0_F)`` is kept (C the changed columns, F the
        rest) — the first layer of ``embedding.partial(F, z0_F)`` — computed as
        ``b1 + W1 z0 - W1[:, C] z0_C`` without building a network; any other embedding is
        partially evaluated by its own :meth:`Embedding.partial`."""
        hit = self._partials.get(key)
        if hit is None:
            blocks = [self.domain.features[l].enc for l in feats]
            cols = np.concatenate([self.domain.features[l].cols for l in feats])
            if self._base is not None:
                W1 = self.embedding.layers[0][0]
                Wc = np.ascontiguousarray(W1[:, cols])
                hit = (blocks, Wc.T.copy(), self._base - Wc @ self.z0[cols], None)
            else:
                keep = np.ones(len(self.z0), dtype=bool)
                keep[cols] = False
                fixed_idx = np.flatnonzero(keep)
                hit = (blocks, None, None, self.embedding.partial(fixed_idx, self.z0[fixed_idx]))
            self._partials[key] = hit
            self.n_sets += 1
        return hit

    def partial_scores(self, M, V) -> np.ndarray:
        """Scores of the candidates, one vectorised evaluation per changed-feature set
        over the changed columns only; for a ReLU network the hidden layers then run once
        for all candidates."""
        keys, inv = self.set_ids(M)
        order = np.argsort(inv, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=len(keys)))])
        emb = self.embedding
        relu = self._base is not None
        out = np.empty((len(M), len(self._base))) if relu else np.empty(len(M))
        for g in range(len(keys)):
            rows = order[bounds[g]:bounds[g + 1]]
            feats = np.flatnonzero(M[rows[0]])
            blocks, WcT, bc, net = self._partial(keys[g], feats)
            if len(feats) == 1:
                Zc = blocks[0][V[rows, feats[0]]]
            else:
                Zc = np.concatenate([blk[V[rows, l]] for blk, l in zip(blocks, feats)], axis=1)
            if relu:
                out[rows] = Zc @ WcT + bc
            else:
                out[rows] = net.score(Zc)
        if not relu:
            return out
        # the hidden layers and the output are shared by every changed-feature set
        for W, b in emb.layers[1:]:
            out = np.maximum(out, 0.0) @ W.T + b
        return out[:, 0]


# ====================================================================== decoding
def decode(domain: ActiveDomain, x: pd.Series, M: np.ndarray, V: np.ndarray) -> pd.DataFrame:
    """Raw rows of candidates: the instance's own raw value where a feature is unchanged,
    the active-domain value where it changes; data dtypes kept."""
    m = len(M)
    cols = {}
    for l, f in enumerate(domain.features):
        xv = x[f.name]
        ch = M[:, l]
        if ch.any():
            vals = np.empty(m, dtype=object)
            vals[:] = [xv] * m
            vals[ch] = f.values[V[ch, l]]
        else:
            vals = np.empty(m, dtype=object)
            vals[:] = [xv] * m
        dt = f.dtype
        if isinstance(dt, pd.CategoricalDtype):
            cols[f.name] = pd.Categorical(vals, dtype=dt)
        else:
            try:
                cols[f.name] = pd.array(vals, dtype=dt) if dt is not None else vals
            except (TypeError, ValueError):
                cols[f.name] = vals
    return pd.DataFrame(cols)


# ====================================================================== the search
class _Population:
    """Candidates in Δ-representation with their evaluation."""

    __slots__ = ("M", "V", "h", "p", "pos", "dist", "fit")

    def __init__(self, M, V, h, p, pos, dist, fit):
        self.M, self.V, self.h, self.p, self.pos, self.dist, self.fit = M, V, h, p, pos, dist, fit

    def __len__(self):
        return len(self.M)

    def take(self, idx) -> "_Population":
        return _Population(*(getattr(self, s)[idx] for s in self.__slots__))

    @staticmethod
    def concat(a: "_Population", b: "_Population") -> "_Population":
        return _Population(*(np.concatenate([getattr(a, s), getattr(b, s)]) for s in _Population.__slots__))


class _GroupSampler:
    """Frequency-weighted sampling of one group's value tuples, at one instance."""

    __slots__ = ("members", "tuples", "same", "cw_change", "cw_any")

    def __init__(self, members, tuples, same, cw_change, cw_any):
        self.members, self.tuples, self.same = members, tuples, same
        self.cw_change, self.cw_any = cw_change, cw_any

    def apply(self, M, V, rows, rng, allow_revert) -> None:
        """Re-sample the group in ``rows`` of (M, V); where ``allow_revert``, tuples equal
        to the instance's (a change undone) may be drawn too."""
        idx = np.empty(len(rows), dtype=np.int64)
        for flag, cwt in ((True, self.cw_any), (False, self.cw_change)):
            sel = np.flatnonzero(allow_revert == flag)
            if len(sel):
                u = rng.random(len(sel)) * cwt[-1]
                idx[sel] = np.searchsorted(cwt, u, side="right")
        same = self.same[idx]
        mem = np.asarray(self.members)
        M[rows[:, None], mem[None, :]] = ~same
        V[rows[:, None], mem[None, :]] = np.where(same, -1, self.tuples[idx])


class GeCo:
    """A GeCo explainer for one model and one reference data set.

    Preparing the active domain of ``data`` (values, frequencies, encodings, group
    tuples) is done once here; :meth:`explain` then runs the genetic search for one
    instance. ``constraints`` are PLAF rules (a list or :class:`~groupcf.plaf.Constraints`);
    the FeatureSpace's immutable / increase-only features are added as ``fixed`` /
    ``increasing`` rules. Other keyword arguments are :class:`GeCoParams`.
    """

    def __init__(self, model, data: pd.DataFrame, constraints=None, *, space=None,
                 threshold: float = 0.5, **params):
        unknown = set(params) - set(GeCoParams.__dataclass_fields__)
        if unknown:
            raise InvalidInputError(f"unknown GeCo parameter(s) {sorted(unknown)}; "
                                    f"available: {sorted(GeCoParams.__dataclass_fields__)}")
        self.params = GeCoParams(**params).validate()
        logit(threshold)
        self.model, self.threshold = model, threshold
        self.space, self.embedding, self.proba_clf, self.real = _resolve(model, space, threshold)
        self.mace_distance = None
        if self.params.distance is not None:
            if self.space is None:
                raise InvalidInputError("GeCo's distance= (MACE's distance) reads per-feature distances "
                                        "from a FeatureSpace: pass a Pipeline(FeatureSpace, clf) or space=")
            self.mace_distance = parse_distance(self.params.distance)
        self.domain = DOMAIN_CACHE.get(data, self.space, None if self.space is not None else _columns(data))
        user = Constraints.of(constraints)
        extra = []
        if self.space is not None:
            imm = [f.name for f in self.space if f.immutable]
            inc = [f.name for f in self.space if f.increase_only and not f.immutable]
            extra += [fixed(*imm)] if imm else []
            extra += [increasing(*inc)] if inc else []
        self.constraints = user + extra if extra else user
        self.bound = BoundConstraints(self.constraints, self.domain)
        grouped = {l for g in self.bound.groups for l in g}
        self.groups = [tuple(g) for g in self.bound.groups] + \
            [(l,) for l in range(len(self.domain)) if l not in grouped]
        self._has_rules = bool(self.bound.clauses)
        w = np.random.default_rng(0x6EC0).integers(1, 2**62, size=len(self.domain), dtype=np.int64)
        self._hash_w = w | 1

    # ------------------------------------------------------------------ public
    def explain(self, x, k: int | None = None, random_state=None) -> Explanation:
        """Top-``k`` counterfactuals of ``x`` (a Series / one-row DataFrame of raw
        features), best first. Raises :class:`NotRejectedError` when the model already
        accepts ``x`` and :class:`NoCounterfactualError` when the search (up to
        ``max_generations``) finds none."""
        t0 = time.perf_counter()
        P = self.params
        k = P.k if k is None else k
        if int(k) != k or k < 1:
            raise InvalidInputError(f"k must be a positive integer, got {k!r}")
        x = self._instance(x)
        xf = x.to_frame().T.infer_objects()
        if self.real.is_positive(xf)[0]:
            raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                                   f"(p = {self.real.proba(xf)[0]:.3f} >= {self.threshold}); nothing to explain")
        rng = np.random.default_rng(random_state)
        dom = self.domain
        xkeys = dom.instance_keys(x)
        z0 = self.space.transform(xf)[0] if self.space is not None else None
        scorer = _Scorer(dom, x, z0, self.embedding, self.proba_clf,
                         self.model if self.proba_clf is None else None, self.threshold, P.evaluation)
        allowed = self.bound.allowed(xkeys) if self._has_rules else [None] * len(dom)
        samplers = self._samplers(xkeys, allowed)
        run = _Run(self, scorer, xkeys, allowed, samplers, rng, k)
        pop, stats = run.search()
        if P.refine and len(pop):
            pop = run.refine(pop, stats)
        cfs, rows = self._final(x, pop, k, stats)
        if not rows:
            raise NoCounterfactualError(
                f"GeCo found no counterfactual for instance {x.name!r} in {stats['generations']} "
                f"generation(s) ({stats['stopped_by']}) under the constraints "
                "(PLAF rules, immutable / increase-only features)", rows=[x.name])
        changes = [[dom.names[l] for l in np.flatnonzero(pop.M[i])] for i in rows]
        stats.update(evaluation=scorer.kind, n_delta_sets=scorer.n_sets, n_scored=scorer.n_scored,
                     fitness=[float(pop.fit[i]) for i in rows], params=asdict(P),
                     n_returned=len(rows), k=int(k))
        if len(rows) < k:
            log.info("GeCo returned %d of k=%d counterfactuals for %r", len(rows), k, x.name)
        return Explanation(
            instance=x, counterfactuals=cfs, changes=changes,
            distances=[float(pop.dist[i]) for i in rows], probabilities=self.real.proba(cfs),
            status=Status.FEASIBLE, is_optimal=False, solve_time=time.perf_counter() - t0,
            method="geco",
            distance=(self.mace_distance.name if self.mace_distance is not None else
                      f"geco:{P.alpha:.3g}*l0+{P.beta:.3g}*l1+{P.gamma:.3g}*linf"),
            solver=f"genetic ({scorer.kind})", dual_bound=None, stats=stats)

    # ------------------------------------------------------------------ helpers
    def _instance(self, x) -> pd.Series:
        x = validate_instance(x)
        missing = [n for n in self.domain.names if n not in x.index]
        if missing:
            raise InvalidInputError(f"the instance lacks features {missing}")
        if self.space is not None:
            self.space.transform(x.to_frame().T)   # raises on NaN / unknown category
        return x

    def _samplers(self, xkeys, allowed) -> list[_GroupSampler]:
        dom = self.domain
        out = []
        for members in self.groups:
            tup, cnt = dom.tuples(members)
            feas = np.ones(len(tup), dtype=bool)
            same = np.empty(tup.shape, dtype=bool)
            for j, l in enumerate(members):
                if allowed[l] is not None:
                    feas &= allowed[l][tup[:, j]]
                same[:, j] = dom.keys[l][tup[:, j]] == xkeys[l]
            change = feas & ~same.all(axis=1)
            if not change.any():
                continue
            cnt = cnt.astype(float)
            out.append(_GroupSampler(members, tup, same, np.cumsum(cnt * change), np.cumsum(cnt * feas)))
        return out

    def _final(self, x, pop: _Population, k: int, stats: dict):
        """Top counterfactuals that the real model accepts and the PLAF rules allow
        (re-checked on raw rows; rejections are counted in ``stats``)."""
        cand = np.flatnonzero(pop.pos)
        rows: list[int] = []
        frames = []
        start = 0
        stats["rejected_by_model"] = stats["rejected_by_plaf"] = 0
        while len(rows) < k and start < len(cand):
            chunk = cand[start:start + 2 * k]
            start += len(chunk)
            df = decode(self.domain, x, pop.M[chunk], pop.V[chunk])
            ok = self.real.is_positive(df)
            stats["rejected_by_model"] += int((~ok).sum())
            if self.constraints.rules:
                plaf_ok = self.constraints.check_rows(x, df)
                stats["rejected_by_plaf"] += int((ok & ~plaf_ok).sum())
                ok &= plaf_ok
            if not ok.all():
                log.warning("GeCo: %d candidate(s) rejected by the final re-check (real model / "
                            "PLAF rules on raw values)", int((~ok).sum()))
            for j in np.flatnonzero(ok)[: k - len(rows)]:
                rows.append(int(chunk[j]))
                frames.append(df.iloc[[j]])
        if not rows:
            return None, []
        return pd.concat(frames, ignore_index=True), rows


def _rank_within(inv: np.ndarray) -> np.ndarray:
    """Position of each element among the earlier elements with the same label."""
    order = np.argsort(inv, kind="stable")
    sorted_inv = inv[order]
    starts = np.flatnonzero(np.r_[True, sorted_inv[1:] != sorted_inv[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(inv)]))
    rank = np.empty(len(inv), dtype=np.int64)
    rank[order] = np.arange(len(inv)) - run_start
    return rank


def _columns(data):
    return list(data.columns)


class _Run:
    """One genetic search (state of one explanation)."""

    def __init__(self, geco: GeCo, scorer: _Scorer, xkeys, allowed, samplers, rng, k):
        self.g, self.scorer, self.xkeys, self.allowed = geco, scorer, xkeys, allowed
        self.samplers, self.rng, self.k = samplers, rng, k
        self.P = geco.params
        dom = geco.domain
        self.n = len(dom)
        self.numeric = np.array([f.kind == "numeric" for f in dom.features])
        self.span = np.array([f.span for f in dom.features])
        self.membership = np.zeros((self.n, len(geco.groups)), dtype=np.int32)
        for gi, members in enumerate(geco.groups):
            self.membership[list(members), gi] = 1
        self.delta = self._mace_tables() if geco.mace_distance is not None else None
        # added to a non-counterfactual's distance: at least the largest possible distance
        w = (geco.mace_distance.weights.values() if geco.mace_distance is not None else
             (self.P.alpha, self.P.beta, self.P.gamma))
        self.penalty = max(1.0, float(sum(w)))

    def _mace_tables(self) -> list[np.ndarray]:
        """Per feature, MACE's per-feature distance of each active-domain value to the
        instance (:func:`~groupcf.formulations.distances.feature_distances_codes`)."""
        feats = self.g.domain.features
        size = max(f.size for f in feats)
        C = np.empty((size, self.n))
        for l, f in enumerate(feats):
            C[:, l] = f.codes[np.minimum(np.arange(size), f.size - 1)]
        xcodes = self.g.space.codes(self.scorer.x.to_frame().T)[0]
        D = feature_distances_codes(self.g.space, xcodes, C)
        return [D[: f.size, l].copy() for l, f in enumerate(feats)]

    # ------------------------------------------------------------------ operators
    def initial(self):
        P, n = self.P, self.n
        m = P.m_init * len(self.samplers)
        M = np.zeros((m, n), dtype=bool)
        V = np.full((m, n), -1, dtype=np.int32)
        for s, smp in enumerate(self.samplers):
            rows = np.arange(s * P.m_init, (s + 1) * P.m_init)
            smp.apply(M, V, rows, self.rng, np.zeros(len(rows), dtype=bool))
        return M, V

    def mutate(self, pop: _Population):
        P = self.P
        parents = np.repeat(np.arange(len(pop)), P.m_mut)
        M, V = pop.M[parents].copy(), pop.V[parents].copy()
        which = self.rng.integers(len(self.samplers), size=len(parents))
        for s, smp in enumerate(self.samplers):
            rows = np.flatnonzero(which == s)
            if len(rows):
                changed = M[rows[:, None], np.asarray(smp.members)[None, :]].any(axis=1)
                smp.apply(M, V, rows, self.rng, changed)
        return M, V

    def crossover(self, pop: _Population):
        """Children of pairs of parents (the best candidate of each changed-feature set,
        fittest first): the union of the parents' changes, groups taken whole from the
        fitter parent ``a`` where it changes them, from ``b`` elsewhere."""
        keys, first = self._first_per_set(pop.M)
        reps = np.sort(first)
        budget = self.P.n_crossover if self.P.n_crossover is not None else self.P.q
        R = min(len(reps), int((1 + math.isqrt(1 + 8 * budget)) // 2))
        if R < 2:
            return pop.M[:0], pop.V[:0]
        i, j = np.triu_indices(R, 1)
        a, b = reps[i], reps[j]
        G = self.membership                                   # features x groups
        from_a = (pop.M[a].astype(np.int32) @ G @ G.T) > 0    # features of a's changed groups
        new = (pop.M[b] & ~from_a).any(axis=1)                # b adds something
        a, b, from_a = a[new], b[new], from_a[new]
        M = np.where(from_a, pop.M[a], pop.M[b])
        V = np.where(from_a, pop.V[a], pop.V[b]).astype(np.int32)
        return M, V

    def _first_per_set(self, M):
        keys, inv = self.scorer.set_ids(M)
        first = np.full(len(keys), len(M), dtype=np.int64)
        np.minimum.at(first, inv, np.arange(len(M)))
        return keys, first

    # ------------------------------------------------------------------ evaluation
    def hashes(self, M, V) -> np.ndarray:
        return (np.where(M, V.astype(np.int64) + 1, 0)) @ self.g._hash_w

    def prepare(self, M, V, known: np.ndarray | None = None) -> _Population | None:
        """Cascade, check, drop no-ops / duplicates / known candidates, evaluate."""
        if self.g._has_rules and len(M):
            cand = Candidates(M, V, self.g.domain.keys, self.xkeys)
            self.g.bound.cascade(cand, self.allowed)
            ok = self.g.bound.check(cand)
            M, V = M[ok], V[ok]
        keep = M.any(axis=1)
        M, V = M[keep], V[keep]
        if not len(M):
            return None
        h = self.hashes(M, V)
        _, first = np.unique(h, return_index=True)
        first.sort()
        if known is not None and len(known):
            first = first[~np.isin(h[first], known)]
        if not len(first):
            return None
        M, V, h = M[first], V[first], h[first]
        p, pos = self.scorer(M, V)
        dist = self.distance(M, V)
        fit = np.where(pos, dist, dist + self.penalty + (1.0 - p))
        return _Population(M, V, h, p, pos, dist, fit)

    def distance(self, M, V) -> np.ndarray:
        if self.delta is not None:                   # MACE's distance (option distance=)
            D = np.zeros(M.shape)
            for l in np.flatnonzero(M.any(axis=0)):
                r = np.flatnonzero(M[:, l])
                D[r, l] = self.delta[l][V[r, l]]
            return self.g.mace_distance.aggregate(D)
        D = M.astype(float)
        feats = self.g.domain.features
        for l in np.flatnonzero(self.numeric & M.any(axis=0)):
            r = np.flatnonzero(M[:, l])
            D[r, l] = np.abs(feats[l].keys[V[r, l]] - self.xkeys[l]) / self.span[l]
        P = self.P
        return geco_distance(M, D, P.alpha, P.beta, P.gamma)

    def select(self, pop: _Population) -> _Population:
        """The ``q`` fittest, at most ``max_per_set`` per changed-feature set first (the
        rest only fill remaining places)."""
        order = np.argsort(pop.fit, kind="stable")
        cap = self.P.max_per_set
        if cap is not None and len(order) > self.P.q:
            _, inv = self.scorer.set_ids(pop.M[order])
            rank = _rank_within(inv)
            order = np.concatenate([order[rank < cap], order[rank >= cap]])
        return pop.take(order[: self.P.q])

    # ------------------------------------------------------------------ refinement
    #: values tried per (candidate, feature) and pass: all of them when at most this
    #: many, else an even grid over them plus the ones nearest the current value
    REFINE_VALUES = 128

    def _top(self, pop: _Population) -> np.ndarray:
        """Indices of the ``k`` fittest counterfactuals of ``pop``."""
        cand = np.flatnonzero(pop.pos)
        return cand[np.argsort(pop.fit[cand], kind="stable")][: self.k]

    def refine(self, pop: _Population, stats: dict) -> _Population:
        """Coordinate descent on the top-``k`` counterfactuals (option ``refine`` of
        :class:`GeCoParams`): per changed numeric (ordinal too under MACE's distance)
        feature, the active-domain values nearer the instance's, and undoing the change;
        the candidates go through the PLAF cascade, are scored and merged by
        SELECTFITTEST. Stops after a pass that does not improve the top-``k``."""
        t0 = time.perf_counter()
        dom = self.g.domain
        single = np.zeros(self.n, dtype=bool)
        for members in self.g.groups:
            if len(members) == 1:
                single[members[0]] = True
        kinds = ("numeric", "ordinal") if self.delta is not None else ("numeric",)
        refinable = single & np.array([f.kind in kinds for f in dom.features])
        close = [self.delta[l] if self.delta is not None else
                 np.abs(f.keys - self.xkeys[l]) / self.span[l] for l, f in enumerate(dom.features)]
        R = self.REFINE_VALUES
        passes = 0
        for _ in range(self.P.refine_passes):
            top = self._top(pop)
            if not len(top):
                break
            Ms, Vs = [], []
            for c in top:
                for l in np.flatnonzero(pop.M[c]):
                    if pop.M[c].sum() > 1:                     # undo this change
                        m, v = pop.M[c].copy(), pop.V[c].copy()
                        m[l], v[l] = False, -1
                        Ms.append(m[None, :])
                        Vs.append(v[None, :])
                    if not refinable[l]:
                        continue
                    d = close[l]
                    ok = (d < d[pop.V[c, l]] - 1e-12) & (d > 1e-12)   # nearer, still a change
                    if self.allowed[l] is not None:
                        ok &= self.allowed[l]
                    vals = np.flatnonzero(ok)
                    if len(vals) > R:                          # grid + the nearest to the current
                        grid = vals[np.linspace(0, len(vals) - 1, R // 2).round().astype(np.int64)]
                        near = vals[np.argsort(-d[vals], kind="stable")[: R // 2]]
                        vals = np.union1d(grid, near)
                    if not len(vals):
                        continue
                    M = np.repeat(pop.M[c][None, :], len(vals), axis=0)
                    V = np.repeat(pop.V[c][None, :], len(vals), axis=0)
                    V[:, l] = vals
                    Ms.append(M)
                    Vs.append(V)
            if not Ms:
                break
            new = self.prepare(np.concatenate(Ms), np.concatenate(Vs), known=pop.h)
            passes += 1
            if new is None:
                break
            before = pop.fit[top]
            pop = self.select(_Population.concat(pop, new))
            after = pop.fit[self._top(pop)]
            if len(after) == len(before) and not (after < before - 1e-12).any():
                break
        stats["refine_passes"] = passes
        stats["refine_time"] = time.perf_counter() - t0
        return pop

    # ------------------------------------------------------------------ main loop
    def search(self):
        P = self.P
        t0 = time.perf_counter()
        stats = {"generations": 0, "stopped_by": None}
        if not self.samplers:
            stats["stopped_by"] = "nothing can change"
            return _Population(*(np.zeros((0, self.n), bool), np.zeros((0, self.n), np.int32),
                                 np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool),
                                 np.zeros(0), np.zeros(0))), stats
        pop = self.prepare(*self.initial())
        if pop is None:
            stats["stopped_by"] = "no valid initial candidate"
            return _Population(*(np.zeros((0, self.n), bool), np.zeros((0, self.n), np.int32),
                                 np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool),
                                 np.zeros(0), np.zeros(0))), stats
        pop = self.select(pop)
        top, stable = None, 0
        for gen in range(1, P.max_generations + 1):
            Mm, Vm = self.mutate(pop)
            Mc, Vc = self.crossover(pop)
            new = self.prepare(np.concatenate([Mc, Mm]), np.concatenate([Vc, Vm]), known=pop.h)
            if new is not None:
                pop = self.select(_Population.concat(pop, new))
            stats["generations"] = gen
            kk = min(self.k, len(pop))
            cur = pop.h[:kk]
            stable = stable + 1 if top is not None and np.array_equal(cur, top) else 0
            top = cur
            if pop.pos[:kk].all() and stable >= P.stable_generations:
                stats["stopped_by"] = "converged"
                break
            if pop.pos[0] and stable >= P.patience:
                stats["stopped_by"] = "patience"
                break
            if P.time_limit is not None and time.perf_counter() - t0 > P.time_limit:
                stats["stopped_by"] = "time_limit"
                break
        else:
            stats["stopped_by"] = "max_generations"
        stats["hit_generation_cap"] = stats["stopped_by"] == "max_generations"
        stats["search_time"] = time.perf_counter() - t0
        return pop, stats


def explain_geco(x, model, data: pd.DataFrame | None = None, constraints=None, k: int = 5,
                 random_state=None, *, space=None, threshold: float = 0.5, **hyper) -> Explanation:
    """GeCo counterfactuals of ``x``: what ``gcf.explain(x, model, method="geco", ...)``
    runs. ``data`` (required) gives the active domain; ``constraints`` PLAF rules;
    ``hyper`` :class:`GeCoParams` (``q``, ``m_init``, ``m_mut``, ``alpha``, ...). The
    prepared domain of ``data`` is cached across calls by identity of ``data``; for many
    explanations :class:`GeCo` can also be used directly."""
    if data is None:
        raise InvalidInputError("method='geco' samples counterfactual values from reference data: "
                                "pass data=X_train (raw rows)")
    return GeCo(model, data, constraints, space=space, threshold=threshold, **hyper).explain(
        x, k=k, random_state=random_state)
