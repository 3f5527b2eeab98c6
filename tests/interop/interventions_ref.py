#!/usr/bin/python3
"""An independent plain-PyTorch reference for LenGen's evaluation-time interventions
(training-free length-extension methods), applied to the in-context models of
reference_model.py. The weights and modules come from there; the forward passes are written
out functionally here so that each method's math is visible in one place.

  interventions_ref.py check RUN_DIR FIXTURE_JSON [--tol 2e-4]

RUN_DIR holds config.yaml + state.pt (model_state_dict, loaded with strict=True).
FIXTURE_JSON: {"xs": [B][N][D], "ys": [B][N], "train_points": P, "cases": [{"name", "kind",
"params", "predictions": [B][N]}, ...]}. Prints one line per case; exits 1 when a case differs
by more than --tol, 2 on an unknown kind.

Kinds: none, truncate, segments (XL3M, Wang et al. 2024), pi (Position Interpolation, Chen et
al. 2023), ntk (NTK-aware scaling, bloc97 2023), dynamic_ntk (dynamic NTK, emozilla/bloc97
2023), yarn (Peng et al. 2023), lambda (LM-Infinite, Han et al. 2024), window (sliding window),
logit_scale ("log-n" scaling, Chiang & Cholak 2022), mamba_dt (Stuffed Mamba, Chen et al.
2024), longheads (LongHeads, Lu et al. 2024).
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_model as rm  # noqa: E402

KINDS = ("none", "truncate", "segments", "pi", "ntk", "dynamic_ntk", "yarn", "lambda", "window",
         "logit_scale", "mamba_dt", "longheads")
ROTARY = ("rope", "yarn", "dynamic-yarn", "dynamic", "linear")


# ---------------------------------------------------------------------------------------------
# Rotary tables. Returns (inv_freq float32 [d/2], position divisor, mscale) of the edited table.
def rotary_table(att, kind, p, T, d, theta):
    r = att.rotary_emb
    inv, div, ms = r.inv_freq, r.pi_factor, r.mscale
    i = torch.arange(d // 2, dtype=torch.float64)
    if kind == "pi":
        # Position Interpolation (Chen et al. 2023): read position p as p / s.
        div = div * p["factor"]
    elif kind == "ntk" or (kind == "dynamic_ntk" and T > p["length"]):
        # NTK-aware scaling (bloc97 2023): base -> base * s^(d/(d-2)), i.e. inv_freq_i *
        # s^(-2i/(d-2)). Dynamic NTK picks s = a*T/L - (a-1) from the forward's length T.
        s = p["factor"] if kind == "ntk" else p["alpha"] * T / p["length"] - (p["alpha"] - 1)
        inv = (inv.double() * s ** (-2 * i / (d - 2))).float()
    elif kind == "yarn":
        # YaRN (Peng et al. 2023): "NTK-by-parts" ramp between interpolated (inv/s) and
        # original frequencies over the dims between beta_fast and beta_slow rotations in the
        # training length L, plus the attention temperature mscale on cos and sin.
        s, L = p["factor"], p["length"]
        dim = lambda rot: d * math.log(L / (2 * math.pi * rot)) / (2 * math.log(theta))
        low = max(math.floor(dim(p["beta_fast"])), 0)
        high = min(math.ceil(dim(p["beta_slow"])), d - 1)
        if low == high:
            high += 0.001
        ramp = ((i - low) / (high - low)).clamp(0, 1)
        inv64 = inv.double()
        inv = (inv64 / s * ramp + inv64 * (1 - ramp)).float()
        ms = ms * p["mscale"]
    return inv, div, ms


def rotate(x, pos, inv, ms):
    """x [..., d] rotated at positions pos (shape x.shape[:-1], float32), rotate-half pairing."""
    freqs = pos[..., None] * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * (emb.cos() * ms) + rm.rotate_half(x) * (emb.sin() * ms)


# ---------------------------------------------------------------------------------------------
# Additive position biases at (query position, key position) pairs; both broadcast to [..., T, T].
def bias(att, pe, qpos, kpos):
    if pe == "alibi":
        # slope * (key - query); any per-row constant gives the same softmax (the reference
        # model uses query = T-1, which the plain path passes to stay bit-identical).
        slopes = rm.alibi_slopes(att.heads)
        return slopes[:, None, None] * (kpos - qpos)
    if pe == "fire":
        # FIRE: MLP(psi(q - k) / psi(max(q, |lambda L0|))), psi(u) = log(|c u| + 1).
        f = att.rotary_emb
        psi = lambda u: torch.log(torch.abs(f.c * u) + 1)
        norm = psi(torch.maximum(qpos, torch.abs(f.L_multiplier * f.init_L))) + 1e-6
        out = f.mlp((psi(qpos - kpos) / norm).unsqueeze(-1))  # [..., T, T, heads]
        return out.movedim(-1, -3)  # [..., heads, T, T]
    return None


# ---------------------------------------------------------------------------------------------
# Attention core: q, k, v [B, H, T, d] right after the projections (unrotated).
def attend(att, pe, q, k, v, kind, p, theta):
    B, H, T, d = q.shape
    ti = torch.arange(T)
    rel = ti[:, None] - ti[None, :]  # i - j
    if kind == "longheads" and p["budget"] < T:
        logits, allowed = longheads(att, pe, q, k, p["chunk"], p["budget"], theta)
    else:
        fpos = torch.arange(T, dtype=torch.float32)
        if pe in ROTARY:
            inv, div, ms = rotary_table(att, kind, p, T, d, theta)
            qr, kr = rotate(q, fpos / div, inv, ms), rotate(k, fpos / div, inv, ms)
        else:
            qr, kr = q, k
        logits = qr @ kr.transpose(-1, -2) / math.sqrt(d)
        allowed = rel >= 0
        capped = None
        if kind == "window":
            allowed = allowed & (rel < p["local"])
        elif kind == "lambda" and p["local"] < T:
            # LM-Infinite (Han et al. 2024): Lambda-shaped mask (global prefix + local window);
            # distances to the global keys are capped at D.
            g, D = p["global"], p["cap"]
            allowed = allowed & ((ti[None, :] < g) | (rel < p["local"]))
            capped = allowed & (ti[None, :] < g) & (rel > D)
            if pe in ROTARY:  # q at position D, k at position 0
                qD = rotate(q, torch.full((T,), D / div), inv, ms)
                k0 = rotate(k, torch.zeros(T), inv, ms)
                logits = torch.where(capped, qD @ k0.transpose(-1, -2) / math.sqrt(d), logits)
        if pe in ("alibi", "fire"):
            qp = fpos[:, None].expand(T, T)
            kp = fpos[None, :].expand(T, T)
            if capped is not None:  # bias at (i, i - D)
                kp = torch.where(capped, qp - p["cap"], kp)
            if pe == "alibi":  # row-shifted as in the reference model: query at T-1
                qp = torch.full((T, T), float(T - 1))
            logits = logits + bias(att, pe, qp, kp)
    if kind == "logit_scale":
        # log-n scaling (Chiang & Cholak 2022): row i times max(1, ln(i+1) / ln L).
        scale = torch.clamp(torch.log(ti.double() + 1) / math.log(p["length"]), min=1.0)
        logits = logits * scale.float()[:, None]
    logits = logits.masked_fill(~allowed, float("-inf"))
    return logits.float().softmax(-1) @ v


def longheads(att, pe, q, k, c, M, theta):
    """LongHeads (Lu et al. 2024): each head and query attends to M // c chunks of c tokens:
    chunk 0, its own chunk and the best-scoring earlier chunks (q . mean key), re-positioned
    contiguously within 0..M-1. Returns logits [B, H, T, T] and the allowed mask."""
    B, H, T, d = q.shape
    m, K = M // c, -(-T // c)
    ti = torch.arange(T)
    chunk, kk = ti // c, torch.arange(K)
    onehot = F.one_hot(chunk, K).float()  # [T, K]
    rep = torch.einsum("bhtd,tk->bhkd", k, onehot) / onehot.sum(0)[:, None]
    score = q @ rep.transpose(-1, -2)  # [B, H, T, K]
    cand = (kk[None, :] >= 1) & (kk[None, :] < chunk[:, None])  # [T, K]
    sel = (kk[None, :] == 0) | (kk[None, :] == chunk[:, None])
    sel = sel.expand(B, H, T, K).clone()
    if m - 2 > 0:
        top = score.masked_fill(~cand, float("-inf")).topk(min(m - 2, K), dim=-1).indices
        picked = torch.zeros_like(sel).scatter_(-1, top, True)
        sel |= picked & cand  # drops the -inf picks when there are fewer candidates
    slot = sel.long().cumsum(-1) - 1  # slot of each selected chunk, ascending
    kpos = slot[..., chunk] * c + ti % c  # [B, H, T, T]: key j as seen by query i
    own = chunk[None, None, :, None].expand(B, H, T, 1)
    qpos = slot.gather(-1, own).squeeze(-1) * c + ti % c  # [B, H, T]
    allowed = sel[..., chunk] & (ti[None, :] <= ti[:, None])
    if pe in ROTARY:  # the model's own table at the new positions
        r = att.rotary_emb
        qr = rotate(q, qpos.float() / r.pi_factor, r.inv_freq, r.mscale)
        kr = rotate(k[:, :, None], kpos.float() / r.pi_factor, r.inv_freq, r.mscale)
        logits = torch.einsum("bhid,bhijd->bhij", qr, kr) / math.sqrt(d)
    else:
        logits = q @ k.transpose(-1, -2) / math.sqrt(d)
    if pe in ("alibi", "fire"):
        b = bias(att, pe, qpos.float()[..., None], kpos.float())  # [B, H, (heads,) T, T]
        if pe == "fire":  # head h of the MLP for head h
            b = torch.stack([b[:, h, h] for h in range(H)], dim=1)
        logits = logits + b
    return logits, allowed


# ---------------------------------------------------------------------------------------------
# Mamba mixer with the discretisation step scaled (Stuffed Mamba, Chen et al. 2024).
def mamba_mixer(mx, u, f):
    B, T, _ = u.shape
    x, z = mx.in_proj(u).chunk(2, dim=-1)
    v = F.silu(mx.conv1d(x.transpose(1, 2))[..., :T]).transpose(1, 2)
    dt, b, c = mx.x_proj(v).split([mx.r, mx.n, mx.n], dim=-1)
    delta = F.softplus(mx.dt_proj(dt)) * f
    A = -torch.exp(mx.A_log)
    s = torch.zeros(B, mx.e, mx.n)
    ys = []
    for t in range(T):
        s = torch.exp(delta[:, t, :, None] * A) * s + delta[:, t, :, None] * b[:, t, None, :] * v[:, t, :, None]
        ys.append((s * c[:, t, None, :]).sum(-1) + mx.D * v[:, t])
    return mx.out_proj(torch.stack(ys, dim=1) * F.silu(z))


def forward(model, cfg, xs, ys, kind="none", p=None):
    """One forward of the whole prompt with a per-forward intervention; predictions [B, N]."""
    p = p or {}
    B, N, D = xs.shape
    wide = torch.cat((ys.unsqueeze(-1), torch.zeros(B, N, D - 1)), dim=-1)
    h = model.input(torch.stack((xs, wide), dim=2).reshape(B, 2 * N, D))
    T, m = 2 * N, cfg["model"]
    theta = float(m.get("rope_theta", 10000))
    split = lambda t, heads: t.view(B, T, heads, -1).transpose(1, 2)
    merge = lambda t: t.transpose(1, 2).reshape(B, T, -1)
    if hasattr(model, "backbone"):
        f = p["factor"] if kind == "mamba_dt" else 1.0
        for layer in model.backbone.layers:
            h = h + mamba_mixer(layer.mixer, layer.norm(h), f)
        h = model.backbone.norm_f(h)
    elif isinstance(model.transformer, rm.Gpt2):
        g = model.transformer
        h = h + g.wpe(torch.arange(T))
        for blk in g.h:
            q, k, v = blk.attn.c_attn(blk.ln_1(h)).split(h.shape[-1], dim=-1)
            a = attend(None, "gpt2", *(split(t, blk.heads) for t in (q, k, v)), kind, p, theta)
            h = h + blk.attn.c_proj(merge(a))
            h = h + blk.mlp.c_proj(F.gelu(blk.mlp.c_fc(blk.ln_2(h)), approximate="tanh"))
        h = g.ln_f(h)
    else:
        for layer in model.transformer.layers:
            att, x = layer.self_attn, layer.input_layernorm(h)
            q, k, v = (split(proj(x), att.heads) for proj in (att.q_proj, att.k_proj, att.v_proj))
            h = h + att.o_proj(merge(attend(att, att.pe, q, k, v, kind, p, theta)))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        h = model.transformer.norm(h)
    return model.output(h)[:, ::2, 0]


def gather_forward(model, cfg, xs, ys, idx):
    """Plain forwards of the prompts xs[:, idx[j]] (positions restarting at 0); the prediction
    at each prompt's last x token, [B, J]."""
    B, J, n = xs.shape[0], idx.shape[0], idx.shape[1]
    px, py = xs[:, idx].reshape(B * J, n, -1), ys[:, idx].reshape(B * J, n)
    return forward(model, cfg, px, py)[:, -1].reshape(B, J)


