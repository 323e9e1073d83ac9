"""Operation count of the generated Baby Skyrme continuum gradient, before and after CSE.

    PYTHONPATH=python .venv/bin/python bench/codegen_opcount.py

Counts are sympy.count_ops over the three gradient components (before) and over the
temporaries plus the reduced outputs of sympy.cse (after), as emitted in fg_gradient.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from fieldgo import theories  # noqa: E402
from fieldgo.frontend import codegen  # noqa: E402


def main():
    print("| theory | function | ops before CSE | ops after CSE |")
    print("|---|---|---:|---:|")
    for pot in theories.BABY_SKYRME_POTENTIALS:
        st = theories.baby_skyrme(pot, N=3).symbolic()
        for label, exprs in (
            ("fg_gradient", st.gradient),
            ("fg_partials", st.partials.de_dphi + st.partials.de_ddx + st.partials.de_ddy),
        ):
            before, after = codegen.op_counts(exprs)
            print(f"| baby_skyrme({pot!r}) | {label} | {before} | {after} |")


if __name__ == "__main__":
    main()
