r"""PyTorch ``nn.Sequential`` networks as :class:`~groupcf.embeddings.network.ReLUNetwork`.

Registered only when ``torch`` is importable (and, lazily, only once ``torch`` has been
imported by the user — a torch model implies it has).

Supported modules, after flattening nested ``nn.Sequential``:

* ``nn.Linear`` (bias optional). Consecutive ``Linear`` layers without a ReLU between
  them are composed into one: :math:`W_2(W_1 y + b_1) + b_2`.
* ``nn.ReLU`` between ``Linear`` layers (repeated ReLUs are idempotent).
* ``nn.Identity``, ``nn.Dropout`` (identity at inference) and ``nn.Flatten`` (identity
  on ``(batch, features)`` inputs) are skipped.
* As the **last** module only: ``nn.Sigmoid`` (after 1 output), ``nn.Softmax`` /
  ``nn.LogSoftmax`` over the last dimension (after 2 outputs). They are monotone in the
  logit and do not move the decision boundary, so they are dropped: the embedding's score
  is always the *logit*, not the probability.

The output ``Linear`` has one output (the score is that logit) or two (score
:math:`= z_1 - z_0`, folded into the last layer as :math:`(W_1 - W_0, b_1 - b_0)`; the
positive class is index 1, as in ``classes_ = [0, 1]``).

Anything else raises :class:`~groupcf.exceptions.UnsupportedModelError` naming the
offending module. Weights are read with ``.detach().cpu().double().numpy()``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from groupcf.embeddings.network import ReLUNetwork
from groupcf.exceptions import UnsupportedModelError

if TYPE_CHECKING:  # pragma: no cover
    from groupcf.embeddings.registry import Register

_SKIPPED = (nn.Identity, nn.Dropout, nn.Flatten)
_FINAL = (nn.Sigmoid, nn.Softmax, nn.LogSoftmax)


def _flatten(module: nn.Module) -> list[tuple[str, nn.Module]]:
    if isinstance(module, nn.Sequential):
        out = []
        for name, child in module.named_children():
            out += [(f"{name}.{n}" if n else name, m) for n, m in _flatten(child)]
        return out
    return [("", module)]


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().double().numpy()


def sequential(model: nn.Module) -> ReLUNetwork:
    """Embedding of an ``nn.Sequential`` of ``Linear`` / ``ReLU`` (or a bare ``Linear``)."""
    modules = _flatten(model)
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    pending: tuple[np.ndarray, np.ndarray] | None = None   # affine map since the last ReLU
    for pos, (name, m) in enumerate(modules):
        where = f"layer {name or pos} ({m!r})"
        if isinstance(m, nn.Linear):
            W = _numpy(m.weight)
            b = np.zeros(W.shape[0]) if m.bias is None else _numpy(m.bias)
            if pending is None:
                n_prev = layers[-1][0].shape[0] if layers else W.shape[1]
                if W.shape[1] != n_prev:
                    raise UnsupportedModelError(f"{where} expects {W.shape[1]} inputs, gets {n_prev}")
                pending = (W, b)
            else:
                Wp, bp = pending
                if W.shape[1] != Wp.shape[0]:
                    raise UnsupportedModelError(f"{where} expects {W.shape[1]} inputs, gets {Wp.shape[0]}")
                pending = (W @ Wp, W @ bp + b)
        elif isinstance(m, nn.ReLU):
            if pending is not None:
                layers.append(pending)
                pending = None
            elif not layers:
                raise UnsupportedModelError(f"{where}: a ReLU applied to the inputs is not supported")
        elif isinstance(m, _SKIPPED):
            continue
        elif isinstance(m, _FINAL):
            if pos != len(modules) - 1 or pending is None:
                raise UnsupportedModelError(
                    f"{where}: {type(m).__name__} is only supported as the last module, "
                    "right after the output Linear")
            n_out = pending[0].shape[0]
            if isinstance(m, nn.Sigmoid) and n_out != 1:
                raise UnsupportedModelError(f"{where}: Sigmoid after {n_out} outputs; expected 1")
            if not isinstance(m, nn.Sigmoid) and (n_out != 2 or m.dim not in (-1, 1)):
                raise UnsupportedModelError(
                    f"{where}: {type(m).__name__}(dim={m.dim}) after {n_out} outputs; "
                    "expected dim=-1 (or 1) over 2 outputs")
        else:
            raise UnsupportedModelError(
                f"{where}: torch module {type(m).__name__} is not supported; use Linear and "
                "ReLU layers (nested Sequential, Identity, Dropout, Flatten and a final "
                "Sigmoid/Softmax are accepted)")
    if pending is None:
        raise UnsupportedModelError(
            "the network must end with a Linear layer giving the logit(s); "
            f"it ends with {modules[-1][1]!r}" if modules else "the Sequential is empty")
    W, b = pending
    if W.shape[0] == 2:
        W, b = (W[1] - W[0])[None, :], np.array([b[1] - b[0]])
    elif W.shape[0] != 1:
        raise UnsupportedModelError(
            f"the output Linear has {W.shape[0]} outputs; expected 1 (logit of the positive "
            "class) or 2 (logits of classes 0 and 1)")
    layers.append((W, b))
    return ReLUNetwork(layers)


def register_all(register: Register) -> None:
    """Register torch ``Sequential`` and ``Linear`` modules."""
    register(nn.Sequential, sequential)
    register(nn.Linear, sequential)
