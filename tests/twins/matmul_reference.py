"""PyTorch twin of src/exact/matmul.cpp: the exact bits torch 1.13 gives for the course's products.

Usage: /usr/bin/python3 tests/twins/matmul_reference.py OUT_DIR

Writes OUT_DIR/manifest.json and one raw little-endian float32 file per tensor:
  {"cases": [{"name": str,
              "op": "linear" | "bmm" | "bmm_nt" | "matmul" | "heads_qk" | "heads_pv",
              "H": int,                                   # heads_qk only
              "inputs": [{"file": str, "shape": [...]}],  # linear: x, weight[, bias]
              "output": {"file": str, "shape": [...]}}]}
The C++ test (tests/test_matmul.cpp) reads the inputs, runs its own function and
requires every output bit to match.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    cases = []

    def save(name, t):
        t = t.detach().contiguous().to(torch.float32)
        path = os.path.join(out_dir, name + ".f32")
        t.numpy().tofile(path)
        return {"file": path, "shape": list(t.shape)}

    def add(name, op, inputs, output, **extra):
        case = {"name": name, "op": op,
                "inputs": [save(f"{name}_in{i}", t) for i, t in enumerate(inputs)],
                "output": save(f"{name}_out", output)}
        case.update(extra)
        cases.append(case)

    def lin(in_f, out_f):
        m = torch.nn.Linear(in_f, out_f)
        return m.weight.detach(), m.bias.detach()

    with torch.no_grad():
        # --- nn.functional.linear: the fused addmm paths and the matmul + add_ paths ---
        x = torch.randn(1, 5, 768)
        w, b = lin(768, 64)
        add("linear_1x5x768_to_64", "linear", [x, w, b], F.linear(x, w, b))
        w, b = lin(768, 3072)
        add("linear_1x5x768_to_3072", "linear", [x, w, b], F.linear(x, w, b))
        w2, b2 = lin(3072, 768)
        h = torch.randn(1, 5, 3072)
        add("linear_1x5x3072_to_768", "linear", [h, w2, b2], F.linear(h, w2, b2))
        x = torch.randn(2, 7, 256)
        w, b = lin(256, 128)
        add("linear_2x7x256_to_128", "linear", [x, w, b], F.linear(x, w, b))
        x2 = torch.randn(7, 256)
        add("linear_2d_7x256_to_128", "linear", [x2, w, b], F.linear(x2, w, b))
        add("linear_nobias_2x7x256", "linear", [x, w], F.linear(x, w))
        add("linear_nobias_2d_7x256", "linear", [x2, w], F.linear(x2, w))
        x4 = torch.randn(2, 3, 5, 256)
        add("linear_4d_2x3x5x256", "linear", [x4, w, b], F.linear(x4, w, b))
        x1 = torch.randn(256)
        add("linear_1d_256", "linear", [x1, w, b], F.linear(x1, w, b))
        w1, b1 = lin(256, 1)
        add("linear_out1_2x7x256", "linear", [x, w1, b1], F.linear(x, w1, b1))
        # KV-cache decoding: a single token
        xt = torch.randn(1, 1, 768)
        w, b = lin(768, 768)
        add("linear_1x1x768_to_768", "linear", [xt, w, b], F.linear(xt, w, b))
        # a 1-D and a 4-D input whose K spans several of sgemm's K blocks: torch 1.13 runs mm and
        # then add_(bias), 2.x one addmm whose C starts at the bias, and the sums round apart
        # (ch05's b = ff.w_2(ff.w_1.bias), F = 2048)
        w, b = lin(2048, 512)
        x1 = torch.randn(2048)
        add("linear_1d_2048_to_512", "linear", [x1, w, b], F.linear(x1, w, b))
        x4 = torch.randn(2, 1, 3, 2048)
        add("linear_4d_2x1x3x2048_to_512", "linear", [x4, w, b], F.linear(x4, w, b))

        # --- article 001: scores = bmm(q, k^T) / sqrt(dim_k), weights, bmm(weights, v) ---
        emb = torch.randn(1, 5, 768)
        scores = torch.bmm(emb, emb.transpose(1, 2))
        add("bmm_nt_scores_1x5x768", "bmm_nt", [emb, emb], scores)
        weights = F.softmax(scores / math.sqrt(768), dim=-1)
        add("bmm_weights_v_1x5x768", "bmm", [weights, emb], torch.bmm(weights, emb))
        # the small naive-kernel branch (K*M*N < 400) and both sides of the threshold
        a, c = torch.randn(1, 3, 3), torch.randn(1, 3, 4)
        add("bmm_small_1x3x3_3x4", "bmm", [a, c], torch.bmm(a, c))
        a, c = torch.randn(3, 7, 8), torch.randn(3, 8, 7)  # 392 < 400
        add("bmm_small_3x7x8_8x7", "bmm", [a, c], torch.bmm(a, c))
        a, c = torch.randn(3, 5, 8), torch.randn(3, 8, 10)  # 400: BLAS
        add("bmm_blas_3x5x8_8x10", "bmm", [a, c], torch.bmm(a, c))
        a, c = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
        add("bmm_nt_small_2x3x4_5x4", "bmm_nt", [a, c], torch.bmm(a, c.transpose(1, 2)))
        a, c = torch.randn(4, 9, 64), torch.randn(4, 11, 64)
        add("bmm_nt_4x9x64_11x64", "bmm_nt", [a, c], torch.bmm(a, c.transpose(1, 2)))
        a = torch.randn(1, 1, 768)
        add("bmm_nt_1tok_1x1x768", "bmm_nt", [a, emb], torch.bmm(a, emb.transpose(1, 2)))

        # --- article 002: per-head views, (1,6,256) -> 8 heads of 32 ---
        def heads(name, B, T, S, C, H):
            D = C // H
            q, k, v = torch.randn(B, T, C), torch.randn(B, S, C), torch.randn(B, S, C)
            q4 = q.view(B, -1, H, D).transpose(1, 2)
            k4 = k.view(B, -1, H, D).transpose(1, 2)
            v4 = v.view(B, -1, H, D).transpose(1, 2)
            s = torch.matmul(q4, k4.transpose(-2, -1))
            add(name + "_qk", "heads_qk", [q, k], s, H=H)
            p = F.softmax(s / math.sqrt(D), dim=-1)
            add(name + "_pv", "heads_pv", [p, v], torch.matmul(p, v4))

        heads("heads_self_1x6x256_h8", 1, 6, 6, 256, 8)
        heads("heads_cross_t5_s6_h8", 1, 5, 6, 256, 8)
        heads("heads_batch2_t5_s6_h8", 2, 5, 6, 256, 8)      # torch copies here (reshape)
        heads("heads_1tok_s6_h8", 1, 1, 6, 256, 8)           # D*T*S = 192: naive kernel
        heads("heads_1tok_s5_h12", 1, 1, 5, 768, 12)         # 320: naive kernel
        heads("heads_1tok_s7_h12", 1, 1, 7, 768, 12)         # 448: BLAS
        heads("heads_bert_1x5x768_h12", 1, 5, 5, 768, 12)

        # --- torch.matmul on plain tensors: mm, folding, broadcasting ---
        def mm_case(name, sa, sb):
            a, c = torch.randn(*sa), torch.randn(*sb)
            add(name, "matmul", [a, c], torch.matmul(a, c))

        mm_case("matmul_2d_5x768_768x64", (5, 768), (768, 64))
        mm_case("matmul_2d_1x40_40x1", (1, 40), (40, 1))
        mm_case("matmul_2d_30x1_1x20", (30, 1), (1, 20))
        mm_case("matmul_3d_2d_fold", (2, 7, 256), (256, 33))
        mm_case("matmul_4d_2d_fold", (2, 3, 5, 32), (32, 17))
        mm_case("matmul_2d_3d", (5, 40), (3, 40, 21))
        mm_case("matmul_2d_4d", (5, 40), (2, 3, 40, 21))
        mm_case("matmul_3d_3d", (4, 6, 32), (4, 32, 9))
        mm_case("matmul_3d_bcast_left", (1, 6, 32), (3, 32, 9))
        mm_case("matmul_3d_bcast_right", (3, 6, 32), (1, 32, 9))
        mm_case("matmul_4d_4d", (2, 3, 6, 32), (2, 3, 32, 9))
        mm_case("matmul_4d_4d_bcast", (2, 1, 6, 32), (1, 3, 32, 9))
        mm_case("matmul_4d_3d", (2, 3, 6, 32), (3, 32, 9))
        mm_case("matmul_3d_4d_small", (3, 2, 4), (2, 3, 4, 5))
        mm_case("matmul_1d_2d", (40,), (40, 21))

    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
