"""The GeCo explainer (prepared once per model and data) and :func:`explain_geco`."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict

import numpy as np
import pandas as pd

from ...exceptions import InvalidInputError, NoCounterfactualError, NotRejectedError
from ...features.validation import validate_instance
from ...formulations.distances import parse_distance
from ...models import logit
from ...options import rename_deprecated
from ...plaf import BoundConstraints, Constraints, fixed, increasing
from ...results.explanation import Explanation
from ...solvers.base import Status
from .domain import DOMAIN_CACHE
from .params import GeCoOptions
from .sampling import _GroupSampler
from .scoring import _resolve, _Scorer, decode
from .search import _Population, _Run

log = logging.getLogger(__name__)


class GeCo:
    """A GeCo explainer for one model and one reference data set.

    Preparing the active domain of ``data`` (values, frequencies, encodings, group
    tuples) is done once here; :meth:`explain` then runs the genetic search for one
    instance. ``constraints`` are PLAF rules (a list or :class:`~groupcf.plaf.Constraints`);
    the FeatureSpace's immutable / increase-only features are added as ``fixed`` /
    ``increasing`` rules. Other keyword arguments are :class:`GeCoOptions`.
    """

    def __init__(self, model, data: pd.DataFrame, constraints=None, *, space=None,
                 threshold: float = 0.5, options: GeCoOptions | None = None, **params):
        self.params = GeCoOptions.from_kwargs(options, owner="GeCo", **params)
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
        self._tables_cache: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._single_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ public
    def explain(self, x, n: int | None = None, random_state=None, **deprecated) -> Explanation:
        """Top-``n`` counterfactuals of ``x`` (a Series / one-row DataFrame of raw
        features), best first. Raises :class:`NotRejectedError` when the model already
        accepts ``x`` and :class:`NoCounterfactualError` when the search (up to
        ``max_generations``) finds none."""
        t0 = time.perf_counter()
        P = self.params
        old = rename_deprecated("GeCo.explain", deprecated, {"k": "n"})
        if set(old) - {"n"}:
            raise InvalidInputError(f"GeCo.explain() got unexpected argument(s) {sorted(set(old) - {'n'})}")
        if n is None:
            n = old.get("n")
        k = P.n if n is None else n
        if int(k) != k or k < 1:
            raise InvalidInputError(f"n must be a positive integer, got {k!r}")
        # the space's checks (NaN, unknown category) run once, in z0's encoding
        x = validate_instance(x, None, columns=self.domain.names)
        z0 = self.space.transform(x)[0] if self.space is not None else None
        # the real model's verdict on x: now, or (when the embedding, which reproduces the
        # model, rejects x) in the same pass as the final re-check of the counterfactuals
        deferred = z0 is not None and self.embedding is not None and \
            self.embedding.score(z0)[0] < self.embedding.score_threshold(self.threshold)
        if not deferred:
            self._not_rejected(x, *self.real.check(_frame(x)))
        rng = np.random.default_rng(random_state)
        dom = self.domain
        xkeys = dom.instance_keys(x)
        scorer = _Scorer(dom, x, z0, self.embedding, self.proba_clf,
                         self.model if self.proba_clf is None else None, self.threshold, P.evaluation)
        allowed = self.bound.allowed(xkeys) if self._has_rules else [None] * len(dom)
        samplers = self._samplers(xkeys, allowed)
        run = _Run(self, scorer, xkeys, allowed, samplers, rng, k)
        pop, stats = run.search()
        if P.refine and len(pop):
            pop = run.refine(pop, stats)
        cfs, rows, probs = self._final(x, pop, k, stats, deferred)
        if not rows:
            raise NoCounterfactualError(
                f"GeCo found no counterfactual for instance {x.name!r} in {stats['generations']} "
                f"generation(s) ({stats['stopped_by']}) under the constraints "
                "(PLAF rules, immutable / increase-only features)", rows=[x.name])
        changes = [[dom.names[l] for l in np.flatnonzero(pop.M[i])] for i in rows]
        stats.update(evaluation=scorer.kind, n_delta_sets=scorer.n_sets, n_scored=scorer.n_scored, n_barred=run.n_barred,
                     fitness=[float(pop.fit[i]) for i in rows], params=asdict(P),
                     n_returned=len(rows), k=int(k))
        if len(rows) < k:
            log.info("GeCo returned %d of k=%d counterfactuals for %r", len(rows), k, x.name)
        return Explanation(
            instance=x, counterfactuals=cfs, changes=changes,
            distances=[float(pop.dist[i]) for i in rows], probabilities=probs,
            status=Status.FEASIBLE, is_optimal=False, solve_time=time.perf_counter() - t0,
            method="geco",
            distance_name=(self.mace_distance.name if self.mace_distance is not None else
                           f"geco:{P.alpha:.3g}*l0+{P.beta:.3g}*l1+{P.gamma:.3g}*linf"),
            solver=f"genetic ({scorer.kind})", lower_bound=None, stats=stats)

    # ------------------------------------------------------------------ helpers
    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The search's tables that do not depend on the instance (built on first use, then
        shared read-only by every search): which features are numeric, their spans, the
        numeric features' value keys padded to one ``(feature, value code)`` table, and the
        features x features "in the same group" matrix (float: a product with it is one BLAS
        call; its entries, counts, are exact)."""
        if self._tables_cache is None:
            feats = self.domain.features
            numeric = np.array([f.kind == "numeric" for f in feats])
            span = np.array([f.span for f in feats])
            keys = np.full((len(feats), max((len(f.keys) for f in feats), default=1)), np.nan)
            for l in np.flatnonzero(numeric):
                keys[l, :len(feats[l].keys)] = feats[l].keys
            together = np.zeros((len(feats), len(feats)))
            for members in self.groups:
                together[np.ix_(list(members), list(members))] = 1.0
            for a in (numeric, span, keys, together):
                a.flags.writeable = False
            self._tables_cache = (numeric, span, keys, together)
        return self._tables_cache

    def _single(self, l: int, tup: np.ndarray, cnt: np.ndarray, xkey: float) -> _GroupSampler | None:
        """:meth:`_samplers`' sampler of a one-feature group ``(l,)`` without rules: the same
        arrays, from the feature's value keys and cumulative counts cached across instances.
        ``cw_change`` is ``cw_any`` less the count of the instance's value from its index on,
        the same floats as the cumulative sum of the other values' counts (integer counts)."""
        hit = self._single_cache.get(l)
        if hit is None:                 # shared by every search: read only
            hit = (self.domain.keys[l][tup[:, 0]], np.cumsum(cnt.astype(float)))
            for a in hit:
                a.flags.writeable = False
            self._single_cache[l] = hit
        keys, cw_any = hit
        same = keys == xkey
        if same.all():
            return None
        cw_change = cw_any.copy()
        for i in np.flatnonzero(same).tolist():
            cw_change[i:] -= float(cnt[i])
        return _GroupSampler((l,), tup, same[:, None], cw_change, cw_any)

    def _samplers(self, xkeys, allowed) -> list[_GroupSampler]:
        dom = self.domain
        out = []
        for members in self.groups:
            tup, cnt = dom.tuples(members)
            if len(members) == 1 and allowed[members[0]] is None:
                smp = self._single(members[0], tup, cnt, xkeys[members[0]])
                if smp is not None:
                    out.append(smp)
                continue
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

    def _not_rejected(self, x, p, ok) -> None:
        if ok[0]:
            raise NotRejectedError(f"the model already accepts instance {x.name!r} "
                                   f"(p = {p[0]:.3f} >= {self.threshold}); nothing to explain")

    def _final(self, x, pop: _Population, k: int, stats: dict, check_instance: bool = False):
        """Top counterfactuals that the real model accepts and the PLAF rules allow
        (re-checked on raw rows; rejections are counted in ``stats``): ``(frame, rows,
        probabilities)``. With ``check_instance`` (its own check was deferred) the instance
        is checked in the first pass: :class:`NotRejectedError` when the model accepts it."""
        cand = np.flatnonzero(pop.pos)
        rows: list[int] = []
        frames, probs = [], []
        start = 0
        stats["rejected_by_model"] = stats["rejected_by_plaf"] = 0
        if check_instance and not len(cand):
            self._not_rejected(x, *self.real.check(_frame(x)))
        while len(rows) < k and start < len(cand):
            chunk = cand[start:start + 2 * k]
            start += len(chunk)
            M, V = pop.M[chunk], pop.V[chunk]
            if check_instance:      # the instance itself first (no change: its raw values, the data's dtypes)
                M, V = np.vstack([np.zeros_like(M[:1]), M]), np.vstack([np.full_like(V[:1], -1), V])
            df = decode(self.domain, x, M, V)
            p, ok = self.real.check(df)
            if check_instance:
                self._not_rejected(x, p, ok)
                df, p, ok, check_instance = df.iloc[1:], p[1:], ok[1:], False
            stats["rejected_by_model"] += int((~ok).sum())
            if self.constraints.rules:
                plaf_ok = self.constraints.check_rows(x, df)
                stats["rejected_by_plaf"] += int((ok & ~plaf_ok).sum())
                ok &= plaf_ok
            if not ok.all():
                log.warning("GeCo: %d candidate(s) rejected by the final re-check (real model / "
                            "PLAF rules on raw values)", int((~ok).sum()))
            take = np.flatnonzero(ok)[: k - len(rows)]
            if len(take):
                rows += chunk[take].tolist()
                frames.append(df.iloc[take])
                probs += p[take].tolist()
        if not rows:
            return None, [], []
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True), rows, probs



def _frame(x: pd.Series) -> pd.DataFrame:
    """The instance as a one-row frame, its columns' dtypes inferred."""
    return x.to_frame().T.infer_objects()


def _columns(data):
    return list(data.columns)




def explain_geco(x, model, data: pd.DataFrame | None = None, constraints=None, n: int | None = None,
                 random_state=None, *, space=None, threshold: float = 0.5, options: GeCoOptions | None = None,
                 **hyper) -> Explanation:
    """GeCo counterfactuals of ``x``: what ``gcf.explain(x, model, method="geco", ...)``
    runs. ``data`` (required) gives the active domain; ``constraints`` PLAF rules;
    ``options`` / ``hyper`` :class:`GeCoOptions` (``q``, ``m_init``, ``m_mut``, ``alpha``, ...). The
    prepared domain of ``data`` is cached across calls by identity of ``data``; for many
    explanations :class:`GeCo` can also be used directly."""
    if data is None:
        raise InvalidInputError("method='geco' samples counterfactual values from reference data: "
                                "pass data=X_train (raw rows)")
    geco = GeCo(model, data, constraints, space=space, threshold=threshold, options=options, **hyper)
    return geco.explain(x, n=n, random_state=random_state)
