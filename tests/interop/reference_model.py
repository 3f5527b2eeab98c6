#!/usr/bin/python3
"""The reference's in-context-learning models, written in plain PyTorch from
shared/REFERENCE_SPEC.md §3-4 with the reference's module names, so that their state dicts have
exactly the keys of the reference's checkpoints (HF LlamaModel + patches, MambaModel,
GPT2Model). The LenGen test suite uses it to make reference-style run folders and to check
LenGen's exported ones:

  reference_model.py make DIR PE        write DIR/{config.yaml,state.pt,metrics.json,fixture.pt}
  reference_model.py check DIR FIXTURE  load DIR/state.pt with strict=True, predict the
                                        fixture's prompts, compare with its predictions
  reference_model.py damage SRC DST KIND  DST/state.pt = SRC/state.pt damaged (rename-key,
                                        wrong-shape, legacy, bad-optimizer, foreign-object,
                                        nan-weight, negative-step, step-past-max, float-step)
  reference_model.py batch FILE       every line of FILE one of the commands above, its words
                                        separated by tabs, run in this one process (importing
                                        PyTorch costs 1-3 s, more than a command); prints a line
                                        per command: its index, exit code and output, tab-separated
PE: rope, nope, alibi, fire, yarn, dynamic-yarn, linear (PI), dynamic (NTK), mamba, gpt2.
"""
import json
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Rotary(nn.Module):
    """RoPE (§4.1); YaRN (§4.5) registers its scaled inv_freq as a persistent buffer; linear
    PI (§4.7) divides positions by the factor."""

    def __init__(self, d, theta, yarn=None, pi_factor=1.0):
        super().__init__()
        inv = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
        self.mscale, self.pi_factor = 1.0, pi_factor
        if yarn is not None:
            s, l_orig = yarn
            dim = lambda r: d * math.log(l_orig / (2 * math.pi * r)) / (2 * math.log(theta))
            low, high = max(math.floor(dim(32)), 0), min(math.ceil(dim(1)), d - 1)
            if low == high:
                high += 0.001
            ramp = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
            keep = 1 - ramp
            inv = inv / s * (1 - keep) + inv * keep
            self.mscale = 0.1 * math.log(s) + 1 if s > 1 else 1.0
            self.register_buffer("inv_freq", inv.float(), persistent=True)
        else:
            self.register_buffer("inv_freq", inv.float(), persistent=False)

    def forward(self, q, k):
        t = torch.arange(q.shape[-2], dtype=torch.float32, device=q.device) / self.pi_factor
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos() * self.mscale, emb.sin() * self.mscale
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Fire(nn.Module):
    """FIRE (§4.4): MLP(psi(i-j) / psi(max(i, |lambda L0|))) per head."""

    def __init__(self, heads, width):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, width), nn.ReLU(), nn.Linear(width, heads))
        self.c = nn.Parameter(torch.tensor(0.1))
        self.init_L = nn.Parameter(torch.tensor(512.0), requires_grad=False)
        self.L_multiplier = nn.Parameter(torch.tensor(1.0))

    def forward(self, T):
        p = torch.arange(T, dtype=torch.float32, device=self.c.device)
        psi = lambda u: torch.log(torch.abs(self.c * u) + 1)
        norm = psi(torch.maximum(p, torch.abs(self.L_multiplier * self.init_L))) + 1e-6
        r = psi(p[:, None] - p[None, :]) / norm[:, None]
        return self.mlp(r.unsqueeze(-1)).permute(2, 0, 1)  # (heads, T, T)


def alibi_slopes(n):
    p = 2 ** math.ceil(math.log2(n))
    s = [2 ** (-(k * 8 / p)) for k in range(1, p + 1)]
    if p != n:
        s = (s[1::2] + s[0::2])[:n]
    return torch.tensor(s)


