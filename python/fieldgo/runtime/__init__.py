"""The runtime: Python's side of the Go engine.

``bridge`` is the one module that touches the gopy bridge (``fieldgo._bridge``).
On top of it: ``lattice`` (``fg.Lattice``), ``field`` and
``fieldvalues`` (``fg.Field`` in C memory, what ``set_field`` accepts),
``devicefield`` (a simulation's state in GPU memory), ``simulation``
(``fg.Simulation``, ``fg.load``), ``devices`` (``fg.devices()``) and
``interruptible`` (long Go calls that Ctrl-C cancels).
"""
