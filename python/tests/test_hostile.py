"""The Python API under hostile use: no wrong answer, no hang, no unbounded
cost, no lost data, and one clear line for every refusal."""
import copy
import os
import pickle
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch

import pmach
import pmach.torch as pt
from conftest import integers


def one_line(e):
    text = str(e.value)
    assert "\n" not in text and text, text
    return text


# --- wrong answers -----------------------------------------------------------


def test_layer_refuses_a_backward_after_its_input_changed_in_place(rng):
    # torch.nn.Linear refuses this backward; before, the changed x was used
    # and weight.grad came out doubled.
    layer = pt.Layer(pmach.layers.dense(3, 2), dtype=torch.float64)
    x = torch.ones(4, 3, dtype=torch.float64)
    y = layer(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_layer_backward_uses_the_input_of_the_forward(rng):
    # dense, W[i, o]: grad_W = sum_b x_b^T g_b = x^T 1 with x all ones: 4 each.
    layer = pt.Layer(pmach.layers.dense(3, 2), dtype=torch.float64)
    layer(torch.ones(4, 3, dtype=torch.float64)).sum().backward()
    assert torch.equal(layer.weight.grad, torch.full((3, 2), 4.0, dtype=torch.float64))


def test_machine_refuses_a_backward_after_its_state_changed_in_place():
    module = pt.DenseMachine([1, 1], "tanh", dtype=torch.float64)
    y, z = module(torch.ones(2, 2, dtype=torch.float64))
    z.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_layer_derivatives_of_every_order_are_exact(rng):
    # Forward, transpose and parameter gradient are bilinear and each one's
    # backward is made of the three: gradcheck and gradgradcheck hold.
    layer = pt.Layer(pmach.layers.conv(5, 2, 2, 3, padding=1), dtype=torch.float64)
    x = torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)
    w = layer.weight.detach().clone().requires_grad_()

    def f(w, x):
        return pt._LayerFunction.apply(layer.layer, "layer", w, x)
    assert torch.autograd.gradcheck(f, (w, x))
    assert torch.autograd.gradgradcheck(f, (w, x))


def test_gradient_penalty_through_a_layer_matches_torch(rng):
    # dense(3, 2) is y = x @ W: the penalty |d/dx sum(y^2)|^2 and its
    # gradient in W, by torch's own matmul, exact on small integers.
    x = torch.from_numpy(integers(rng, (4, 3))).requires_grad_()
    W = torch.from_numpy(integers(rng, (3, 2)))
    penalties = []
    for f in (lambda w: pt._LayerFunction.apply(pmach.layers.dense(3, 2), "dense", w, x),
              lambda w: x @ w):
        w = W.clone().requires_grad_()
        (gx,) = torch.autograd.grad(f(w).square().sum(), x, create_graph=True)
        penalty = gx.square().sum()
        penalty.backward()
        penalties.append((penalty.detach(), w.grad))
    assert penalties[0][0] == penalties[1][0]
    assert torch.equal(penalties[0][1], penalties[1][1])


