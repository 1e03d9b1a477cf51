// The variable names NCCL and PyTorch really read, and the names people paste
// from blog posts that neither reads. This file is the one place that knows
// them: `env` refuses to emit a name that is not listed here, and warns when
// the user's environment sets an NCCL_ or TORCH_NCCL_ name that is not.
//
// NCCL: every name NVIDIA/nccl's source reads (its PARAM macro, ncclGetEnv; full
// history, release 2.30.7), as listed in tests/data/nccl/nccl-real-names.txt;
// tests/env/env_names_test.cc checks this list against that file.
// PyTorch: the names ProcessGroupNCCL.hpp / NCCLUtils / FlightRecorder read
// (getCvar*/check_env calls in pytorch/pytorch, 2.x). CUDA: the runtime's
// device-ordering variables.
#include "env/env_names.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace topolaunch {

namespace {

// Sorted (binary search).
constexpr std::string_view kNcclNames[] = {
    "NCCL_ALGO", "NCCL_ALLGATHERV_ENABLE", "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
    "NCCL_BUFFSIZE", "NCCL_CGA_CLUSTER_SIZE", "NCCL_CHECKS_DISABLE",
    "NCCL_CHECK_MODE", "NCCL_CHECK_POINTERS", "NCCL_CHUNK_SIZE",
    "NCCL_COLLNET_ENABLE", "NCCL_COLLNET_NODE_THRESHOLD", "NCCL_COMM_BLOCKING",
    "NCCL_COMM_ID", "NCCL_COMM_SHRINK_SHARE_RESOURCES", "NCCL_COMM_SPLIT_SHARE_RESOURCES",
    "NCCL_CONF_FILE", "NCCL_CONNECT_ROUND_MAX_PEERS", "NCCL_CROSS_NIC",
    "NCCL_CTA_POLICY", "NCCL_CTA_POLICY_DEFAULT", "NCCL_CTA_POLICY_EFFICIENCY",
    "NCCL_CTA_POLICY_ZERO", "NCCL_CUMEM_ENABLE", "NCCL_CUMEM_HOST_ENABLE",
    "NCCL_DEBUG", "NCCL_DEBUG_FILE", "NCCL_DEBUG_SUBSYS",
    "NCCL_DEBUG_TIMESTAMP_FORMAT", "NCCL_DEBUG_TIMESTAMP_LEVELS", "NCCL_DEV_API_JIT",
    "NCCL_DISABLE_MEM_MANAGER", "NCCL_DMABUF_ENABLE", "NCCL_ELASTIC_BUFFER_REGISTER",
    "NCCL_ENABLE_VERSION_CHECK", "NCCL_ENV_PLUGIN", "NCCL_GDAKI_USE_RELIABLE_DB",
    "NCCL_GDRCOPY_ENABLE", "NCCL_GDRCOPY_FIFO_ENABLE", "NCCL_GDRCOPY_FLUSH_ENABLE",
    "NCCL_GDRCOPY_SYNC_ENABLE", "NCCL_GDR_FLUSH_DISABLE", "NCCL_GIN_ENABLE",
    "NCCL_GIN_ERROR_QUERY_SEC", "NCCL_GIN_GDAKI_MAX_DEST_RD_ATOMIC", "NCCL_GIN_GDAKI_MAX_QP_RD_ATOMIC",
    "NCCL_GIN_GDAKI_NIC_HANDLER", "NCCL_GIN_GDAKI_QP_DEPTH", "NCCL_GIN_IB_TC",
    "NCCL_GIN_NCONNECTIONS", "NCCL_GIN_PLUGIN", "NCCL_GIN_PLUGIN_REF_COUNT",
    "NCCL_GIN_PROXY_QUEUE_SIZE", "NCCL_GIN_TYPE", "NCCL_GRAPH_DUMP_FILE",
    "NCCL_GRAPH_DUMP_FILE_RANK", "NCCL_GRAPH_FILE", "NCCL_GRAPH_HELPER_DISABLE",
    "NCCL_GRAPH_MIXING_SUPPORT", "NCCL_GRAPH_REGISTER", "NCCL_GRAPH_STREAM_ORDERING",
    "NCCL_GROUP_CUDA_STREAM", "NCCL_HOSTID", "NCCL_IBVERBS_LIB",
    "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_AR_THRESHOLD", "NCCL_IB_CUDA_SUPPORT", "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_DEVICE_PCI_ORDER", "NCCL_IB_DISABLE", "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_FIFO_TC", "NCCL_IB_GID_INDEX", "NCCL_IB_HCA",
    "NCCL_IB_MERGE_NICS", "NCCL_IB_MERGE_VFS", "NCCL_IB_MQP_RETRY_ALL",
    "NCCL_IB_MQP_RETRY_CNT", "NCCL_IB_MQP_RETRY_SLEEP_MSEC", "NCCL_IB_OOO_RQ",
    "NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_IB_PKEY", "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
    "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_QUERY_PORT_SPEED", "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER", "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS", "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY", "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT", "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE", "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE", "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX", "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY", "NCCL_IB_RETRY_CNT",
    "NCCL_IB_RETURN_ASYNC_EVENTS", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
    "NCCL_IB_SL", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_SUBNET_AWARE_ROUTING",
    "NCCL_IB_SUBNET_PREFIX_LEN", "NCCL_IB_TC", "NCCL_IB_TIMEOUT",
    "NCCL_IB_USE_INLINE", "NCCL_IB_WARN_RAIL_LOCAL", "NCCL_IGNORE_COLLNET_MISMATCH",
    "NCCL_IGNORE_CPU_AFFINITY", "NCCL_IGNORE_DISABLED_P2P", "NCCL_IGNORE_NET_MISMATCH",
    "NCCL_IPC_USE_ABSTRACT_SOCKET", "NCCL_L1_SHARED_MEMORY_CARVEOUT", "NCCL_LAUNCH_MODE",
    "NCCL_LAUNCH_ORDER_IMPLICIT", "NCCL_LAUNCH_RACE_FATAL", "NCCL_LEGACY_CUDA_REGISTER",
    "NCCL_LL128_BUFFSIZE", "NCCL_LL128_C2C", "NCCL_LL128_NTHREADS",
    "NCCL_LL_BUFFSIZE", "NCCL_LL_THRESHOLD", "NCCL_LOCAL_REGISTER",
    "NCCL_LSA_TEAM_SIZE", "NCCL_MAX_CTAS", "NCCL_MAX_NCHANNELS",
    "NCCL_MAX_NRINGS", "NCCL_MAX_P2P_NCHANNELS", "NCCL_MEM_SYNC_DOMAIN",
    "NCCL_MIN_CTAS", "NCCL_MIN_NCHANNELS", "NCCL_MIN_NRINGS",
    "NCCL_MIN_P2P_NCHANNELS", "NCCL_MLOPART_RDMA_ENABLE", "NCCL_MNNVL_CLIQUE_ID",
    "NCCL_MNNVL_CROSS_CLIQUE", "NCCL_MNNVL_ENABLE", "NCCL_MNNVL_RAIL_PER_HOST",
    "NCCL_MNNVL_SCATTER_NETS_ENABLE", "NCCL_MNNVL_UUID", "NCCL_MULTI_RANK_GPU_ENABLE",
    "NCCL_MULTI_SEGMENT_REGISTER", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_NET",
    "NCCL_NETDEVS_POLICY", "NCCL_NET_DISABLE_INTRA", "NCCL_NET_FORCE_FLUSH",
    "NCCL_NET_FORCE_MERGE", "NCCL_NET_GDR_C2C", "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_MLOPART", "NCCL_NET_GDR_READ", "NCCL_NET_MERGE_LEVEL",
    "NCCL_NET_MERGE_POLICY", "NCCL_NET_OPTIONAL_RECV_COMPLETION", "NCCL_NET_OVERHEAD",
    "NCCL_NET_PLUGIN", "NCCL_NET_PLUGIN_REF_COUNT", "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NET_SHARED_COMMS", "NCCL_NO_CACHE", "NCCL_NSOCKS_PERTHREAD",
    "NCCL_NTHREADS", "NCCL_NUM_RMA_CTX", "NCCL_NVB_DISABLE",
    "NCCL_NVB_PRECONNECT", "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE", "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_NVLS_CHUNKSIZE", "NCCL_NVLS_ENABLE", "NCCL_NVLS_NCHANNELS",
    "NCCL_NVTX_DISABLE", "NCCL_OOB_NET_ENABLE", "NCCL_OOB_NET_IFNAME",
    "NCCL_P2P_DIRECT_DISABLE", "NCCL_P2P_DISABLE", "NCCL_P2P_EPOCH_ENABLE",
    "NCCL_P2P_LEVEL", "NCCL_P2P_LL_THRESHOLD", "NCCL_P2P_MAX_PEERS",
    "NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_P2P_PCI_CHUNKSIZE",
    "NCCL_P2P_PER_CHANNEL_NET_BW", "NCCL_P2P_PXN_LEVEL", "NCCL_P2P_READ_ENABLE",
    "NCCL_P2P_SCHEDULE_GROUP_SIZE", "NCCL_P2P_USE_CUDA_MEMCPY", "NCCL_PARAM_DUMP_ALL",
    "NCCL_PAT_ENABLE", "NCCL_PROFILER_PLUGIN", "NCCL_PROGRESS_APPENDOP_FREQ",
    "NCCL_PROTO", "NCCL_PROXY_APPEND_BATCH_SIZE", "NCCL_PROXY_CPUSET",
    "NCCL_PROXY_DUMP_SIGNAL", "NCCL_PXN_C2C", "NCCL_PXN_DISABLE",
    "NCCL_RAS_ADDR", "NCCL_RAS_ENABLE", "NCCL_RAS_TIMEOUT_FACTOR",
    "NCCL_REPORT_CONNECT_PROGRESS", "NCCL_RMA_DISABLE", "NCCL_RMA_PLUGIN",
    "NCCL_RMA_PLUGIN_REF_COUNT", "NCCL_RMA_PROXY_DUMP_SIGNAL", "NCCL_RMA_PROXY_QUEUE_SIZE",
    "NCCL_RUNTIME_CONNECT", "NCCL_SET_CPU_STACK_SIZE", "NCCL_SET_STACK_SIZE",
    "NCCL_SET_THREAD_NAME", "NCCL_SHADOW_MEMPOOL_MAX_SIZE", "NCCL_SHM_DISABLE",
    "NCCL_SHM_LOCALITY", "NCCL_SINGLE_PROC_MEM_REG_ENABLE", "NCCL_SINGLE_RING_THRESHOLD",
    "NCCL_SOCKET_FAMILY", "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_INLINE",
    "NCCL_SOCKET_MAGIC", "NCCL_SOCKET_MIN_TASKSIZE", "NCCL_SOCKET_NTHREADS",
    "NCCL_SOCKET_POLL_TIMEOUT_MSEC", "NCCL_SOCKET_RCVBUF", "NCCL_SOCKET_RETRY_CNT",
    "NCCL_SOCKET_RETRY_SLEEP_MSEC", "NCCL_SOCKET_SNDBUF", "NCCL_SYM_CE_THRESHOLD",
    "NCCL_SYM_CTAS", "NCCL_SYM_GIN_KERNELS_ENABLE", "NCCL_SYM_KERNEL",
    "NCCL_SYM_NOWIN_ENABLE", "NCCL_SYM_REUSE_SYSMEM_HANDLES", "NCCL_SYM_RS_GIN_CHUNK_SIZE",
    "NCCL_SYM_TMA_ENABLE", "NCCL_THREAD_THRESHOLDS", "NCCL_TOPO_DUMP_FILE",
    "NCCL_TOPO_DUMP_FILE_RANK", "NCCL_TOPO_FILE", "NCCL_TOPO_SPLIT_MLOPART",
    "NCCL_TREE_THRESHOLD", "NCCL_TUNER_PLUGIN", "NCCL_UID_STAGGER_RATE",
    "NCCL_UID_STAGGER_THRESHOLD", "NCCL_UNPACK_DOUBLE_NCHANNELS", "NCCL_WARN_ENABLE_DEBUG_INFO",
    "NCCL_WIN_ENABLE", "NCCL_WIN_STRIDE", "NCCL_WORK_ARGS_BYTES",
    "NCCL_WORK_FIFO_BYTES",
};

// Sorted. PyTorch 2.2+ names; older releases read the NCCL_-prefixed forms
// listed in kWrongNames below (still accepted, with a deprecation warning).
constexpr std::string_view kTorchNames[] = {
    "TORCH_DISTRIBUTED_DEBUG",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_NCCL_AVOID_RECORD_STREAMS",
    "TORCH_NCCL_BCAST_UNIQUEID",
    "TORCH_NCCL_BLOCKING_WAIT",
    "TORCH_NCCL_COORD_CHECK_MILSEC",
    "TORCH_NCCL_CUDA_EVENT_CACHE",
    "TORCH_NCCL_DEBUG_INFO_PIPE_FILE",
    "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
    "TORCH_NCCL_DESYNC_DEBUG",
    "TORCH_NCCL_DUMP_ON_TIMEOUT",
    "TORCH_NCCL_ENABLE_MONITORING",
    "TORCH_NCCL_ENABLE_TIMING",
    "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC",
    "TORCH_NCCL_HIGH_PRIORITY",
    "TORCH_NCCL_LOG_CPP_STACK_ON_UNCLEAN_SHUTDOWN",
    "TORCH_NCCL_NAN_CHECK",
    "TORCH_NCCL_NONBLOCKING_TIMEOUT",
    "TORCH_NCCL_PROPAGATE_ERROR",
    "TORCH_NCCL_RANKS_PER_ROOT",
    "TORCH_NCCL_RETHROW_CUDA_ERRORS",
    "TORCH_NCCL_SHOW_EAGER_INIT_P2P_SERIALIZATION_WARNING",
    "TORCH_NCCL_TRACE_BUFFER_SIZE",
    "TORCH_NCCL_TRACE_CPP_STACK",
    "TORCH_NCCL_USE_COMM_NONBLOCKING",
    "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
    "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC",
};

constexpr std::string_view kCudaNames[] = {"CUDA_DEVICE_ORDER", "CUDA_VISIBLE_DEVICES"};

// Names that look like NCCL settings but that NCCL (and current PyTorch)
// does not read. The only place in src/ where such names may appear.
constexpr WrongName kWrongNames[] = {
    {"NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
     "an old PyTorch name (before 2.2); NCCL never reads it"},
    {"NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT", "an old PyTorch name (before 2.2); NCCL never reads it"},
    {"NCCL_DESYNC_DEBUG", "TORCH_NCCL_DESYNC_DEBUG", "an old PyTorch name (before 2.2); NCCL never reads it"},
    {"NCCL_ENABLE_TIMING", "TORCH_NCCL_ENABLE_TIMING", "an old PyTorch name (before 2.2); NCCL never reads it"},
    {"NCCL_IB_BUFFER_SIZE", "NCCL_BUFFSIZE", "no NCCL version reads it"},
    {"NCCL_IB_GDR_LEVEL", "NCCL_NET_GDR_LEVEL", "renamed in NCCL 2.4.0 and no longer read"},
    {"NCCL_IB_QPS_PER_PORT", "NCCL_IB_QPS_PER_CONNECTION", "no NCCL version reads it"},
    {"NCCL_TIMEOUT", "",
     "no NCCL version reads it; a collective timeout is init_process_group(timeout=...) in the training script"},
    {"NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK", "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
     "an old PyTorch name (before 2.2); NCCL never reads it"},
};

template <size_t N>
bool InSorted(const std::string_view (&names)[N], std::string_view name) {
  return std::binary_search(std::begin(names), std::end(names), name);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool IsRealVariableName(std::string_view name) {
  return InSorted(kNcclNames, name) || InSorted(kTorchNames, name) ||
         std::find(std::begin(kCudaNames), std::end(kCudaNames), name) != std::end(kCudaNames);
}

std::vector<std::string_view> RealVariableNames() {
  std::vector<std::string_view> all(std::begin(kNcclNames), std::end(kNcclNames));
  all.insert(all.end(), std::begin(kTorchNames), std::end(kTorchNames));
  all.insert(all.end(), std::begin(kCudaNames), std::end(kCudaNames));
  return all;
}

std::span<const WrongName> WrongVariableNames() { return kWrongNames; }

bool LooksLikeNcclName(std::string_view name) {
  return name.starts_with("NCCL_") || name.starts_with("TORCH_NCCL_");
}

std::optional<std::string> ExplainUnknownName(std::string_view name) {
  if (IsRealVariableName(name)) return std::nullopt;
  for (const WrongName& wrong : kWrongNames) {
    if (wrong.name != name) continue;
    if (wrong.right.empty()) return std::string(wrong.why);
    return fmt::format("{}; the real variable is {}", wrong.why, wrong.right);
  }
  // A typo: the closest real name, when it is close enough to be meant.
  std::string_view best;
  size_t best_distance = 3;
  for (std::string_view real : RealVariableNames()) {
    size_t distance = EditDistance(name, real);
    if (distance < best_distance) best = real, best_distance = distance;
  }
  if (!best.empty()) return fmt::format("neither NCCL nor PyTorch reads it; did you mean {}?", best);
  return std::string("neither NCCL nor PyTorch reads it");
}

}  // namespace topolaunch
