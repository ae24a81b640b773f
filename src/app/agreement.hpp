#pragma once
// Ranks agree before anything collective: every rank turns its validated
// command (or its parse error) into a canonical text, hashes it, and one
// reduction compares the hashes. Ranks started with different arguments (an
// MPMD launch, or an environment that differs between nodes) are refused
// with one line instead of deadlocking in the first collective they do not
// share.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "asyncsolve/par/comm.hpp"
#include "cli.hpp"

namespace asyncsolve::app {

/// Local: the command as canonical text, "key=value" lines of every field
/// of its typed config (numbers exactly, in hexadecimal floating point;
/// choices by name). Two commands that run alike give the same text.
/// Every field of a config must be written here; tests/unit/test_agreement
/// changes each option of every table and checks that the text changes.
std::string canonical(const Command& command);

/// Local: FNV-1a (64 bit) of `text`.
std::uint64_t fnv1a(std::string_view text);

/// Collective over `world`, one MPI_Allreduce, before any communicator is
/// created: true when every rank has the same `hash`.
bool ranks_agree(const par::Comm& world, std::uint64_t hash);

/// The one-line error when ranks disagree.
std::string disagreement_message();

/// What a rank that could not parse its command line passes as its text.
inline constexpr std::string_view unparsed_command = "error";

/// Collective over `world` (after ranks_agree said no, on every rank): the
/// one-line error naming the first field of canonical `text` in which the
/// lowest rank that differs from rank 0 differs, with both values (a rank
/// that failed to parse its command line passes unparsed_command).
std::string disagreement_message(const par::Comm& world, const std::string& text);

}  // namespace asyncsolve::app
