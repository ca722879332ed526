"""The experiment of Naumann & Ntoutsi (ECML-PKDD 2021): the authors' Keras models as
ReLU networks, their action sets, the Adult dependency graph and the 100 start instances.

A benchmark helper, not part of the installed package (``benchmarks/sequential.py``,
``notebooks/03_sequential.ipynb`` and ``tests/benchmarks/test_cscf.py`` put this folder on
``sys.path``). The authors' network and one-hot encoding reach groupcf through the one
model adapter, :func:`groupcf.models.resolve_encoded` (:meth:`CSCFData.model`).

Files are read from ``data_dir`` (default ``$GROUPCF_CSCF_DATA`` or ``../shared/data/cscf``,
see that folder's README); nothing is bundled. The z-scoring of the numeric inputs is
folded into the first layer and the two logits into one score ``logit_target -
logit_other``, so the network takes x-space values (categories one-hot) and accepts where
the score is ``>= 0``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from groupcf.embeddings import ReLUNetwork
from groupcf.exceptions import DatasetNotAvailableError
from groupcf.models import TrainedModel, resolve_encoded
from groupcf.sequential.actions import (
    AbsChange,
    Action,
    ActionSet,
    DependencyGraph,
    Nonlinear,
    RelativeSquared,
)
from groupcf.sequential.encoding import OneHotEncoding

TARGET = {"adult": 1, "german": 0}
# max |z| of each action's feature over all rows, z with CSCF's partition statistics (README)
_M = {"adult": {"Education num": 3.5547719058296745, "Capital Loss": 10.59810994805951,
                "Hours/Week": 4.874632329602232, "Capital Gain": 12.944717460706064,
                "Age": 3.8904057439885578},
      "german": {"age_in_years": 3.558239178006401, "credit_amount": 5.28844453447103,
                 "loan_duration": 4.144417832519623}}


def default_data_dir() -> Path:
    """Where the authors' data live (``$GROUPCF_CSCF_DATA``, else ``../shared/data/cscf``)."""
    return Path(os.environ.get("GROUPCF_CSCF_DATA", "../shared/data/cscf"))


@dataclass
class CSCFData:
    """One dataset of the experiment."""

    name: str
    features: list
    encoding: OneHotEncoding
    network: ReLUNetwork           # x-space (one-hot categories) -> logit_target - logit_other
    actions: ActionSet
    dependencies: DependencyGraph | None
    starts: pd.DataFrame           # the 100 start instances (x-space)
    ranges: dict                   # numeric max - min over the .data file (Gower)
    logits: np.ndarray             # the authors' logits of the start instances (verification)

    @property
    def categorical(self) -> list:
        """The categorical features (one-hot encoded for the network)."""
        return list(self.encoding.categories)

    def model(self, threshold: float = 0.5) -> TrainedModel:
        """The authors' network behind its encoding, as groupcf's model adapter."""
        return resolve_encoded(self.network, self.encoding, threshold=threshold)

    def explain_kwargs(self) -> dict:
        """Arguments of :func:`groupcf.explain_sequence` matching the paper's set-up."""
        return {"encode": self.encoding, "ranges": self.ranges, "categorical": self.categorical,
                    "decimals": 3, "min_change": 0.1}


def load_cscf(name: str, data_dir=None) -> CSCFData:
    """Load ``"adult"`` or ``"german"``."""
    d = Path(data_dir) if data_dir is not None else default_data_dir()
    d = d / name
    if not (d / "model.npz").exists():
        raise DatasetNotAvailableError(
            f"{d / 'model.npz'} not found; pass data_dir= or set GROUPCF_CSCF_DATA to the cscf data folder")
    spec = json.loads((d / f"{name}.features.json").read_text())
    spec = sorted((f for f in spec if f["type"] != "class"), key=lambda f: f["i"])
    features = [f["name"] for f in spec]
    cats = {f["name"]: f["values"] for f in spec if f["type"] != "numeric"}
    enc = OneHotEncoding(features, cats)
    net = _network(np.load(d / "model.npz"), spec, enc, TARGET[name])
    starts = pd.DataFrame(np.loadtxt(d / f"original_{name}_n=100.csv", delimiter=","), columns=features)
    raw = np.loadtxt(d / "adult.data") if name == "adult" else np.load(d / "german_x.npy")
    ranges = {f: float(raw[:, i].max() - raw[:, i].min()) for i, f in enumerate(features) if f not in cats}
    rows = pd.read_csv(d / "start_instance_rows.csv")
    logits = rows[["model_logit_0", "model_logit_1"]].to_numpy()
    std = {f["name"]: f["std"] for f in spec if f["type"] == "numeric"}
    mean = {f["name"]: f["mean"] for f in spec if f["type"] == "numeric"}
    if name == "adult":
        actions, graph = _adult(features, std), _adult_graph(features)
    elif name == "german":
        actions, graph = _german(features, std, mean), None
    else:
        raise DatasetNotAvailableError(f"unknown cscf dataset {name!r}: 'adult' or 'german'")
    return CSCFData(name, features, enc, net, actions, graph, starts, ranges, logits)