def predict(model, cfg, xs, ys, kind, p):
    B, N, _ = xs.shape
    if kind not in ("truncate", "segments"):
        return forward(model, cfg, xs, ys, kind, p)
    P = p["points"]
    if N <= P:
        return forward(model, cfg, xs, ys)
    out = torch.zeros(B, N)
    out[:, :P] = forward(model, cfg, xs[:, :P], ys[:, :P])
    if kind == "truncate":
        # Truncation: each query sees only its P-1 nearest examples.
        idx = torch.stack([torch.arange(k - P + 1, k + 1) for k in range(P, N)])
        out[:, P:] = gather_forward(model, cfg, xs, ys, idx)
        return out
    # XL3M-style segments (Wang et al. 2024): the k earlier examples cut into m = ceil(k/c)
    # near-equal contiguous chunks, each followed by the query; predictions averaged.
    c, jobs = P - 1, {}
    for k in range(P, N):
        m = -(-k // c)
        base, rem = divmod(k, m)
        start = 0
        for t in range(m):
            s = base + (1 if t < rem else 0)
            w = 1.0 / m if p["weight"] == "mean" else s / k
            jobs.setdefault(s, []).append((k, start, w))
            start += s
    for s, lst in sorted(jobs.items()):
        idx = torch.tensor([list(range(st, st + s)) + [k] for k, st, _ in lst])
        pred = gather_forward(model, cfg, xs, ys, idx)  # [B, J]
        w = torch.tensor([wt for _, _, wt in lst])
        out.index_add_(1, torch.tensor([k for k, _, _ in lst]), pred * w)
    return out


def load(run_dir):
    with open(f"{run_dir}/config.yaml") as f:
        cfg = yaml.safe_load(f)
    model = rm.InContextModel(cfg)
    state = torch.load(f"{run_dir}/state.pt", map_location="cpu")
    model.load_state_dict(state["model_state_dict"], strict=True)
    return cfg, model.eval()


def check(run_dir, fixture, tol):
    cfg, model = load(run_dir)
    with open(fixture) as f:
        fx = json.load(f)
    unknown = [c["kind"] for c in fx["cases"] if c["kind"] not in KINDS]
    if unknown:
        print(f"unknown intervention kind(s): {', '.join(unknown)}")
        return 2
    xs = torch.tensor(fx["xs"], dtype=torch.float32)
    ys = torch.tensor(fx["ys"], dtype=torch.float32)
    L = 2 * fx["train_points"]
    worst = 0.0
    for case in fx["cases"]:
        p = dict(case.get("params") or {})
        if case["kind"] in ("yarn", "dynamic_ntk", "logit_scale"):
            p.setdefault("length", L)
        with torch.no_grad():
            pred = predict(model, cfg, xs, ys, case["kind"], p)
        want = torch.tensor(case["predictions"], dtype=torch.float32)
        diff = (pred - want).abs().max().item()
        worst = max(worst, diff) if diff == diff else float("inf")
        print(f"{case['name']}: max |diff| = {diff:.3g} (max |pred| = {pred.abs().max().item():.3g})")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    # One thread: the models are tiny, and flushing subnormals (Mamba's decaying states, 20x
    # slower on CPU otherwise) only takes effect on the calling thread.
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    args = sys.argv[1:]
    tol = 2e-4
    if "--tol" in args:
        at = args.index("--tol")
        tol = float(args[at + 1])
        del args[at:at + 2]
    if len(args) == 3 and args[0] == "check":
        sys.exit(check(args[1], args[2], tol))
    sys.exit(__doc__)
