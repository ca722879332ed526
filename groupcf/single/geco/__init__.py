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

Two options go beyond the paper (:class:`GeCoOptions`): ``distance=`` makes the search
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
from ...options import deprecated_aliases
from .domain import DOMAIN_CACHE, ActiveDomain, FeatureDomain
from .explainer import GeCo, explain_geco
from .params import GeCoOptions, geco_distance
from .scoring import _Scorer, decode

__all__ = ["GeCo", "GeCoOptions", "explain_geco", "geco_distance", "decode", "ActiveDomain",
           "FeatureDomain", "DOMAIN_CACHE", "_Scorer"]

__getattr__ = deprecated_aliases(__name__, {'GeCoParams': GeCoOptions})
