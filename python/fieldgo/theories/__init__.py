"""Built-in theories, each a function returning a :class:`fieldgo.Theory`.

Written only with fieldgo's public API; each docstring gives the energy functional.
Theories whose soliton_solver versions solve an auxiliary Poisson equation (chiral
magnet with demagnetisation, liquid crystal electrostatics, Chern–Simons) wait for
engine support.
"""

from .baby_skyrme import baby_skyrme, POTENTIALS as BABY_SKYRME_POTENTIALS
from .abelian_higgs import abelian_higgs
from .bose_einstein_condensate import bose_einstein_condensate
from .anisotropic_gl import anisotropic_gl
from .spin_triplet import spin_triplet
from .ferromagnetic_superconductor import ferromagnetic_superconductor

__all__ = ["baby_skyrme", "abelian_higgs", "bose_einstein_condensate", "anisotropic_gl",
           "spin_triplet", "ferromagnetic_superconductor", "BABY_SKYRME_POTENTIALS", "ALL"]

# name -> factory, for tests and tools that iterate over every built-in theory
ALL = {f.__name__: f for f in (baby_skyrme, abelian_higgs, bose_einstein_condensate,
                               anisotropic_gl, spin_triplet, ferromagnetic_superconductor)}