def test_machine_second_derivative_is_refused():
    module = pt.DenseMachine([1, 1], "tanh", dtype=torch.float64)
    y0 = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="^DenseMachine: a second derivative through a pmach "
                                           "machine .* is not supported$"):
        torch.autograd.grad(module(y0)[0].square().sum(), y0, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivative"):
        torch.autograd.gradgradcheck(lambda y0: module(y0)[0], (y0,))


# --- hangs ---------------------------------------------------------------------


FORKED = """
import os, sys, numpy as np, pmach
layer = pmach.layers.dense(256, 256)
layer.init_weights(1)
x = np.ones((128, 256))
y = layer.forward(x, kernels=True)  # 2^23 operations: a parallel region
pid = os.fork()
if pid == 0:
    os._exit(0 if np.array_equal(layer.forward(x, kernels=True), y) else 3)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_kernel_call_in_a_forked_child_returns():
    env = dict(os.environ, OMP_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", FORKED], env=env, timeout=60)
    assert r.returncode == 0


# --- memory and work bounds ------------------------------------------------------


def test_evaluation_is_bounded_before_it_is_paid():
    layer = pmach.layers.dense(2, 2)
    big = np.broadcast_to(np.zeros(1), (2 ** 24 + 1, 2))  # a view: nothing allocated
    with pytest.raises(pmach.Error, match="samples, expected at most 16777216") as e:
        layer.forward(big, np.zeros((2, 2)))
    one_line(e)
    module = pt.Layer(layer, dtype=torch.float64)
    with pytest.raises(pmach.Error, match="^pmach.torch.Layer: x has 33554434 values, expected at "
                                         "most 16777216 per array$"):
        module(torch.zeros(1, 2, dtype=torch.float64).expand(2 ** 24 + 1, 2))


def test_exact_evaluation_is_bounded():
    layer = pmach.layers.dense(2, 2)
    with pytest.raises(pmach.Error, match='precision exact; use precision="double"'):
        layer.forward(np.zeros((2 ** 20, 2)), np.zeros((2, 2)), precision="exact")


# --- data lost -----------------------------------------------------------------


def test_save_refuses_nan_weights_and_keeps_the_earlier_files(tmp_path):
    layer = pmach.layers.dense(2, 2)
    layer.weights = np.ones((2, 2))
    layer.save(tmp_path / "m.json")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"m.json", "m.W.npy"}
    layer.weights = np.array([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(pmach.Error, match="weight 1 .* is nan, expected finite") as e:
        layer.save(tmp_path / "m.json")
    one_line(e)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert np.array_equal(pmach.load(tmp_path / "m.json").weights, np.ones((2, 2)))


def test_a_failed_save_leaves_the_earlier_files(tmp_path):
    # The weights could be written but the header cannot (its path is a
    # folder): the earlier weights stay, not new ones beside no header.
    m = pmach.DenseMachine([1, 1], "tanh", weights=np.ones((2, 2)))
    m.save(tmp_path / "m.json")
    (tmp_path / "m.json").unlink()
    (tmp_path / "m.json").mkdir()
    before = (tmp_path / "m.W.npy").read_bytes()
    m.weights = np.full((2, 2), 2.0)
    with pytest.raises(pmach.Error, match="m.json: save: exists and is not a regular file") as e:
        m.save(tmp_path / "m.json")
    one_line(e)
    assert (tmp_path / "m.W.npy").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.W.npy", "m.json"]


def test_save_round_trips_non_ascii_and_pathlib_paths(tmp_path):
    layer = pmach.layers.dense(2, 3)
    layer.weights = np.arange(6.0).reshape(2, 3)
    path = tmp_path / "modèle ü.json"
    layer.save(path)
    back = pmach.load(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mod%C3%A8le %C3%BC.W.npy", "modèle ü.json"]
    assert np.array_equal(back.weights, layer.weights)
    assert back.source_shape == (2,) and back.target_shape == (3,)


def test_a_path_with_nul_is_refused(tmp_path):
    layer = pmach.layers.dense(2, 2)
    with pytest.raises(pmach.Error, match="NUL") as e:
        layer.save(str(tmp_path / "a\0b.json"))
    one_line(e)
    with pytest.raises(pmach.Error, match="NUL"):
        pmach.load("m\0.json")
    assert list(tmp_path.iterdir()) == []


def test_a_non_utf8_path_is_named_in_the_error(tmp_path):
    name = os.fsdecode(b"caf\xe9.json")  # a Latin-1 name, surrogate-escaped
    with pytest.raises(pmach.Error) as e:
        pmach.load(tmp_path / name)
    assert "caf\\xe9.json" in one_line(e)


def test_a_path_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="load: path is a int, expected a str or os.PathLike"):
        pmach.load(3)


# --- clear one-line errors; accepted silently or refused valid --------------------


def test_no_raw_escape_in_a_message(tmp_path):
    with pytest.raises(pmach.Error) as e:
        pmach.load(tmp_path / "\x1b[31mred.json")
    text = one_line(e)
    assert "\x1b" not in text and "\\x1b[31mred.json" in text


def test_array_errors_name_the_argument():
    layer = pmach.layers.dense(2, 2)
    with pytest.raises(pmach.Error, match="^x: has dtype object, expected an array of real numbers$"):
        layer.forward(object(), np.zeros((2, 2)))
    with pytest.raises(pmach.Error, match="^w: has dtype object, expected an array of real numbers$"):
        layer.forward(np.zeros((1, 2)), object())
    with pytest.raises(pmach.Error, match="^x: expected an array of numbers, found list"):
        layer.forward([[1, 2], [3]], np.zeros((2, 2)))  # ragged
    with pytest.raises(pmach.Error, match="^g: has dtype <U1, expected an array of real numbers"):
        layer.backward(np.zeros((1, 2)), [["a", "b"]], np.zeros((2, 2)))


def test_complex_inputs_are_refused():
    layer = pmach.layers.dense(2, 2)
    with pytest.raises(pmach.Error, match="^x: has complex values"):
        layer.forward(np.array([[1 + 1j, 0]]), np.eye(2))
    with pytest.raises(pmach.Error, match="^x: has complex values"):
        layer.forward(np.array([[1 + 1j, 0]]), np.eye(2), kernels=True)
    with pytest.raises(pmach.Error, match="^weights: has complex values"):
        layer.weights = np.eye(2) * 1j
    with pytest.raises(pmach.Error, match="dtype torch.complex128"):
        pt.Layer(layer, dtype=torch.float64)(torch.zeros(1, 2, dtype=torch.complex128))


def test_torch_modules_name_a_non_tensor_argument():
    module = pt.Layer(pmach.layers.dense(2, 2), dtype=torch.float64)
    with pytest.raises(TypeError, match="^pmach.torch.Layer: x is a ndarray, expected a torch.Tensor$"):
        module(np.zeros((1, 2)))


def test_machine_sizes_are_integers():
    with pytest.raises(TypeError, match=r"^pmach.DenseMachine: dims\[0\] is a float \(1.5\), expected an int$"):
        pmach.DenseMachine([1.5, 2])
    with pytest.raises(TypeError, match="^pmach.DenseMachine: dims is a int, expected a list of ints$"):
        pmach.DenseMachine(3)
    with pytest.raises(TypeError, match="^pmach.RecurMachine: length is a float"):
        pmach.RecurMachine([1], "tanh", 4.5, 1, 1)
    with pytest.raises(TypeError, match="^pmach.DenseMachine: sigma holds a value that is a object"):
        pmach.DenseMachine([1, 1], {"polynomial": [object()]})
    with pytest.raises(pmach.Error, match="sigma has a nan or inf coefficient"):
        pmach.DenseMachine([1, 1], {"polynomial": [float("nan")]})


def test_numpy_integers_are_accepted():
    m = pmach.DenseMachine(np.array([1, 2]), {"polynomial": [np.float32(0), np.int64(1)]})
    assert m.dims == [1, 2]
    r = pmach.RecurMachine([np.int64(1)], "tanh", np.int32(4), np.int64(1), np.uint8(1))
    assert r.space_shape == (4, 1)
    m.init_weights(np.uint64(3))


# --- copies ----------------------------------------------------------------------

MODELS = [
    ("layer", lambda: pmach.layers.conv(5, 2, 3, 3, padding=1)),
    ("layer without weights", lambda: pmach.layers.avg_pool(4, 1, 2)),
    ("seed machine", lambda: pmach.DenseMachine([1, 2], "tanh")),
    ("recurrent machine", lambda: pmach.RecurMachine([1, 1], "relu", 5, 1, 2)),
]


@pytest.mark.parametrize("name,make", MODELS, ids=[m[0] for m in MODELS])
def test_models_pickle_and_copy(name, make, rng):
    model = make()
    if model.parameter_shape:
        model.weights = integers(rng, model.parameter_shape)
    shape = (2, *(model.source_shape if isinstance(model, pmach.Layer) else model.space_shape))
    x = integers(rng, shape)
    expected = model.forward(x)
    for other in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), copy.copy(model)):
        assert type(other) is type(model) and repr(other) == repr(model)
        result = other.forward(x)
        for a, b in zip(result if isinstance(result, tuple) else [result],
                        expected if isinstance(expected, tuple) else [expected]):
            assert np.array_equal(a, b)


def test_a_model_without_weights_pickles():
    m = pickle.loads(pickle.dumps(pmach.DenseMachine([1, 1])))
    assert m.weights is None


def test_torch_modules_deepcopy_and_torch_save(tmp_path):
    torch.manual_seed(0)
    module = pt.Layer(pmach.layers.dense(3, 2), dtype=torch.float64)
    x = torch.randn(4, 3, dtype=torch.float64)
    clone = copy.deepcopy(module)
    assert torch.equal(clone(x), module(x))
    torch.save(module, tmp_path / "m.pt")
    loaded = torch.load(tmp_path / "m.pt", weights_only=False)
    assert torch.equal(loaded(x), module(x))
    machine = pt.DenseMachine([1, 2], "tanh", dtype=torch.float64)
    averaged = torch.optim.swa_utils.AveragedModel(machine)
    y0 = torch.randn(2, 3, dtype=torch.float64)
    assert torch.equal(averaged(y0)[0], machine(y0)[0])


# --- interrupts inside an implementation, and layers refused from their sizes ------


def _raises_keyboard_interrupt(w, x):
    raise KeyboardInterrupt


def test_an_interrupt_inside_an_implementation_reaches_python():
    with pytest.raises(KeyboardInterrupt):
        pmach.check(pmach.layers.dense(2, 2), _raises_keyboard_interrupt, framework="numpy")


def test_a_signal_stops_a_long_check():
    calls = []

    def forward(w, x):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the terminal sends it
        return x @ w

    with pytest.raises(KeyboardInterrupt):
        pmach.check(pmach.layers.dense(2, 2), forward, framework="numpy", cases=100)
    assert len(calls) <= 4


def test_cases_are_capped_like_the_command():
    with pytest.raises(pmach.Error, match="cases"):
        pmach.check(pmach.layers.dense(2, 2), lambda w, x: x @ w, framework="numpy", cases=10 ** 7)


@pytest.mark.parametrize("size", [-1, 1.5])
def test_a_bad_layer_size_is_one_line(size):
    with pytest.raises((pmach.Error, TypeError)) as e:
        pmach.layers.dense(size, 2)
    one_line(e)


def test_a_huge_dense_layer_is_refused_before_it_is_built():
    # Refused from its sizes, before any rule or edge is built.
    with pytest.raises(pmach.Error, match="points in a space, expected at most 16777216"):
        pmach.layers.dense(2 ** 40, 2 ** 40)
    with pytest.raises(pmach.Error, match="parameters, expected at most 16777216"):
        pmach.layers.dense(2 ** 13, 2 ** 13)


def test_a_convolution_whose_size_wraps_is_refused():
    # 2^32 × 2^32 points wrap to 0 in 64 bits: refused, not read as empty.
    with pytest.raises(pmach.Error, match="points in a space, expected at most 16777216") as e:
        pmach.layers.conv([2 ** 32, 2 ** 32], 1, 1, 1)
    one_line(e)


def test_exact_evaluation_of_a_deep_machine_is_refused_before_it_runs():
    # sigma = y^2 squares the rationals' bits at every level: 14 levels of
    # 1/2 would need about 2^20 bits (docs/formats.md §5.2 refuses 13).
    m = pmach.DenseMachine([1] * 14, {"polynomial": [0, 0, 1]}, weights=np.full((14, 14), 0.5))
    with pytest.raises(pmach.Error, match='bits or more over 14 levels.*use precision="double"$'):
        m.forward(np.full((1, 14), 0.5), precision="exact")
    with pytest.raises(pmach.Error, match="bits or more over 14 levels"):
        m.backward(np.full((1, 14), 0.5), ybar=np.ones((1, 14)), precision="exact")
    small = pmach.DenseMachine([1] * 3, {"polynomial": [0, 0, 1]}, weights=np.full((3, 3), 0.5))
    y, z = small.forward(np.full((1, 3), 0.5), precision="exact")
    # y1 = 1/2, z1 = 1/4; y2 = 1/2 + 1/8 = 5/8, z2 = 25/64; y3 = 1/2 + 1/8 + 25/128.
    assert y[0, 2] == 0.5 + 0.125 + 25 / 128
