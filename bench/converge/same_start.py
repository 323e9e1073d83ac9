"""Time to a converged Baby Skyrme skyrmion from the SAME initial field as
soliton_solver: charge 1, 256^2, box 20, max|grad| < tol.

    python same_start.py ss  OUT.npz [tol] [cap_s]   # soliton_solver: dump its initial field, then flow
    python same_start.py fg  OUT.npz [tol]           # fieldgo from that field (run as a fresh process)
    python same_start.py both OUT.npz [tol] [cap_s]  # both, fieldgo timed from its process start

The ss half uses the side-by-side harness (soliton_solver_baseline.py beside this
file, its package under --src .): the baby_skyrme_example set-up (Neel ansatz,
dt 0.006, energy arrest), its Field laid out as [a][x][y] (idx_field), its grid
holding the coordinates. The fg half loads that field on the same lattice
(spacing lsx, origin the first grid point, fixed boundary) and relaxes it with
fieldgo's defaults (power arrest, stiffness-capped dt) on the best backend.
"""

import json
import os
import subprocess
import sys
import time


def run_ss(out, tol, cap):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import numpy as np
    import soliton_solver_baseline as B

    B.numpy_compat_shims()
    B.setup_paths(here)
    from numba import cuda

    t0 = time.perf_counter()
    sim = B.build("baby_skyrme_example", 256)
    nx, ny, nf = int(sim.p_i_h[0]), int(sim.p_i_h[1]), 3
    field = sim.Field.copy_to_host().reshape(nf, nx, ny).transpose(0, 2, 1)  # -> (a, y, x)
    grid = sim.grid.copy_to_host().reshape(-1, nx, ny).transpose(0, 2, 1)
    h = float(sim.rp.lsx)
    np.savez(
        out,
        field=np.ascontiguousarray(field),
        x0=grid[0, 0, 0],
        y0=grid[1, 0, 0],
        h=h,
        x1=grid[0, 0, -1],
        y1=grid[1, -1, 0],
    )
    E = float(sim.observables()["energy"])
    E0 = E
    steps, err, first = 0, float("inf"), None
    while time.perf_counter() - t0 < cap:
        E, err = sim.step(E)
        steps += 1
        if first is None:
            cuda.synchronize()
            first = time.perf_counter() - t0
        if abs(err) < tol:
            break
    cuda.synchronize()
    obs = {k: float(v) for k, v in sim.observables().items()}
    return dict(
        who="soliton_solver",
        steps=steps,
        err=float(err),
        converged=bool(abs(err) < tol),
        E0=E0,
        E=obs["energy"],
        Q=obs.get("skyrmion_number"),
        first_step_s=first,
        wall_s=time.perf_counter() - t0,
        h=h,
    )


def run_fg(path, tol):
    t0 = time.perf_counter()
    ph = {}

    def mark(name):
        ph[name] = round(time.perf_counter() - t0, 4)

    import numpy as np

    mark("import numpy")
    import fieldgo as fg

    mark("import fieldgo")

    d = np.load(path)
    field, h = d["field"], float(d["h"])
    n = field.shape[-1]
    sim = fg.Simulation(fg.theories.baby_skyrme(), grid=(n, n), spacing=h, origin=(float(d["x0"]), float(d["y0"])))
    mark("Simulation")
    sim.set_field(field)
    E0 = sim.energy()
    mark("set_field + energy")
    hist = sim.minimize(tol=tol, max_steps=1_000_000, progress=False)
    mark("minimize")
    last = hist.slice(hist.num_rows - 1).to_pylist()[0]
    E, Q = sim.energy(), sim.integral("charge")
    mark("energy + charge")
    return dict(
        who="fieldgo",
        backend=sim.describe()["backend"],
        steps=int(last["step"]),
        converged=bool(last["max_grad"] < tol),
        max_grad=float(last["max_grad"]),
        E0=E0,
        E=E,
        Q=Q,
        wall_in_process_s=time.perf_counter() - t0,
        phases_s_from_start=ph,
    )


def main():
    mode, out = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-6
    cap = float(sys.argv[4]) if len(sys.argv) > 4 else 100.0
    if mode in ("ss", "both"):
        print("SAME_START " + json.dumps(run_ss(out, tol, cap)), flush=True)
    if mode == "fg":
        print("SAME_START " + json.dumps(run_fg(out, tol)), flush=True)
    if mode == "both":
        t = time.perf_counter()
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "fg", out, str(tol)], capture_output=True, text=True
        )
        wall = time.perf_counter() - t
        line = [ln for ln in p.stdout.splitlines() if ln.startswith("SAME_START ")]
        if p.returncode or not line:
            print(p.stdout, p.stderr, file=sys.stderr)
            sys.exit(1)
        r = json.loads(line[-1][len("SAME_START ") :])
        r["wall_from_process_start_s"] = wall
        print("SAME_START " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