class Attention(nn.Module):
    def __init__(self, cfg, pe):
        super().__init__()
        h = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.q_proj, self.k_proj = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
        self.v_proj, self.o_proj = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
        self.pe = pe
        d = h // self.heads
        scaling = cfg.get("rope_scaling") or {}
        if pe == "fire":
            self.rotary_emb = Fire(self.heads, cfg["max_position_embeddings"])
        elif pe == "yarn":
            self.rotary_emb = Rotary(d, cfg["rope_theta"],
                                     (scaling["factor"], cfg["max_position_embeddings"]))
        elif pe in ("rope", "dynamic-yarn", "dynamic"):
            # Dynamic YaRN and dynamic NTK are RoPE below their trigger (the fixture's prompts
            # have 12 tokens; L_orig is 16).
            self.rotary_emb = Rotary(d, cfg["rope_theta"])
        elif pe == "linear":
            self.rotary_emb = Rotary(d, cfg["rope_theta"], pi_factor=scaling["factor"])

    def forward(self, x):
        B, T, H = x.shape
        split = lambda t: t.view(B, T, self.heads, -1).transpose(1, 2)
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        if self.pe in ("rope", "yarn", "dynamic-yarn", "dynamic", "linear"):
            q, k = self.rotary_emb(q, k)
        logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if self.pe == "alibi":
            i = torch.arange(T, device=x.device)
            logits = logits + alibi_slopes(self.heads).to(x.device)[:, None, None] * (i[None, :] - (T - 1))
        elif self.pe == "fire":
            logits = logits + self.rotary_emb(T)
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        logits = logits.masked_fill(mask, float("-inf"))
        out = logits.float().softmax(-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, H))


