// Reading an audit report back (schema topolaunch.audit/1), for `plan
// --audit` and `show --audit`.
#pragma once

#include <string_view>

#include "audit/audit_findings.h"
#include "topolaunch/result.h"

namespace topolaunch {

/// The report FormatAuditJson wrote. Each finding needs severity, check and
/// message; host, switch_guid, switch_name, port, peer and reasons may be
/// absent or null. Unknown keys are ignored (later versions may add some);
/// `generated`, `checks_run` and `checks_failed_to_run` are read when present.
/// Errors (kBadInput, every problem with its JSON path): not JSON, not an
/// object, the wrong schema, a missing or mistyped field, an unknown severity.
Result<AuditReport> ParseAuditJson(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
