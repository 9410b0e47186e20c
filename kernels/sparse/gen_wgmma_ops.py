# Writes wgmma_ops.cuh beside this file (the inline-asm wrappers of the wgmma shapes the sparse kernel uses).
import os
def ss(n, ty):
    nr = n // 2
    regs = ",".join(f"%{i}" for i in range(nr))
    cons = ", ".join(f'"+f"(d[{i}])' for i in range(nr))
    return f'''  __device__ __forceinline__ static void ss_n{n}(float (&d)[{nr}], std::uint64_t da, std::uint64_t db, int acc) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nr+2}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} {{{regs}}}, %{nr}, %{nr+1}, p, 1, 1, 0, 0;\\n}}\\n"
        : {cons}
        : "l"(da), "l"(db), "r"(acc));
  }}
'''
def rs(n, ty):
    nr = n // 2
    regs = ",".join(f"%{i}" for i in range(nr))
    cons = ", ".join(f'"+f"(d[{i}])' for i in range(nr))
    return f'''  __device__ __forceinline__ static void rs_n{n}_tb(float (&d)[{nr}], const std::uint32_t (&a)[4], std::uint64_t db) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nr+5}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} {{{regs}}}, {{%{nr},%{nr+1},%{nr+2},%{nr+3}}}, %{nr+4}, p, 1, 1, 1;\\n}}\\n"
        : {cons}
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
  }}
'''
out = ['''#pragma once
// Hopper warpgroup MMA wrappers (sm_90a only), written by gen_wgmma_ops.py beside this file.
// ss_n64: D(64x64) (+)= A(smem desc, K-major) * B(smem desc, K-major), scale-d chosen at run time.
// rs_n256_tb: D(64x256) += A(registers, the m16n8k16 A-fragment layout per warp) * B(smem desc,
// N-major: imm-trans-b = 1). Accumulator layout per warp: the m16n8 C fragment repeated over N/8.
#include <cstdint>

namespace kparity::kernels::sparse::dev {

template <bool kBf16> struct Wgmma;
''']
for ty, flag in (("bf16", "true"), ("f16", "false")):
    out.append(f"template <> struct Wgmma<{flag}> {{\n")
    out.append(ss(64, ty))
    out.append(rs(256, ty))
    out.append("};\n\n")
out.append("}  // namespace kparity::kernels::sparse::dev\n")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "wgmma_ops.cuh"), "w").write("".join(out))
