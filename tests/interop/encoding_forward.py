#!/usr/bin/python3
"""An independent float64 forward of LenGen's in-context model for six position encodings, each
written out here from its paper without LenGen code, compared with LenGen's predictions.

  encoding_forward.py FIXTURE_JSON

FIXTURE_JSON: {"pe": "t5" | "kerple_log" | "kerple_power" | "sandwich" | "cope" | "xpos",
"hidden", "layers", "heads", "intermediate", "rms_norm_eps", "rope_theta", the pe's block
("t5": {"num_buckets", "max_distance"}, "sandwich": {"dim"}, "xpos": {"scale_base"},
"cope": {"npos_max"}), "state": {name: {"shape", "data" (flat, row-major)}} with HF Llama's
names (input.weight, output.weight, transformer.norm.weight, transformer.layers.{l}.*, the pe's
parameters under transformer.layers.{l}.self_attn.rotary_emb.), "xs" [B][N][Din], "ys" [B][N],
"pred" [B][N] (LenGen's predictions at the x tokens), "tolerance"}.

Model: tokens z[2i] = x_i, z[2i+1] = (y_i, 0, ..); h = z W_in^T; pre-norm Llama layers (RMSNorm,
causal multi-head attention without biases, SwiGLU MLP); final RMSNorm, output.weight; the
prediction for example i is read at token 2i. Position encodings (n = i - j >= 0, heads h = 1..nh):
  t5            table[bucket(n), h], causal bucketing of T5 (Raffel et al. 2020) / Mesh TF,
                transformers' T5Attention._relative_position_bucket when it is installed
  kerple_log    -p_h ln(1 + a_h n);  kerple_power  -a_h n^p_h   (Chi et al. 2022)
  sandwich      (sum_{k=1}^{d'/2} cos(n / 10000^(2k/d')) - d'/2) * nh / (8h)   (Chi et al. 2023)
  xpos          rotate-half RoPE, query scaled by zeta^(i/gamma), key by zeta^(-j/gamma),
                zeta_m = (2m/d + 0.4) / 1.4   (Sun et al. 2023)
  cope          gates sigmoid(z_ij), p_ij = sum_{t=j}^{i} g_it clamped to P-1, bias = q_i.e[:, p]
                interpolated between floor and ceil of p   (Golovneva et al. 2024)
Prints one summary line; exits 0 when every |ours - lengen| <= tolerance * max(1, |ours|) or
within 4x the distance of the same forward run in float32 from ours (float32's own rounding,
which sharp attention over long prompts amplifies), 1 otherwise, 2 on a bad fixture or an
unknown pe.
"""
import json
import math
import sys

import torch

F64 = torch.float64
PES = ("t5", "kerple_log", "kerple_power", "sandwich", "cope", "xpos")


class BadFixture(Exception):
    pass


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def t5_buckets(n, num_buckets, max_distance):
    """Causal T5 bucketing of n = query - key >= 0 (Mesh TensorFlow's _relative_position_bucket)."""
    try:
        from transformers.models.t5.modeling_t5 import T5Attention
        import transformers
        bucket = T5Attention._relative_position_bucket(-n, bidirectional=False,
                                                       num_buckets=num_buckets, max_distance=max_distance)
        return bucket, "transformers " + transformers.__version__ + " T5Attention._relative_position_bucket"
    except ImportError:
        pass
    max_exact = num_buckets // 2
    # Half the buckets hold one distance each; the rest are log-spaced up to max_distance and
    # every farther distance falls in the last bucket (float32, as transformers and Mesh TF).
    ratio = torch.log(n.clamp(min=max_exact).float() / max_exact) / math.log(max_distance / max_exact)
    large = (max_exact + (ratio * (num_buckets - max_exact)).to(torch.long)).clamp(max=num_buckets - 1)
    return torch.where(n < max_exact, n, large), "the T5 paper's / Mesh TF bucketing (transformers not installed)"


