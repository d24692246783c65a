// Subcommands register themselves here, so that each lives in its own file
// (info_command.cpp, check_command.cpp, bench_command.cpp, tune_command.cpp, ...).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace fp8gemm::cli {

// Adds one subcommand (with its callback) to the app. Called once at start-up.
using CommandAdder = std::function<void(CLI::App& app)>;

std::vector<CommandAdder>& command_adders();

struct CommandRegistrar {
  explicit CommandRegistrar(CommandAdder adder) { command_adders().push_back(std::move(adder)); }
};

// Exit code a subcommand callback wants; set by callbacks, returned by main.
int& exit_code();

}  // namespace fp8gemm::cli