class RMSNorm(nn.Module):
    def __init__(self, h, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(h)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Mlp(nn.Module):
    def __init__(self, h, i):
        super().__init__()
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, cfg, pe):
        super().__init__()
        h, eps = cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6)
        self.self_attn = Attention(cfg, pe)
        self.mlp = Mlp(h, cfg["intermediate_size"])
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(h, eps), RMSNorm(h, eps)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, cfg, pe):
        super().__init__()
        self.embed_tokens = nn.Embedding(32000, cfg["hidden_size"])  # unused, as in HF
        self.layers = nn.ModuleList(LlamaLayer(cfg, pe) for _ in range(cfg["num_hidden_layers"]))
        self.norm = RMSNorm(cfg["hidden_size"], cfg.get("rms_norm_eps", 1e-6))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class Conv1D(nn.Module):
    """HF GPT-2's transposed linear layer: weight (in, out)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.empty(n_in, n_out)), nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        return x @ self.weight + self.bias


class Gpt2Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads  # registration order as HF's GPT2Block: ln_1, attn, ln_2, mlp
        self.ln_1 = nn.LayerNorm(h, eps=1e-5)
        self.attn = nn.Module()
        self.attn.c_attn, self.attn.c_proj = Conv1D(h, 3 * h), Conv1D(h, h)
        self.ln_2 = nn.LayerNorm(h, eps=1e-5)
        self.mlp = nn.Module()
        self.mlp.c_fc, self.mlp.c_proj = Conv1D(h, 4 * h), Conv1D(4 * h, h)

    def forward(self, x):
        B, T, H = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(H, dim=-1)
        split = lambda t: t.view(B, T, self.heads, -1).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        logits = logits.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        a = (logits.softmax(-1) @ v).transpose(1, 2).reshape(B, T, H)
        x = x + self.attn.c_proj(a)
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["n_embd"]
        self.wte = nn.Embedding(50257, h)  # unused
        self.wpe = nn.Embedding(cfg["n_positions"], h)
        self.h = nn.ModuleList(Gpt2Block(h, cfg["n_head"]) for _ in range(cfg["n_layer"]))
        self.ln_f = nn.LayerNorm(h, eps=1e-5)

    def forward(self, x):
        x = x + self.wpe(torch.arange(x.shape[1], device=x.device))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class MambaMixer(nn.Module):
    def __init__(self, h, n):
        super().__init__()
        e, r = 2 * h, math.ceil(h / 16)
        self.e, self.r, self.n = e, r, n
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(e, 1))
        self.D = nn.Parameter(torch.ones(e))
        self.conv1d = nn.Conv1d(e, e, 4, groups=e, padding=3)
        self.in_proj = nn.Linear(h, 2 * e, bias=False)
        self.x_proj = nn.Linear(e, r + 2 * n, bias=False)
        self.dt_proj = nn.Linear(r, e)
        self.out_proj = nn.Linear(e, h, bias=False)

    def forward(self, u):
        B, T, _ = u.shape
        x, z = self.in_proj(u).chunk(2, dim=-1)
        v = F.silu(self.conv1d(x.transpose(1, 2))[..., :T]).transpose(1, 2)
        dt, b, c = self.x_proj(v).split([self.r, self.n, self.n], dim=-1)
        delta = F.softplus(self.dt_proj(dt))
        A = -torch.exp(self.A_log)
        s = torch.zeros(B, self.e, self.n, device=v.device)
        ys = []
        for t in range(T):
            s = torch.exp(delta[:, t, :, None] * A) * s + delta[:, t, :, None] * b[:, t, None, :] * v[:, t, :, None]
            ys.append((s * c[:, t, None, :]).sum(-1) + self.D * v[:, t])
        y = torch.stack(ys, dim=1) * F.silu(z)
        return self.out_proj(y)


class MambaBlock(nn.Module):
    def __init__(self, h, n):
        super().__init__()
        self.norm, self.mixer = RMSNorm(h, 1e-5), MambaMixer(h, n)

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class Mamba(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["hidden_size"]
        self.embeddings = nn.Embedding(50280, h)  # unused
        self.layers = nn.ModuleList(MambaBlock(h, cfg.get("state_size", 16))
                                    for _ in range(cfg["num_hidden_layers"]))
        self.norm_f = RMSNorm(h, 1e-5)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm_f(x)


class InContextModel(nn.Module):
    """§3.1-3.2: interleave x and zero-widened y tokens, read the head at the x tokens."""

    def __init__(self, cfg):
        super().__init__()
        m = cfg["model"]
        self.input = nn.Linear(m["n_in_dims"], m.get("hidden_size", m.get("n_embd")), bias=False)
        if m["family"] == "Mamba":
            self.backbone = Mamba(m)
        elif m["family"] == "GPT2":
            self.transformer = Gpt2(m)
        else:
            pe = (m.get("rope_scaling") or {}).get("type", "rope")
            self.transformer = Llama(m, pe)
        self.output = nn.Linear(m.get("hidden_size", m.get("n_embd")), 1, bias=False)

    def forward(self, xs, ys):
        B, N, D = xs.shape
        wide = torch.cat((ys.unsqueeze(-1), torch.zeros(B, N, D - 1, device=xs.device)), dim=-1)
        z = torch.stack((xs, wide), dim=2).reshape(B, 2 * N, D)
        body = self.backbone if hasattr(self, "backbone") else self.transformer
        return self.output(body(self.input(z)))[:, ::2, 0]


def config_for(pe):
    """A flattened run config as the reference writes it (§5.3), shared rope_scaling dict."""
    task = {"data": "gaussian", "name": "linear_regression",
            "curriculum": {"dims": {"start": 2, "end": 3, "increment": 1, "interval": 100},
                           "points": {"start": 4, "end": 6, "increment": 1, "interval": 100}}}
    training = {"learning_rate": 3.0e-4, "weight_decay": 0, "adam_beta1": 0.9, "adam_beta2": 0.999,
                "adam_epsilon": 8.0e-08, "max_grad_norm": 1.0, "max_steps": 1000, "warmup_ratio": 0.03,
                "logging_steps": 10, "save_steps": 500, "per_device_train_batch_size": 64}
    cfg = {"task": task, "training": training,
           "wandb": {"project": "In-Context Function Learning", "entity": None, "mode": "offline"},
           "max_length": 16, "wandb_id": "fx" + pe.replace("-", "")}
    if pe == "mamba":
        cfg["model"] = {"type": "ssm", "family": "Mamba", "max_length": ["inf"], "hidden_size": 32,
                        "state_size": 4, "num_hidden_layers": 2, "n_in_dims": 3}
        cfg["max_length"] = float("inf")
    elif pe == "gpt2":
        cfg["model"] = {"type": "decoder", "family": "GPT2", "max_length": [16], "n_embd": 32,
                        "n_layer": 2, "n_head": 4, "n_positions": 16, "n_in_dims": 3}
    else:
        cfg["model"] = {"type": "decoder", "family": "Llama2", "max_length": [16], "hidden_size": 32,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_act": "silu",
                        "rope_theta": 10000, "n_in_dims": 3, "max_position_embeddings": 16,
                        "intermediate_size": 128}
        if pe in ("linear", "dynamic"):  # stock Hugging Face scaling: no patch
            cfg["model"]["rope_scaling"] = {"type": pe, "factor": 2.5}
        elif pe != "rope":
            patch = {"yarn": "yarn", "dynamic-yarn": "yarn"}.get(pe, pe)
            scaling = {"type": pe, "factor": 2.5}
            cfg["patch"] = {"name": patch, "rope_scaling": scaling}
            cfg["model"]["name"] = patch
            cfg["model"]["rope_scaling"] = scaling  # the same object: YAML anchor, as in §5.4
    return cfg


def make(out, pe):
    torch.manual_seed(1234)
    cfg = config_for(pe)
    model = InContextModel(cfg)
    with torch.no_grad():  # weights large enough that the predictions are O(1)
        for name, p in model.named_parameters():
            if p.dim() >= 2 and "embed" not in name and "wte" not in name:
                p.normal_(0, 0.3)
            elif name.endswith("bias") or name.endswith("D"):
                p.normal_(0, 0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    xs, ys = torch.randn(8, 6, 3), torch.randn(8, 6)
    for _ in range(2):  # a real optimizer state, as the reference saves it
        opt.zero_grad()
        F.mse_loss(model(xs, ys), ys).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        xs, ys = torch.randn(5, 6, 3), torch.randn(5, 6)
        pred = model(xs, ys)
    torch.save({"model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "train_step": 1}, f"{out}/state.pt")
    with open(f"{out}/config.yaml", "w") as f:
        yaml.dump(cfg, f)
    curve = {"mean": [1.0, 0.5, 0.25], "std": [0.1] * 3, "bootstrap_low": [0.9, 0.4, 0.2],
             "bootstrap_high": [1.1, 0.6, 0.3]}
    with open(f"{out}/metrics.json", "w") as f:
        json.dump({"standard": {"RoPE": curve, "Least Squares": curve}}, f, indent=2)
    torch.save({"xs": xs, "ys": ys, "pred": pred}, f"{out}/fixture.pt")


def check(run_dir, fixture):
    with open(f"{run_dir}/config.yaml") as f:
        cfg = yaml.safe_load(f)
    model = InContextModel(cfg)
    state = torch.load(f"{run_dir}/state.pt")
    model.load_state_dict(state["model_state_dict"], strict=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    opt.load_state_dict(state["optimizer_state_dict"])  # must be torch's own layout
    # torch.optim matches moments to parameters by position only: check they fit by shape.
    for name, p in model.named_parameters():
        if p in opt.state:
            for moment in ("exp_avg", "exp_avg_sq"):
                if opt.state[p][moment].shape != p.shape:
                    print(f"{moment} of {name} has shape {tuple(opt.state[p][moment].shape)}")
                    return 1
    model.eval()
    fx = torch.load(fixture)
    with torch.no_grad():
        pred = model(fx["xs"], fx["ys"])
    diff = (pred - fx["pred"]).abs().max().item()
    model.train()  # and training goes on from it: one optimizer step
    opt.zero_grad()
    F.mse_loss(model(fx["xs"], fx["ys"]), fx["ys"]).backward()
    opt.step()
    print(f"max |prediction difference| = {diff:.3g} (train_step {state['train_step']})")
    return 0 if diff <= 1e-5 else 1


def damage(src, dst, kind):
    state = torch.load(f"{src}/state.pt")
    sd = state["model_state_dict"]
    if kind == "rename-key":
        sd["transformer.layers.1.mlp.gate.weight"] = sd.pop("transformer.layers.1.mlp.gate_proj.weight")
    elif kind == "wrong-shape":
        sd["transformer.layers.0.self_attn.k_proj.weight"] = torch.zeros(32, 16)
    elif kind == "bad-optimizer":
        state["optimizer_state_dict"]["param_groups"][0]["params"].pop()
    elif kind == "foreign-object":
        state["train_step"] = torch.nn.Linear(2, 2)
    elif kind == "nan-weight":
        sd["transformer.layers.0.mlp.up_proj.weight"][3, 5] = float("nan")
    elif kind == "negative-step":
        state["train_step"] = -5
    elif kind == "step-past-max":
        state["train_step"] = 5000  # the config's max_steps is 1000
    elif kind == "float-step":
        state["train_step"] = 1.5
    torch.save(state, f"{dst}/state.pt", _use_new_zipfile_serialization=kind != "legacy")


def run_one(words):
    """One command's words -> its exit code (a usage error is 2)."""
    if len(words) == 3 and words[0] == "make":
        make(words[1], words[2])
        return 0
    if len(words) == 4 and words[0] == "damage":
        damage(words[1], words[2], words[3])
        return 0
    if len(words) == 3 and words[0] == "check":
        return check(words[1], words[2])
    print(f"not a command: {words}")
    return 2


def batch(path):
    import contextlib
    import io
    import traceback
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    for i, line in enumerate(lines):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                code = run_one(line.split("\t"))
            except Exception:  # one command's failure is its line's, not the batch's
                traceback.print_exc(file=out)
                code = 1
        text = out.getvalue().strip().replace("\t", " ").replace("\n", " | ")
        print(f"{i}\t{code}\t{text}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "batch":
        batch(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "damage":
        damage(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
