"""The bench's building blocks without running it: minimum bytes and FLOPs per op, the seed
presets' shapes, peer selection and skipping, the coarsening-curve grouping."""
import pytest

from refconv import Problem, peers
from refconv.bench import Row, presets, roofline
from refconv.bench.report import coarsening_points, twins
from refconv.checking import acceptance_for

SMALL = [
    "filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=4,cast=wrap:image=random.3,weights=exact.4",
    "filter2d:dtype=float32,c=2,h=11,w=13,kh=4,kw=5:boundary=zero,flip=0,accumulator=float32:image=exact.5,weights=exact.6",
    "sobel:dtype=uint8,channels=4,h=7,w=6:magnitude=l1,boundary=valid,out_dtype=uint8,cast=saturate,rounding=trunc:image=random.2",
    "sobel:dtype=float32,channels=0,h=7,w=6:magnitude=l2,boundary=zero,out_dtype=float32:image=random.2",
    "matvec:dtype=float32,rows=37,cols=19::m=random.1,v=random.2",
    "kron:dtype=uint8,m=2,n=3,p=4,q=7::a=random.3,b=random.4",
    "conv2d:dtype=float32,n=2,c=3,h=7,w=6,m=4,r=3,s=2,groups=1,bias=1:stride=2,padding=1,dilation=2:x=exact.1,w=exact.2,bias=exact.3",
]


@pytest.mark.parametrize("desc", SMALL)
def test_output_layout_from_the_dims_is_the_specs_output(desc):
    p = Problem.parse(desc)
    e = acceptance_for(p).expected
    assert roofline.output_layout(p) == (e.shape, e.dtype)


def test_minimum_bytes_count_each_input_once_and_the_specs_output():
    p = Problem.parse(SMALL[0])  # 9x23 uint8, 3x3 float32 weights, valid 7x21 uint8 output
    w = roofline.work(p)
    assert w.bytes == 9 * 23 + 9 * 4 + 7 * 21
    assert w.flops == 2 * 9 * 7 * 21
    p = Problem.parse(SMALL[4])
    assert roofline.work(p) == roofline.Work(bytes=4 * (37 * 19 + 19 + 37), flops=2 * 37 * 19)
    p = Problem.parse(SMALL[5])
    assert roofline.work(p) == roofline.Work(bytes=2 * 3 + 4 * 7 + 2 * 3 * 4 * 7, flops=2 * 3 * 4 * 7)
    p = Problem.parse(SMALL[6])  # ho = (7+2-4-1)//2+1 = 3, wo = (6+2-2-1)//2+1 = 3
    n_out = 2 * 4 * 3 * 3
    assert roofline.work(p) == roofline.Work(bytes=4 * (2 * 3 * 7 * 6 + 4 * 3 * 3 * 2 + 4 + n_out),
                                             flops=2 * 3 * 3 * 2 * n_out + n_out)
    p = Problem.parse(SMALL[2])  # RGBA 7x6: gray conversion per pixel, 5x4 outputs
    assert roofline.work(p).flops == (2 * 2 * 6 + 3) * 5 * 4 + 5 * 7 * 6


def test_percent_of_roofline_is_the_memory_floor_over_the_time():
    w = roofline.Work(bytes=3_000_000, flops=0)
    assert roofline.floor_seconds(w, 1e9) == pytest.approx(3e-3)
    assert roofline.percent_of_roofline(w, 1e9, 6e-3) == pytest.approx(50.0)
    with pytest.raises(ValueError, match="copy_bandwidth"):
        roofline.floor_seconds(w, 0)


