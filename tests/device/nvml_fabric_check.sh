#!/usr/bin/env bash
# The device check for NVLink fabric discovery (issue: NVLink domains), for a
# machine with an NVIDIA driver: one short run, nothing installed.
#   bash tests/device/nvml_fabric_check.sh [TOPOLAUNCH_BINARY]
# 1. Calls nvmlDeviceGetGpuFabricInfoV / nvmlDeviceGetGpuFabricInfo through
#    ctypes with the struct layout src/discover/nvml_probe.cc declares
#    (nvmlGpuFabricInfo_v2_t, version 0x02000024), and checks that every
#    call returns cleanly: SUCCESS or NOT_SUPPORTED, a known state, and on a
#    GPU without a multi-node fabric (a single H100/H200, an HGX board)
#    either no info, state NOT_SUPPORTED, or a completed state under the
#    all-zero cluster UUID -- which topolaunch records as "no fabric".
# 2. With a topolaunch binary that runs here, `discover --fabric none`
#    must answer NVML "ok" and record nvlink_fabric exactly where step 1
#    found a multi-node fabric.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp}
python3 - "$out/nvml_fabric.json" <<'PY'
import ctypes, json, sys
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0, "nvmlInit_v2 failed"
class V1(ctypes.Structure):
    _fields_ = [("uuid", ctypes.c_ubyte * 16), ("status", ctypes.c_int), ("clique", ctypes.c_uint), ("state", ctypes.c_ubyte)]
class V2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("uuid", ctypes.c_ubyte * 16), ("status", ctypes.c_int),
                ("clique", ctypes.c_uint), ("state", ctypes.c_ubyte), ("health", ctypes.c_uint)]
assert ctypes.sizeof(V1) == 28 and ctypes.sizeof(V2) == 36, (ctypes.sizeof(V1), ctypes.sizeof(V2))
count = ctypes.c_uint()
assert nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
gpus = []
for i in range(count.value):
    dev = ctypes.c_void_p()
    assert nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(dev)) == 0
    row = {"index": i}
    if hasattr(nvml, "nvmlDeviceGetGpuFabricInfoV"):
        info = V2(); info.version = ctypes.sizeof(V2) | (2 << 24)
        rc = nvml.nvmlDeviceGetGpuFabricInfoV(dev, ctypes.byref(info))
        row["v2"] = {"rc": rc, "state": info.state, "status": info.status, "clique": info.clique,
                     "uuid": bytes(info.uuid).hex(), "health": info.health}
    if hasattr(nvml, "nvmlDeviceGetGpuFabricInfo"):
        info = V1()
        rc = nvml.nvmlDeviceGetGpuFabricInfo(dev, ctypes.byref(info))
        row["v1"] = {"rc": rc, "state": info.state, "status": info.status, "clique": info.clique, "uuid": bytes(info.uuid).hex()}
    for k in ("v1", "v2"):
        if k in row:
            assert row[k]["rc"] in (0, 3), f"GPU {i} {k}: NVML returned {row[k]['rc']}"  # SUCCESS, NOT_SUPPORTED
            if row[k]["rc"] == 0: assert row[k]["state"] in (0, 1, 2, 3), row
    v = row.get("v2") or row.get("v1") or {}
    row["multi_node_fabric"] = v.get("rc") == 0 and v.get("state", 0) in (1, 2, 3) and not (
        v.get("state") == 3 and v.get("status") == 0 and v.get("uuid") == "00" * 16)
    gpus.append(row)
nvml.nvmlShutdown()
json.dump(gpus, open(sys.argv[1], "w"), indent=1)
print(json.dumps(gpus, indent=1))
PY
bin=${1:-build/topolaunch}
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  "$bin" discover --fabric none -o "$out/topology.json"
  python3 - "$out/topology.json" "$out/nvml_fabric.json" <<'PY'
import json, sys
topo = json.load(open(sys.argv[1])); raw = json.load(open(sys.argv[2]))
layout = topo["hosts"][0]["layout"]
assert layout["nvml"]["status"] == "ok", layout["nvml"]
with_fabric = sum(1 for g in layout["gpus"] if g.get("nvlink_fabric"))
expected = sum(1 for g in raw if g["multi_node_fabric"])
assert with_fabric == expected, (with_fabric, expected)
print(f"topolaunch: NVML ok, {len(layout['gpus'])} GPU(s), {with_fabric} with NVLink fabric info, domains {topo['nvlink_domains']}")
PY
else
  echo "no runnable topolaunch binary at $bin: step 2 skipped" >&2
fi
