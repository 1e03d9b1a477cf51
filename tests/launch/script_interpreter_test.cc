#include "launch/script_interpreter.h"

#include <gtest/gtest.h>

namespace topolaunch {
namespace {

std::string FindInFakePath(const std::string& name) { return name == "python3" ? "/opt/venv/bin/python3" : ""; }

Result<std::string> Of(std::string_view path, std::string_view head) { return InterpreterOf(path, head, FindInFakePath); }

TEST(InterpreterOf, ReadsTheInterpreterTorchrunRunsUnder) {
  // Debian's and pip's launchers, with and without a space and options.
  EXPECT_EQ(*Of("/usr/bin/torchrun", "#! /usr/bin/python3\nimport re\n"), "/usr/bin/python3");
  EXPECT_EQ(*Of("/v/bin/torchrun", "#!/v/bin/python3.11 -E\r\n# -*- coding: utf-8 -*-\n"), "/v/bin/python3.11");
  EXPECT_EQ(*Of("/x/torchrun", "#!/usr/bin/env python3\n"), "/opt/venv/bin/python3");
  EXPECT_EQ(*Of("/x/torchrun", "#!/usr/bin/env -S PYTHONNOUSERSITE=1 python3 -u\n"), "/opt/venv/bin/python3");
  // pip's launcher when the interpreter's path is too long for #!.
  EXPECT_EQ(*Of("/x/torchrun", "#!/bin/sh\n'''exec' \"/very/long/env/bin/python\" \"$0\" \"$@\"\n' '''\nimport sys\n"),
            "/very/long/env/bin/python");
  // `--torchrun 'python3 -m torch.distributed.run'`: the program is the interpreter.
  EXPECT_EQ(*Of("/usr/bin/python3.11", "\x7f" "ELF\x02\x01\x01"), "/usr/bin/python3.11");
}

TEST(InterpreterOf, SaysWhyWhenItCannotTell) {
  struct Case {
    std::string_view head, says;
  } cases[] = {
      {"\x7f" "ELF\x02\x01", "/x/torchrun: cannot tell which Python it runs: a binary program, not a Python script"},
      {"import sys\n", "/x/torchrun: cannot tell which Python it runs: no #! line"},
      {"#!/usr/bin/python3", "its #! line does not end within the first bytes"},
      {"#!\n", "an empty #! line"},
      {"#!/usr/bin/env -S\n", "#!/usr/bin/env -S names no program"},
      {"#!/usr/bin/env python9\n", "#!/usr/bin/env python9: python9 not found in PATH"},
      {"#!/bin/bash\nexec python3 -m torch.distributed.run \"$@\"\n", "a shell script (#!/bin/bash), not a Python launcher"},
      {"", "no #! line"},
  };
  for (const Case& c : cases) {
    Result<std::string> r = Of("/x/torchrun", c.head);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(r.error().Message().find(c.says), std::string::npos) << r.error().Message();
  }
}

}  // namespace
}  // namespace topolaunch