def test_presets_hold_the_seed_studies_shapes():
    P = presets.PRESETS
    f = P["filter2d-u8-3x3-3072"]
    assert (f.dims["h"], f.dims["w"], f.dims["dtype"], f.options["shift"]) == (3072, 3072, "uint8", 4)
    s = P["sobel-4096x3072"]
    assert (s.dims["w"], s.dims["h"]) == (4096, 3072)
    assert {n for n in P if n.startswith("matvec")} == {"matvec-4096", "matvec-16384"}
    kron = [p for n, p in P.items() if n.startswith("kron-")]
    assert [p.dims["n"] for p in kron] == list(range(100, 361, 20))
    assert all((p.only == "streamed") == (p.dims["n"] >= 300) for p in kron)
    # seed 004: {table, label, N, H, R, M, C}; padding (R-1)/2
    for name, (h, r, m, c) in {"cuconv-T3-1x1-A": (7, 1, 256, 832), "cuconv-T3-1x1-B": (14, 1, 1024, 256),
                               "cuconv-T3-1x1-C": (27, 1, 256, 64), "cuconv-T4-3x3-A": (4, 3, 384, 192),
                               "cuconv-T4-3x3-B": (13, 3, 384, 384), "cuconv-T5-5x5-A": (7, 5, 128, 48),
                               "cuconv-E1": (32, 3, 64, 64), "cuconv-E2": (32, 3, 128, 128),
                               "cuconv-E3": (64, 3, 128, 128), "cuconv-E4": (64, 3, 256, 256)}.items():
        d = P[name].dims
        assert (d["n"], d["h"], d["w"], d["r"], d["s"], d["m"], d["c"]) == (1, h, h, r, r, m, c), name
        assert P[name].options == {"stride": 1, "padding": (r - 1) // 2, "dilation": 1}


def test_every_preset_is_a_valid_problem_whose_descriptor_round_trips():
    for p in presets.PRESETS.values():
        prob = p.problem()
        assert Problem.parse(prob.descriptor()) == prob


def test_preset_selection_takes_globs_and_lists_and_refuses_unknown_names():
    got = [p.name for p in presets.select(["matvec-*", "cuconv-E1,kron-100"])]
    assert got == ["matvec-4096", "matvec-16384", "kron-100", "cuconv-E1"]
    assert len(presets.select(["all"])) == len(presets.PRESETS)
    with pytest.raises(ValueError, match=r"--preset 'nope' matches no preset; accepted: all, or one of"):
        presets.select(["nope"])


def test_an_absent_peer_is_listed_with_the_reason_and_gpu_peers_displace_cpu_ones(monkeypatch):
    listed = dict((p.name, why) for p, why in peers.for_op("matvec", "all"))
    assert set(listed) == {"cublas_mv", "numpy_matvec"} and listed["numpy_matvec"] is None
    # pretend a GPU: under auto, the CPU peers are listed as skipped in favour of the GPU ones
    gpu = [p if p.device == "cpu" else peers.Peer(p.name, p.op, p.library, p.device, p.prepare, lambda: None)
           for p in peers.all_peers()]
    monkeypatch.setattr(peers, "all_peers", lambda: tuple(gpu))
    auto = dict((p.name, why) for p, why in peers.for_op("matvec", "auto"))
    assert auto["cublas_mv"] is None and "a GPU peer runs instead" in auto["numpy_matvec"]
    assert peers.default_baseline("matvec", peers.for_op("matvec", "auto")) == "cublas_mv"


def test_without_a_gpu_the_baseline_is_a_cpu_peer_and_a_missing_library_says_so(monkeypatch):
    no = [p if p.device == "cpu" else peers.Peer(p.name, p.op, p.library, p.device, p.prepare,
                                                 lambda: "torch 0+cpu sees no CUDA device")
          for p in peers.all_peers()]
    monkeypatch.setattr(peers, "all_peers", lambda: tuple(no))
    listed = peers.for_op("kron", "auto")
    assert dict((p.name, w) for p, w in listed)["torch_kron"] == "torch 0+cpu sees no CUDA device"
    assert peers.default_baseline("kron", listed) == "numpy_kron"
    assert peers.default_baseline("kron", []) == "spec"
    with pytest.raises(ValueError, match=r"--peers 'cv3': unknown peer\(s\) \['cv3'\]; accepted"):
        peers.for_op("filter2d", "cv3")


def test_a_cpu_peer_records_one_interval_per_call():
    from refconv import timing
    p = next(x for x in peers.all_peers() if x.name == "numpy_kron")
    run = p.prepare(Problem.parse(SMALL[5]))
    with timing.collect() as iv:
        run()
    assert len(iv) == 1 and iv.seconds()[0] >= 0


def test_coarsening_points_group_seed_000_names_by_memory_kind_and_vector_stores():
    rows = [Row.of_variant(f"filter2d/b/{n}", "ok", median_s=t) for n, t in
            [("GM", 5.0), ("GM_CF4", 3.0), ("GM_CF2", 4.0), ("SM_CF8_Vec", 1.0), ("SM_CF2_Vec", 2.0),
             ("basic", 9.0), ("CM_CF4", None)]]
    assert coarsening_points(rows) == {("b", "GM", False): [(1, 5.0), (2, 4.0), (4, 3.0)],
                                       ("b", "SM", True): [(2, 2.0), (8, 1.0)]}


def test_twins_pair_the_same_variant_name_across_backends():
    rows = [Row.of_variant(v, "ok", median_s=t) for v, t in
            [("filter2d/numba_cuda/GM", 3.0), ("filter2d/opencl/GM", 2.0), ("filter2d/opencl/basic", 1.0),
             ("filter2d/numba_cuda/SM", None), ("filter2d/opencl/SM", 1.0)]]
    assert twins(rows) == [{"name": "GM", "times": {"numba_cuda": 3.0, "opencl": 2.0}, "ratio": 1.5}]
