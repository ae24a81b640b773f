#pragma once
// The option table of a subcommand: one row per option, holding its name,
// the form of its value, its range, its default, its help and where it does
// something (which method, variant, transport, mode). Everything that judges
// or describes an option reads the rows: the CLI11 declaration, the strict
// number parser (no "0x10" read as 0, no trailing garbage, a message quoting
// what was typed and the limits), the refusal of options given where they do
// nothing, --help, and the option reference's table in docs/options.md
// (asyncsolve --options-table). A new option is one call here, in its
// subcommand's add_*_options. Pure: no MPI, no output.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace asyncsolve::app {

/// The closed range [min, max] of a number option.
struct Range {
  double min = 0.0;
  double max = 0.0;
};

/// One condition on the configuration: the option `dimension` ("--method",
/// "--variant", "--transport", "--modes", ...) takes one of `values` (as the
/// command line spells them).
struct Condition {
  std::string dimension;
  std::vector<std::string> values;
};

/// Where an option does something: any of the alternatives, each all of its
/// conditions. No alternatives: everywhere.
struct Applies {
  std::vector<std::vector<Condition>> any;
  /// Where a later check refuses it within those alternatives, in words
  /// ("not with --matrix"): shown in parentheses after them.
  std::string except = {};

  /// True everywhere.
  bool everywhere() const { return any.empty(); }
  /// "--method jacobi, --variant async|racy" (alternatives joined by " or "),
  /// or "everywhere"; then " (except)" where given.
  std::string text() const;
};

/// Shorthand for an Applies with one alternative.
Applies applies_when(std::vector<Condition> all);

/// The configuration an option is judged against: the value(s) of each
/// dimension (several for a list such as --modes).
struct Context {
  struct Dimension {
    std::string name;                 ///< "--method"
    std::vector<std::string> values;  ///< {"cg"}
  };
  std::vector<Dimension> dimensions;

  /// The values of `dimension`; empty when the context does not know it.
  const std::vector<std::string>* find(std::string_view dimension) const;
};

/// True when `applies` holds in `context` (a dimension the context does not
/// know counts as holding).
bool holds(const Applies& applies, const Context& context);

/// One option of a subcommand.
struct OptionRow {
  std::string names;           ///< as declared: "-i,--iterations"
  std::string name;            ///< as messages name it: the first of `names` ("-i")
  std::string value;           ///< the value's form: "N", "X", "X,Y,Z", "a|b|c"; empty: a flag
  std::optional<Range> range;  ///< numbers only
  bool integer = false;        ///< an integer number
  std::string default_text;    ///< shown in --help and docs/options.md
  /// The (canonical) value that leaves the option at its default: given with
  /// it, the option counts as not given. Empty optional: any given value
  /// counts (options without a default, flags).
  std::optional<std::string> unchanged;
  Applies applies;
  std::string sample;  ///< a valid value other than the default (tests, fuzzing)
  std::string help;
  std::string limits;   ///< text options: their range in words ("each 1 to 1e9")
  std::string noun;     ///< what a number is called in messages ("a fraction of T"); empty: plain
  std::string note;     ///< appended to a number's message: " (why the limit)"
  bool hidden = false;  ///< a test hook: not in --help or docs/options.md
  CLI::Option* option = nullptr;
};

/// What an option's declaration says beyond its name and target.
struct OptionSpec {
  std::string help;
  Applies applies = {};
  std::string shown_default = {};  ///< --help and docs/options.md default (else the target's value)
  std::string sample = {};         ///< a valid non-default value
  std::string value = {};          ///< the value's form for text options ("X,Y,Z")
  std::string limits = {};         ///< text options: their range in words ("each 1 to 1e9")
  std::string noun = {};           ///< numbers: "a fraction of T_masteronly" in messages
  std::string note = {};           ///< numbers: " (at most 34 sites)" after the message
  bool hidden = false;
};