def _network(w, spec, enc: OneHotEncoding, target: int) -> ReLUNetwork:
    """Keras ``h = relu(z W + b)`` with ``W (in, out)`` -> groupcf's ``(out, in)`` layers,
    z-scoring folded into layer 1, the two logits into one score."""
    W0, b0 = w["W0"].astype(float).T.copy(), w["b0"].astype(float).copy()
    for f, cols in zip(spec, enc.columns):
        if f["type"] == "numeric":
            j = cols[0]
            b0 -= W0[:, j] * f["mean"] / f["std"]
            W0[:, j] = W0[:, j] / f["std"]
    W2, b2 = w["W2"].astype(float).T, w["b2"].astype(float)
    other = 1 - target
    last = (W2[target] - W2[other])[None, :], np.array([b2[target] - b2[other]])
    return ReLUNetwork([(W0, b0), (w["W1"].astype(float).T, w["b1"].astype(float)), last])


def _adult(features, std) -> ActionSet:
    M = _M["adult"]

    def rng(f):
        return (-M[f] * std[f], M[f] * std[f])

    acts = [
        Action("addEdu", "Education num", rng("Education num"), cost="abs", consequences={"Age": 2.0},
               post=["Age' > Age", "Age' < 120", "Education num' > Education num", "Education num' < 16.5"]),
        Action("chCapLoss", "Capital Loss", rng("Capital Loss"), cost=AbsChange(1e-3),
               pre=["Capital Gain < 1"], post=["Capital Loss' > 1", "Capital Loss' < 5000"]),
        Action("chWorkHrs", "Hours/Week", rng("Hours/Week"), cost=AbsChange(0.1),
               post=["Hours/Week' > 0", "Hours/Week' < 90"]),
        Action("enlist", "Occupation", kind="set", values=[312], cost=5.0, pre=["Occupation != 312"]),
        Action("chCapGain", "Capital Gain", rng("Capital Gain"), cost=AbsChange(1e-4),
               pre=["Capital Loss < 1"], post=["Capital Gain' > 0", "Capital Gain' < 100000"]),
        Action("waitYears", "Age", rng("Age"), cost="abs", post=["Age' > Age", "Age' < 120"]),
    ]
    return ActionSet(acts, features, immutable=["Race", "Sex", "Native country"])


def _edu_tau(x):
    return 1.0 - np.clip(np.floor(x["Education num"]), 0, 16) / 32.0


def _hours_gain_tau(x):
    h = np.clip(x["Hours/Week"], 0.0, 80.0)
    return 1.0 - np.clip(np.expm1(h) / np.expm1(80.0), 0.0, 1.0)


def _hours_edu_tau(x):
    h = x["Hours/Week"]
    return np.select([h < 20, h < 30, h <= 40], [0.5, 0.6, 0.7], 1.0)


def _adult_graph(features) -> DependencyGraph:
    return DependencyGraph({("Education num", "Capital Gain"): _edu_tau,
                            ("Education num", "Occupation"): _edu_tau,
                            ("Education num", "Workclass"): _edu_tau,
                            ("Hours/Week", "Capital Gain"): _hours_gain_tau,
                            ("Hours/Week", "Education num"): _hours_edu_tau}, features)


def _german(features, std, mean) -> ActionSet:
    M = _M["german"]

    def rng(f):
        return (-M[f] * std[f], M[f] * std[f])

    mc = mean["credit_amount"]

    def adj_duration(before, after):   # as implemented by the authors (README caveat 5)
        dc = after["credit_amount"] - before["credit_amount"]
        return before["loan_duration"] * (2.0 + dc / before["credit_amount"])

    def adj_interval(lo, hi, dlo, dhi):   # encloses adj_duration (the certified bound)
        cl, ch = lo["credit_amount"], hi["credit_amount"]
        ok = cl > 0
        cl_, ch_ = np.where(ok, cl, 1.0), np.where(ok, ch, 1.0)
        r = np.stack([dlo / cl_, dlo / ch_, dhi / cl_, dhi / ch_])
        f_lo, f_hi = 2.0 + r.min(0), 2.0 + r.max(0)
        p = np.stack([lo["loan_duration"] * f_lo, lo["loan_duration"] * f_hi,
                      hi["loan_duration"] * f_lo, hi["loan_duration"] * f_hi])
        return np.where(ok, p.min(0), -np.inf), np.where(ok, p.max(0), np.inf)

    acts = [
        Action("waitYears", "age_in_years", rng("age_in_years"), cost="abs",
               post=["age_in_years' > age_in_years", "age_in_years' < 120"]),
        Action("naturalize", "foreign_worker", kind="set", values=[202], cost=5.0,
               pre=["foreign_worker != 202"]),
        Action("chCreditAm", "credit_amount", rng("credit_amount"), cost=RelativeSquared(),
               pre=["age_in_years > 15"], post=["credit_amount' > 0", "credit_amount' < 100000"]),
        Action("chLoanPeriod", "loan_duration", rng("loan_duration"), cost=RelativeSquared(),
               post=["loan_duration' > 0", "loan_duration' < 120"]),
        # cost: the relative change of the z-scored credit, squared
        Action("adjLoanPeriod", "credit_amount", rng("credit_amount"), cost=RelativeSquared(offset=mc),
               consequences={"loan_duration": Nonlinear(adj_duration, (0.0, 120.0), adj_interval,
                                                         ("credit_amount", "loan_duration"))},
               pre=["credit_amount > 1000"],
               post=["loan_duration' > 0", "loan_duration' < 120", "credit_amount' > 0",
                     "credit_amount' < 100000"]),
        Action("guarantor", "other_debtors_guarantors", kind="set", values=[103], cost=5.0,
               pre=["other_debtors_guarantors != 103"]),
        Action("unskilledJob", "job", kind="set", values=[172], cost=5.0, pre=["job == 171"]),
    ]
    return ActionSet(acts, features, immutable=["personal_status"])