def static_bias(fx, pe, layer, T):
    """[nh, T, T] additive bias of the query-key-independent encodings (t5, kerple, sandwich)."""
    nh = fx["heads"]
    n = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).clamp(min=0)        # query - key
    if pe == "t5":
        bucket, oracle = t5_buckets(n, fx["t5"]["num_buckets"], fx["t5"]["max_distance"])
        table = layer["relative_attention_bias.weight"]                            # [B, nh]
        return table[bucket].permute(2, 0, 1), oracle
    if pe in ("kerple_log", "kerple_power"):
        p = layer["bias_p"][:, None, None]
        a = layer["bias_a"][:, None, None]
        nf = n.to(F64)
        if pe == "kerple_log":
            return -p * torch.log1p(a * nf), "KERPLE log kernel -p ln(1 + a n) (Chi et al. 2022)"
        return -a * nf.pow(p), "KERPLE power kernel -a n^p (Chi et al. 2022)"
    dp = fx["sandwich"]["dim"]
    k = torch.arange(1, dp // 2 + 1, dtype=F64)
    s = torch.cos(n.to(F64)[..., None] / 10000.0 ** (2 * k / dp)).sum(-1)             # p_i . p_j
    h = torch.arange(1, nh + 1, dtype=F64)[:, None, None]
    return (s - dp / 2) * nh / (8 * h), f"Sandwich (Chi et al. 2023), d'={dp}, scaled nh/(8h)"


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def xpos(q, k, theta, gamma):
    """RoPE in the rotate-half pairing, then XPos' per-pair scale zeta^(+i/gamma) on queries and
    zeta^(-j/gamma) on keys, so that q_i.k_j carries zeta^((i - j)/gamma)."""
    T, d = q.shape[-2], q.shape[-1]
    m = torch.arange(d // 2, dtype=F64)
    pos = torch.arange(T, dtype=F64)[:, None]
    ang = pos * theta ** (-2 * m / d)                                             # [T, d/2]
    cos, sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
    zeta = (2 * m / d + 0.4) / 1.4
    scale = zeta ** ((pos - (T - 1) / 2) / gamma)          # centred: the offset cancels in q.k
    scale = torch.cat((scale, scale), -1)                                          # [T, d]
    return (q * cos + rotate_half(q) * sin) * scale, (k * cos + rotate_half(k) * sin) / scale


def cope_bias(q, z, pos_emb):
    """CoPE: z [B, nh, T, T] scaled logits with -inf above the diagonal, q unscaled queries,
    pos_emb [d, P]. Returns the interpolated position logits [B, nh, T, T]."""
    P = pos_emb.shape[1]
    gates = torch.sigmoid(z)                                                       # 0 where masked
    pos = gates.flip(-1).cumsum(-1).flip(-1).clamp(max=P - 1)                      # sum_{t=j}^{i} g_it
    logits_int = q @ pos_emb                                                       # [B, nh, T, P]
    lo, hi = pos.floor(), pos.ceil()
    w = pos - lo
    return logits_int.gather(-1, hi.long()) * w + logits_int.gather(-1, lo.long()) * (1 - w)


def attention(fx, pe, x, lw, pw):
    B, T, H = x.shape
    nh = fx["heads"]
    d = H // nh
    split = lambda t: t.view(B, T, nh, d).transpose(1, 2)                          # [B, nh, T, d]
    q, k, v = (split(x @ lw[f"self_attn.{c}_proj.weight"].T) for c in "qkv")
    if pe == "xpos":
        q, k = xpos(q, k, fx["rope_theta"], fx["xpos"]["scale_base"])
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    z = (q @ k.transpose(-1, -2) / math.sqrt(d)).masked_fill(~causal, -math.inf)
    if pe == "cope":
        z = z + cope_bias(q, z, pw["pos_emb"])
    elif pe != "xpos":
        z = z + static_bias(fx, pe, pw, T)[0]
    z = z.masked_fill(~causal, -math.inf)
    out = (torch.softmax(z, -1) @ v).transpose(1, 2).reshape(B, T, H)
    return out @ lw["self_attn.o_proj.weight"].T


def forward(fx, state, xs, ys):
    """Predictions [B, N] at the x tokens."""
    pe, eps = fx["pe"], fx["rms_norm_eps"]
    B, N, Din = xs.shape
    z = torch.zeros(B, 2 * N, Din, dtype=F64)
    z[:, 0::2] = xs
    z[:, 1::2, 0] = ys
    h = z @ state["input.weight"].T
    for l in range(fx["layers"]):
        pre = f"transformer.layers.{l}."
        lw = {key[len(pre):]: t for key, t in state.items() if key.startswith(pre)}
        pw = {key[len("self_attn.rotary_emb."):]: t for key, t in lw.items()
              if key.startswith("self_attn.rotary_emb.")}
        a = h + attention(fx, pe, rms_norm(h, lw["input_layernorm.weight"], eps), lw, pw)
        m = rms_norm(a, lw["post_attention_layernorm.weight"], eps)
        mlp = torch.nn.functional.silu(m @ lw["mlp.gate_proj.weight"].T) * (m @ lw["mlp.up_proj.weight"].T)
        h = a + mlp @ lw["mlp.down_proj.weight"].T
    h = rms_norm(h, state["transformer.norm.weight"], eps)
    return (h @ state["output.weight"].T)[:, 0::2, 0]


def load(path):
    """Parses and checks the fixture; raises BadFixture on anything missing or misshapen."""
    try:
        fx = json.load(open(path))
        pe = fx["pe"]
        if pe not in PES:
            raise BadFixture("unknown pe " + repr(pe))
        H, L, nh, I = (int(fx[key]) for key in ("hidden", "layers", "heads", "intermediate"))
        fx["rms_norm_eps"], fx["rope_theta"], fx["tolerance"] = (
            float(fx["rms_norm_eps"]), float(fx["rope_theta"]), float(fx["tolerance"]))
        block = {"t5": ("num_buckets", "max_distance"), "sandwich": ("dim",),
                 "xpos": ("scale_base",), "cope": ("npos_max",)}.get(pe, ())
        for key in block:
            fx[pe][key]
        if nh <= 0 or H % nh or (pe == "xpos" and (H // nh) % 2):
            raise BadFixture(f"hidden {H} is not nh={nh} heads" + (" of an even width" if pe == "xpos" else ""))
        state = {}
        for name, t in fx["state"].items():
            state[name] = torch.tensor(t["data"], dtype=F64).reshape(t["shape"])
        xs = torch.tensor(fx["xs"], dtype=F64)
        ys = torch.tensor(fx["ys"], dtype=F64)
        pred = torch.tensor(fx["pred"], dtype=F64)
    except BadFixture:
        raise
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
        raise BadFixture(f"{type(e).__name__}: {e}")
    if xs.dim() != 3 or ys.shape != xs.shape[:2] or pred.shape != xs.shape[:2]:
        raise BadFixture(f"xs {list(xs.shape)}, ys {list(ys.shape)}, pred {list(pred.shape)}")
    d, Din = H // nh, xs.shape[2]
    want = {"input.weight": [H, Din], "output.weight": [1, H], "transformer.norm.weight": [H]}
    for l in range(L):
        pre = f"transformer.layers.{l}."
        want.update({pre + "input_layernorm.weight": [H], pre + "post_attention_layernorm.weight": [H],
                     pre + "mlp.gate_proj.weight": [I, H], pre + "mlp.up_proj.weight": [I, H],
                     pre + "mlp.down_proj.weight": [H, I]})
        want.update({pre + f"self_attn.{c}_proj.weight": [H, H] for c in "qkvo"})
        pre += "self_attn.rotary_emb."
        if pe == "t5":
            want[pre + "relative_attention_bias.weight"] = [fx["t5"]["num_buckets"], nh]
        elif pe.startswith("kerple"):
            want.update({pre + "bias_p": [nh], pre + "bias_a": [nh]})
        elif pe == "cope":
            want[pre + "pos_emb"] = [d, fx["cope"]["npos_max"]]
    for name, shape in want.items():
        if name not in state or list(state[name].shape) != shape:
            got = list(state[name].shape) if name in state else "missing"
            raise BadFixture(f"state {name}: expected {shape}, got {got}")
    return fx, state, xs, ys, pred


ORACLES = {"t5": None, "kerple_log": None, "kerple_power": None, "sandwich": None,
           "cope": "CoPE (Golovneva et al. 2024), gates sigmoid(qk/sqrt(d)), interpolated q.e[:, p]",
           "xpos": "XPos (Sun et al. 2023): rotate-half RoPE with zeta^((i-j)/gamma) per pair"}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    try:
        fx, state, xs, ys, lengen = load(sys.argv[1])
    except BadFixture as e:
        print("bad fixture: " + str(e))
        sys.exit(2)
    pe, tol = fx["pe"], fx["tolerance"]
    global F64
    with torch.no_grad():
        ours = forward(fx, state, xs, ys)
        # float32's own rounding, measured: the same forward in float32. Sharp attention over a
        # long prompt amplifies it (CoPE's count is a float32 sum of up to 2N gates), so a
        # prediction also passes within 4x the float32 forward's distance from the float64 one.
        F64 = torch.float32
        ours32 = forward(fx, {k: t.float() for k, t in state.items()}, xs.float(), ys.float()).double()
        F64 = torch.float64
        layer0 = "transformer.layers.0.self_attn.rotary_emb."
        oracle = ORACLES[pe] or static_bias(fx, pe, {k[len(layer0):]: t for k, t in state.items()
                                                     if k.startswith(layer0)}, 2)[1]
    diff = (ours - lengen).abs()
    rel = diff / ours.abs().clamp(min=1)
    slack = 4 * (ours32 - ours).abs()
    per_pos = rel.max(0).values                                                    # over prompts
    ok = bool(((rel <= tol) | (diff <= slack)).all())                              # NaN fails
    B, N = ours.shape
    print(f"{pe}: {2 * N} tokens ({B} prompts x {N} examples), {fx['layers']} layers, {fx['heads']} heads; "
          f"oracle: {oracle}; max abs difference {diff.max().item():g}; max relative difference per "
          f"position [{', '.join(f'{r:.3g}' for r in per_pos.tolist())}]; tolerance {tol:g} or 4x the "
          f"float32 forward's own error (at most {slack.max().item() / 4:g}); "
          f"{'ok' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
