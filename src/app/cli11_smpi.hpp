#pragma once
// CLI11 for the simulation build: smpicxx force-includes SimGrid's
// smpi_helpers.h, which defines exit(x) as a macro, and CLI11 declares a
// three-argument App::exit. CMake force-includes this header into the app
// sources of the simulation build only (after smpi_helpers.h): CLI11 is read
// once without the macro, which is then restored for the rest of the file.
#pragma push_macro("exit")
#undef exit
#include <CLI/CLI.hpp>
#pragma pop_macro("exit")
