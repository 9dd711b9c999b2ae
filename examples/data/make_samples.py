"""Writes the .npy files of examples/data with plain Python (no NumPy): the
weights of the example models, and samples of dense.json as another framework
would produce them, once right (samples_dense/) and once with a planted error
in the parameter gradient (samples_dense_wrong/: the batch sum is missing)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(path, shape, values, dtype="<f8"):
    dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, dims)
    while (10 + len(header) + 1) % 64:
        header += " "
    header += "\n"
    fmt = "<d" if dtype == "<f8" else "<f"
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(b"".join(struct.pack(fmt, v) for v in values))


def flat(rows):
    return [v for r in rows for v in r]


# dense.json: W[y][x], y = W x.
W = [[0.5, -1.0, 2.0], [0.25, 0.0, -0.75]]
npy("dense_weights.npy", [2, 3], flat(W))
X = [[1.0, 2.0, 3.0], [-0.5, 0.25, 4.0]]
G = [[1.0, -1.0], [0.5, 2.0]]
Y = [[sum(W[y][x] * s[x] for x in range(3)) for y in range(2)] for s in X]
GX = [[sum(W[y][x] * g[y] for y in range(2)) for x in range(3)] for g in G]
GW = [[sum(X[b][x] * G[b][y] for b in range(2)) for x in range(3)] for y in range(2)]
for d, gw in (("samples_dense", GW), ("samples_dense_wrong", [[X[1][x] * G[1][y] for x in range(3)] for y in range(2)])):
    os.makedirs(os.path.join(HERE, d), exist_ok=True)
    npy(d + "/x.npy", [2, 3], flat(X), "<f4")
    npy(d + "/y.npy", [2, 2], flat(Y), "<f4")
    npy(d + "/g.npy", [2, 2], flat(G), "<f4")
    npy(d + "/grad_x.npy", [2, 3], flat(GX), "<f4")
    npy(d + "/grad_w.npy", [2, 3], flat(gw), "<f4")

# dense_machine.json: DenseMachine dims [2, 3, 2], W (input, output) 7 x 7.
npy("dense_machine_weights.npy", [7, 7], [((3 * i + 5 * j) % 7 - 3) / 4 for i in range(7) for j in range(7)])
# recur_machine.json: RecurMachine dims [1, 2, 2], pad 3: W (lag, input, output).
npy("recur_machine_weights.npy", [4, 5, 5],
    [((l + 2 * i + 3 * j) % 5 - 2) / 4 for l in range(4) for i in range(5) for j in range(5)])
# graded_machine.json: W (input, output) on 4 points.
npy("graded_machine_weights.npy", [4, 4], [(i - j) / 2 for i in range(4) for j in range(4)])
# Inputs for pmach eval.
npy("dense_machine_y0.npy", [2, 7], [((k * 7) % 11 - 5) / 8 for k in range(14)])
npy("graded_machine_y0.npy", [4], [1.0, -0.5, 0.25, 2.0])

# Samples of dense_machine.json (DenseMachine dims [2, 3, 2], tanh) computed
# by a plain sweep over the channel blocks, as the authors' code does:
# forward y = y0 + W~^T z, z = z0 + tanh(y); backward z_bar = g_z + W~ y_bar,
# y_bar = g_y + tanh'(y) z_bar in reverse; grad W = sum_b z y_bar^T, cleaned.
# samples_dense_machine_wrong/ forgets tanh' in the backward sweep.
import math

block = [0, 0, 1, 1, 1, 2, 2]
Wm = [[((3 * i + 5 * j) % 7 - 3) / 4 for j in range(7)] for i in range(7)]
Wc = [[Wm[i][j] if block[i] < block[j] else 0.0 for j in range(7)] for i in range(7)]
Y0 = [[((k * 7) % 11 - 5) / 8 for k in range(7 * b, 7 * b + 7)] for b in range(2)]
GY = [[((5 * k) % 9 - 4) / 8 for k in range(7)] for b in range(2)]
GZ = [[((2 * k + b) % 5 - 2) / 4 for k in range(7)] for b in range(2)]


def machine_samples(with_derivative):
    ys, zs, ybs, zbs = [], [], [], []
    for b in range(2):
        y, z = [0.0] * 7, [0.0] * 7
        for k in range(3):
            for j in range(7):
                if block[j] == k:
                    y[j] = Y0[b][j] + sum(Wc[i][j] * z[i] for i in range(7))
                    z[j] = math.tanh(y[j])
        yb, zb = [0.0] * 7, [0.0] * 7
        for k in reversed(range(3)):
            for i in range(7):
                if block[i] == k:
                    zb[i] = GZ[b][i] + sum(Wc[i][j] * yb[j] for j in range(7))
                    d = 1 - math.tanh(y[i]) ** 2 if with_derivative else 1.0
                    yb[i] = GY[b][i] + d * zb[i]
        ys.append(y); zs.append(z); ybs.append(yb); zbs.append(zb)
    gw = [[sum(zs[b][i] * ybs[b][j] for b in range(2)) if block[i] < block[j] else 0.0
           for j in range(7)] for i in range(7)]
    return ys, zs, ybs, zbs, gw


for d, right in (("samples_dense_machine", True), ("samples_dense_machine_wrong", False)):
    os.makedirs(os.path.join(HERE, d), exist_ok=True)
    ys, zs, ybs, zbs, gw = machine_samples(right)
    npy(d + "/y0.npy", [2, 7], flat(Y0))
    npy(d + "/y.npy", [2, 7], flat(ys))
    npy(d + "/z.npy", [2, 7], flat(zs))
    npy(d + "/gy.npy", [2, 7], flat(GY))
    npy(d + "/gz.npy", [2, 7], flat(GZ))
    npy(d + "/grad_y0.npy", [2, 7], flat(ybs))
    npy(d + "/grad_z0.npy", [2, 7], flat(zbs))
    npy(d + "/grad_w.npy", [7, 7], flat(gw))
