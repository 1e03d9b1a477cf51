// Reading `ibnetdiscover` text dumps into the fabric model.
#pragma once

#include <string_view>

#include "topolaunch/fabric.h"
#include "topolaunch/result.h"
#include "topolaunch/sources.h"

namespace topolaunch {

/// Parses ibnetdiscover's default text output (also ibsim's net-file format:
/// `Hca` records, ids such as "Switch1", an omitted remote port).
/// Tolerates CRLF, a UTF-8 byte-order mark, junk before the first record,
/// comments, blank lines, `ibnetdiscover -g` chassis headers and ibsim's `do`
/// lines; skipped junk is named in the result's `notes`. The result has source "ibnetdiscover", nodes in file order, ports
/// sorted by number, and every cable on both of its ends (a cable listed from
/// one side only gets its other end made). LIDs: a switch port carries the
/// switch's port 0 LID, a CA port its own base LID. Port state is empty
/// (dumps do not carry it); width/speed are empty when the dump prints "??".
///
/// Errors (kBadInput), every problem named `file_name:line`, at most 20 then a
/// count: a cut or malformed record or port line, a bad GUID, a port line
/// outside a record, a duplicate node id or GUID, a port listed twice or out
/// of range, a cable to a node with no record in the file, two ports that
/// disagree about a cable, stray lines after the first record, no records at
/// all (with a special message for an `ibnetdiscover -p` ports report), and
/// binary data. `text` must stay alive only during the call.
Result<Fabric> ParseIbnetdiscover(std::string_view text, std::string_view file_name);

}  // namespace topolaunch
