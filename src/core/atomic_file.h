// Writing output files so that readers never see half of one.
#pragma once

#include <string>
#include <string_view>

#include "topolaunch/result.h"

namespace topolaunch {

/// Writes `contents` to a temporary file beside `path`, fsyncs it and renames
/// it over `path`. On any error the temporary file is removed and `path` is
/// untouched; the error (kUnavailable) names `path` and the OS reason.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace topolaunch
