"""Writes the hand-written model files of examples/data/faults/, each the
conv2d or graded machine a user meant, once right and once with one planted
fault, as a user writes them: "ranges" with affine index maps.

The intended conv2d (compare: pmach make conv --in 2 --out 4 --size 5 6
--kernel 2 3 --padding 1 2 --dilation 1 2 --groups 2) has x (h, w, c) of
shape (5, 6, 2), y (h', w', o) of shape (6, 6, 4) and parameters
(kh, kw, c/g, o) of shape (2, 3, 1, 4). Its ranges are (g, h', w', o in
group, kh, kw, c in group) = (2, 6, 6, 2, 2, 3, 1):
  s = (h' + kh - 1, w' + 2 kw - 2, g + c),  t = (h', w', 2 g + o),
  pi = (kh, kw, c, 2 g + o).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def conv(name, groups=2, dilation_w=2, offset_h=-1, reversed_kh=False):
    kh_row = [0, 0, 0, 0, -1 if reversed_kh else 1, 0, 0]
    return {
        "pmach": 1, "kind": "layer", "name": name,
        "source": {"shape": [5, 6, 2]},
        "target": {"shape": [6, 6, 4]},
        "parameters": {"shape": [2, 3, 1, 4]},
        "edges": {
            "ranges": [groups, 6, 6, 2, 2, 3, 1],
            "s": {"matrix": [[0, 1, 0, 0, 1, 0, 0],
                             [0, 0, 1, 0, 0, dilation_w, 0],
                             [1, 0, 0, 0, 0, 0, 1]],
                  "offset": [offset_h, -2, 0]},
            "t": {"matrix": [[0, 1, 0, 0, 0, 0, 0],
                             [0, 0, 1, 0, 0, 0, 0],
                             [2, 0, 0, 1, 0, 0, 0]]},
            "pi": {"matrix": [kh_row,
                              [0, 0, 0, 0, 0, 1, 0],
                              [0, 0, 0, 0, 0, 0, 1],
                              [2, 0, 0, 1, 0, 0, 0]],
                   "offset": [1 if reversed_kh else 0, 0, 0, 0]},
        },
    }


def machine(name, levels):
    # Four points in a chain of levels; every pair (s, t) an edge with
    # parameter (t, s): cleaning keeps the edges that raise the level.
    return {
        "pmach": 1, "kind": "machine", "name": name,
        "space": {"shape": [4]},
        "grading": {"levels": levels},
        "parameters": {"shape": [4, 4]},
        "edges": {"ranges": [4, 4],
                  "s": {"matrix": [[0, 1]]}, "t": {"matrix": [[1, 0]]},
                  "pi": {"matrix": [[1, 0], [0, 1]]}},
        "sigma": "relu",
    }


files = {
    "conv2d.json": conv("conv2d as intended"),
    "conv2d_wrong_dilation.json": conv("conv2d, dilation 1 on w", dilation_w=1),
    "conv2d_wrong_padding.json": conv("conv2d, padding offset -3 on h", offset_h=-3),
    "conv2d_reversed_kernel.json": conv("conv2d, kernel h reversed", reversed_kh=True),
    "conv2d_missing_group.json": conv("conv2d, second group missing", groups=1),
    "machine.json": machine("graded machine as intended", [1, 1, 2, 3]),
    "machine_level_typo.json": machine("graded machine, level typo", [1, 1, 1, 3]),
}
for f, j in files.items():
    with open(os.path.join(HERE, f), "w") as out:
        json.dump(j, out, indent=1)
        out.write("\n")
