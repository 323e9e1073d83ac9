"""The typed options of fieldgo.runtime.options against the Go structs pybind decodes
them into: the same JSON fields, in the same order, with matching types. Go's JSON
decoder drops a field it does not know and leaves a missing one at its zero value,
so a field renamed on one side alone would otherwise pass silently."""

import dataclasses
import json
import pathlib
import re
import typing

import pytest

from fieldgo.runtime import options

PYBIND = pathlib.Path(__file__).resolve().parents[2] / "pybind"
GO_TYPES = {"string": str, "int": int, "float64": float, "bool": bool}


def go_structs() -> dict:
    """name -> [(json name, Python type) or ("embed", struct name)] for every struct
    declared in pybind's Go sources (tests excluded)."""
    structs = {}
    for path in sorted(PYBIND.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        for name, body in re.findall(r"^type (\w+) struct \{\n(.*?)^\}", path.read_text(), re.M | re.S):
            fields = []
            for line in body.splitlines():
                line = line.split("//")[0].strip()
                if not line:
                    continue
                m = re.fullmatch(r'(\w+)\s+(\*?)(\w+)\s+`json:"(\w+)(?:,[^"]*)?"`', line)
                if m:
                    _, pointer, typ, key = m.groups()
                    py = GO_TYPES.get(typ)
                    if py is None:  # a type options never carry: kept by its Go name, matching nothing
                        fields.append((key, f"Go {pointer}{typ}"))
                    else:
                        fields.append((key, py | None if pointer else py))
                elif re.fullmatch(r"[a-z]\w*", line):  # an embedded struct: its fields are inlined
                    fields.append(("embed", line))
                # an unexported field with no tag is not part of the JSON
            structs[name] = fields
    return structs


def go_fields(structs: dict, name: str) -> list:
    out = []
    for key, typ in structs[name]:
        if key == "embed":
            out.extend(go_fields(structs, typ))
        else:
            out.append((key, typ))
    return out


MIRRORS = [
    cls
    for cls in vars(options).values()
    if isinstance(cls, type) and issubclass(cls, options.BridgeOptions) and cls.GO_STRUCT
]


@pytest.mark.parametrize("cls", MIRRORS, ids=lambda c: c.__name__)
def test_options_mirror_their_go_struct(cls):
    structs = go_structs()
    assert cls.GO_STRUCT in structs, f"pybind declares no struct {cls.GO_STRUCT}"
    hints = typing.get_type_hints(cls)
    python = [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]
    assert python == go_fields(structs, cls.GO_STRUCT)


def test_every_go_options_struct_has_a_mirror():
    """A new options struct in pybind gets its typed structure here."""
    go = {name for name in go_structs() if name.endswith("Options")}
    assert go == {cls.GO_STRUCT for cls in MIRRORS}


def test_options_cross_as_their_json_and_refuse_wrong_types():
    sim = options.SimulationOptions(backend="cpu", threads=2, precision="float32", gradient="consistent")
    assert json.loads(sim.json()) == dict(backend="cpu", threads=2, precision="float32", gradient="consistent")
    flow = options.MinimizeOptions(tol=1, max_steps=10, method="anf")
    assert json.loads(flow.json()) == dict(tol=1.0, max_steps=10, method="anf", arrest="", dt=0.0, check_every=0)
    assert isinstance(flow.tol, float)
    assert json.loads(options.RadiationOptions().json())["n_iters"] is None  # Go's default
    with pytest.raises(TypeError, match="SimulationOptions.threads"):
        options.SimulationOptions(threads=True)
    with pytest.raises(TypeError, match="MinimizeOptions.max_steps"):
        options.MinimizeOptions(tol=1e-6, max_steps=1.5, method="anf")
    with pytest.raises(TypeError, match="RadiationOptions.coef_reuse"):
        options.RadiationOptions(coef_reuse="yes")


def test_json_of_remembers_by_type_and_value():
    """json_of gives cls(**values).json(), and 1, 1.0 and True (equal in Python,
    hashing alike) are three option sets, not one."""
    kw = dict(tol=1e-6, max_steps=10, method="anf")
    assert options.MinimizeOptions.json_of(**kw) == options.MinimizeOptions(**kw).json()
    assert options.MinimizeOptions.json_of(**kw) is options.MinimizeOptions.json_of(**kw)
    assert json.loads(options.MinimizeOptions.json_of(tol=1, max_steps=10, method="anf"))["tol"] == 1.0
    assert json.loads(options.RadiationOptions.json_of(n_iters=1))["n_iters"] == 1
    with pytest.raises(TypeError, match="RadiationOptions.n_iters"):
        options.RadiationOptions.json_of(n_iters=True)
    with pytest.raises(TypeError, match="RadiationOptions.n_iters"):
        options.RadiationOptions.json_of(n_iters=1.0)
    assert json.loads(options.RadiationOptions.json_of(coef_reuse=None))["coef_reuse"] is None
    assert json.loads(options.RadiationOptions.json_of(coef_reuse=False))["coef_reuse"] is False
    # another class with the same values is another entry
    assert json.loads(options.BackendOptions.json_of(backend="cpu")) == {"backend": "cpu", "threads": 0}
    assert json.loads(options.SimulationOptions.json_of(backend="cpu"))["precision"] == "float64"
    # unhashable values are encoded every time (the structure's check still runs)
    with pytest.raises(TypeError, match="RadiationOptions.method"):
        options.RadiationOptions.json_of(method=["newton"])
    for i in range(options._JSON_OF_MAX + 5):  # a sweep keeps the memory bounded
        options.MinimizeOptions.json_of(tol=1e-6 * (1 + i), max_steps=1, method="anf")
    assert len(options._JSON_OF) <= options._JSON_OF_MAX
