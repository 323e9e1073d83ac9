"""make demo: relax a charge-1 Baby Skyrme skyrmion on the best backend available.

kappa = 1, mass = 1, standard potential, 256 x 256 sites, box 20. Prints energy,
charge, steps and time; writes out/energy_density.png, out/charge_density.png and
out/skyrmion.arrow (field, velocity, history, theory; ``fg.load`` resumes it).
"""

import pathlib
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fieldgo as fg  # noqa: E402

OUT = pathlib.Path("out")


def main():
    OUT.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    theory = fg.theories.baby_skyrme(potential="standard", kappa=1.0, mass=1.0)
    n = 256
    sim = fg.Simulation(theory, grid=(n, n), spacing=20 / (n - 1), boundary="fixed", backend="auto")
    sim.set_field(fg.initial.skyrmion(charge=1, size=1.0))
    t1 = time.perf_counter()
    hist = sim.minimize(tol=1e-8, max_steps=20_000)
    t2 = time.perf_counter()
    last = hist.slice(hist.num_rows - 1).to_pylist()[0]
    print(f"backend        {sim.backend}")
    print(f"energy         {sim.energy():.10f}   (E / 4 pi = {sim.energy() / (4 * 3.141592653589793):.8f})")
    print(f"charge         {sim.integral('charge'):.8f}")
    print(f"steps          {last['step']}   max |grad| = {last['max_grad']:.2e}")
    print(f"time           {t2 - t1:.2f} s relaxing, {t1 - t0:.2f} s set-up (compile included)")
    extent = sim.lattice.extent
    for name, title, cmap in (("energy", "energy density", "inferno"), ("charge", "charge density", "RdBu_r")):
        d = sim.density(name).numpy()[0]
        fig, ax = plt.subplots(figsize=(5, 4.2))
        lim = abs(d).max()
        im = ax.imshow(
            d, origin="lower", extent=extent, cmap=cmap, **({"vmin": -lim, "vmax": lim} if name == "charge" else {})
        )
        ax.set(title=f"Baby Skyrme, B = 1: {title}", xlabel="x", ylabel="y", xlim=(-6, 6), ylim=(-6, 6))
        fig.colorbar(im, ax=ax)
        fig.tight_layout()
        fig.savefig(OUT / f"{name}_density.png", dpi=110)
        plt.close(fig)
    sim.save(OUT / "skyrmion.arrow")
    print(f"wrote          {OUT / 'energy_density.png'}, {OUT / 'charge_density.png'}, {OUT / 'skyrmion.arrow'}")


if __name__ == "__main__":
    main()
