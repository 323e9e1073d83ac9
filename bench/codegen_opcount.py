"""Operation counts of generated gradients: the expanded Euler-Lagrange form before and
after CSE, and the straight-line program fg_gradient is emitted as.

    PYTHONPATH=python .venv/bin/python bench/codegen_opcount.py

Counts are sympy.count_ops over the gradient components (before), over the temporaries
plus the reduced outputs of sympy.cse (after), and over the statements and outputs of
derive.euler_lagrange_program (program).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import sympy  # noqa: E402

from fieldgo import theories  # noqa: E402
from fieldgo.frontend import codegen, derive  # noqa: E402


def program_ops(st) -> int:
    statements, outputs = derive.euler_lagrange_program(st.partials, st.symbols)
    return sum(sympy.count_ops(r) for _, r in statements) + sum(sympy.count_ops(e) for e in outputs)


def main():
    print("| theory | ops before CSE | ops after CSE | program |")
    print("|---|---:|---:|---:|")
    cases = [(f"baby_skyrme({pot!r})", theories.baby_skyrme(pot, N=3)) for pot in theories.BABY_SKYRME_POTENTIALS]
    cases += [(name, theories.ALL[name]()) for name in ("abelian_higgs", "skyrme", "faddeev_skyrme")]
    for label, th in cases:
        st = th.symbolic()
        before, after = codegen.op_counts(st.gradient)
        print(f"| {label} | {before} | {after} | {program_ops(st)} |")


if __name__ == "__main__":
    main()
