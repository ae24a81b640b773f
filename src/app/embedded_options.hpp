#pragma once
// The solve options of a caller that holds its matrix in memory (the Python
// package's keywords): every option of `asyncsolve solve` that applies to a
// matrix, named as a keyword (max_iters for --max-iters), parsed and
// validated by the command line's own code (parse_command_line, as
// `asyncsolve solve --matrix`), so the ranges and the messages are the
// command's. Pure: no MPI, no output.
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

namespace asyncsolve::app {

/// One keyword as a caller gave it: its value as text (a flag: `flag` set,
/// the value unused; a flag given as false is left out by the caller).
struct NamedOption {
  std::string keyword;  ///< "max_iters"
  std::string value;    ///< "200"
  bool flag = false;    ///< True or False: value "" (True) or "False"
};

/// The solve table's option of a keyword ("max_iters" -> "--max-iters").
std::string option_of_keyword(std::string_view keyword);

/// The keywords, in --help's order: every option of the solve table except
/// those that say where the system comes from or what grid it is on
/// (--problem, --offset, --global, --local, --dims, --matrix, --rhs, --x0,
/// --write-solution, --assemble, --matrix-memory, --json), those a matrix
/// always refuses (--hybrid, --threads, --copy, --shift) and those of
/// --method lanczos. A new option of the table is a keyword without change
/// here.
std::vector<std::string> embedded_keywords();

/// The methods a matrix can be solved with (--method's names but lanczos).
std::vector<std::string> embedded_methods();

/// Pure: the command `asyncsolve solve --matrix NAME` with `options`,
/// parsed and validated (Command::solve; the matrix path is `matrix_name`,
/// which the document and some messages show). Throws core::InputError
/// with one line: "unexpected keyword 'x': expected one of ..." for a name
/// that is not a keyword, and every message of the command line's
/// validation otherwise.
/// `args`, if given, receives the command line parsed.
Command parse_embedded(const std::vector<NamedOption>& options, std::string_view matrix_name,
                       std::vector<std::string>* args = nullptr);

}  // namespace asyncsolve::app
