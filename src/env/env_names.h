// Which environment variable names NCCL, PyTorch and CUDA really read.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace topolaunch {

/// A name people set that nothing reads, with the real one when there is one.
struct WrongName {
  std::string_view name;   ///< "NCCL_IB_QPS_PER_PORT"
  std::string_view right;  ///< "NCCL_IB_QPS_PER_CONNECTION", or "" when there is none
  std::string_view why;    ///< one line for the user
};

/// True when NCCL, PyTorch's ProcessGroupNCCL or the CUDA runtime reads `name`.
bool IsRealVariableName(std::string_view name);

/// Every real name (NCCL's, then PyTorch's, then CUDA's).
std::vector<std::string_view> RealVariableNames();

/// The table of wrong names (static storage).
std::span<const WrongName> WrongVariableNames();

/// True for names in NCCL's or PyTorch's NCCL namespace ("NCCL_*",
/// "TORCH_NCCL_*"): the ones worth warning about when they are not real.
bool LooksLikeNcclName(std::string_view name);

/// nullopt for a real name; otherwise why it is wrong, naming the right
/// variable when there is one (from the wrong-name table, or the closest real
/// name within two edits: "did you mean NCCL_IB_HCA?").
std::optional<std::string> ExplainUnknownName(std::string_view name);

}  // namespace topolaunch
