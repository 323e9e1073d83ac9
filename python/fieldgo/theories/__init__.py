"""Built-in theories, each a function returning a :class:`fieldgo.Theory`.

Written only with fieldgo's public API; each docstring gives the energy functional.
The chiral magnet (demagnetisation), the liquid crystal (flexoelectric
electrostatics) and Chern–Simons–Higgs (Gauss's law) carry an auxiliary field, fixed by
its own elliptic equation (``fg.Theory(..., auxiliary=[...])``, docs/auxiliary.md).
"""

from .abelian_higgs import abelian_higgs
from .abelian_higgs_3d import abelian_higgs_3d
from .anisotropic_gl import anisotropic_gl
from .anisotropic_gl_3d import anisotropic_gl_3d
from .baby_skyrme import POTENTIALS as BABY_SKYRME_POTENTIALS
from .baby_skyrme import baby_skyrme
from .bose_einstein_condensate import bose_einstein_condensate
from .chern_simons_higgs import chern_simons_higgs
from .chiral_magnet import chiral_magnet
from .faddeev_skyrme import faddeev_skyrme
from .ferromagnetic_superconductor import ferromagnetic_superconductor
from .liquid_crystal import liquid_crystal
from .skyrme import skyrme
from .spin_triplet import spin_triplet

__all__ = [
    "baby_skyrme",
    "abelian_higgs",
    "bose_einstein_condensate",
    "anisotropic_gl",
    "spin_triplet",
    "ferromagnetic_superconductor",
    "chiral_magnet",
    "liquid_crystal",
    "chern_simons_higgs",
    "skyrme",
    "faddeev_skyrme",
    "abelian_higgs_3d",
    "anisotropic_gl_3d",
    "BABY_SKYRME_POTENTIALS",
    "ALL",
]

# name -> factory, for tests and tools that iterate over every built-in theory.
ALL = {
    f.__name__: f
    for f in (
        baby_skyrme,
        abelian_higgs,
        bose_einstein_condensate,
        anisotropic_gl,
        spin_triplet,
        ferromagnetic_superconductor,
        chiral_magnet,
        liquid_crystal,
        chern_simons_higgs,
        skyrme,
        faddeev_skyrme,
        abelian_higgs_3d,
        anisotropic_gl_3d,
    )
}
