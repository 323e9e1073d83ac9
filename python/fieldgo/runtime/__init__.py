"""The runtime: Python's side of the Go engine.

``bridge`` is the one module that touches the gopy bridge (``fieldgo._bridge``);
``options`` holds the typed option structures that cross it, mirrored from pybind's
Go structs. On top of them: ``lattice`` (``fg.Lattice``), ``field`` and
``fieldvalues`` (``fg.Field`` in C memory, what ``set_field`` accepts),
``devicefield`` (a simulation's state in GPU memory), ``simulation``
(``fg.Simulation``, ``fg.load``), ``devices`` (``fg.devices()``) and
``interruptible`` (long Go calls that Ctrl-C cancels).
"""