/// The options of one subcommand, declared on its CLI::App.
class OptionTable {
 public:
  /// `command` names the subcommand in docs/options.md ("solve", "bench allreduce").
  OptionTable(CLI::App& app, std::string command);
  OptionTable(const OptionTable&) = delete;
  OptionTable& operator=(const OptionTable&) = delete;

  /// A number option written into `target` (int, long or double) once CLI11
  /// has parsed it: the text must be a decimal number (integers: digits with
  /// an optional '-') inside `range`, or the parse throws core::InputError
  /// "NAME TEXT: expected an integer from MIN to MAX". `target`'s value is the
  /// default; a default outside the range means "not given" (any given value
  /// counts).
  template <class T>
  CLI::Option* number(const std::string& names, T& target, Range range, OptionSpec spec) {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
    constexpr bool integer = std::is_integral_v<T>;
    if constexpr (integer) {
      range.min = std::max(range.min, static_cast<double>(std::numeric_limits<T>::min()));
      range.max = std::min(range.max, static_cast<double>(std::numeric_limits<T>::max()));
    }
    OptionRow& row = add_number_row(names, static_cast<double>(target), range, integer, spec);
    return declare(row, bind(names, target, row.help));
  }

  /// A text option (choices, lists, sizes) validated after the parse by its
  /// subcommand; its target's value is the default.
  CLI::Option* text(const std::string& names, std::string& target, OptionSpec spec);

  /// A choice option: `choices` (their spelling) form its value and help.
  CLI::Option* choice(const std::string& names, std::string& target,
                      const std::vector<std::string>& choices, OptionSpec spec);

  /// A path option (--json, --fit): an empty name is refused at the parse.
  CLI::Option* path(const std::string& names, std::string& target, OptionSpec spec);

  /// A flag (false by default; given, it counts).
  CLI::Option* flag(const std::string& names, bool& target, OptionSpec spec);

  /// Throws core::InputError for the first option given with a value other
  /// than its default where it does nothing in `context`: "NAME VALUE with
  /// DIMENSION VALUE: NAME applies to WHERE, expected no NAME".
  void refuse_inapplicable(const Context& context) const;

  /// True when the command line gave `name` with a value other than its default.
  bool changed(const OptionRow& row) const;

  const std::string& command() const { return command_; }
  const std::vector<OptionRow>& rows() const { return rows_; }
  /// The row named `name` ("--tol" or "-i"); null if none.
  const OptionRow* find(std::string_view name) const;

  /// docs/options.md's rows: "| `solve` | `--tol X` | 1e-300 to 1 | ... |".
  std::string markdown() const;

 private:
  OptionRow& add_row(const std::string& names, OptionSpec spec);
  OptionRow& add_number_row(const std::string& names, double initial, Range range, bool integer,
                            const OptionSpec& spec);
  CLI::Option* declare(OptionRow& row, CLI::Option* option);
  CLI::Option* bind(const std::string& names, int& target, const std::string& help);
  CLI::Option* bind(const std::string& names, long& target, const std::string& help);
  CLI::Option* bind(const std::string& names, double& target, const std::string& help);

  CLI::App& app_;
  std::string command_;
  std::vector<OptionRow> rows_;
};

/// The one-line message of a number option given `text` outside its range
/// or not a number: "NAME TEXT: expected an integer from MIN to MAX".
std::string number_message(const OptionRow& row, std::string_view text);

/// Parses `text` as `row` says (strictly, inside its range) and returns the
/// canonical text; throws core::InputError with number_message otherwise.
std::string check_number(const OptionRow& row, std::string_view text);

/// `text` as a message quotes a value: as it is when it is a plain token
/// (letters, digits, . , : / + - _), else in single quotes with control
/// characters escaped.
std::string quote_value(std::string_view text);

/// Markdown header of OptionTable::markdown()'s rows.
std::string markdown_header();

}  // namespace asyncsolve::app
