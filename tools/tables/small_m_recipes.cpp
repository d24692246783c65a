// fp8gemm_small_m_recipes --sms N: small_m's recipes for tools/tables/fit_default_rules.py. Reads one
// request a line from stdin and answers each with one line of tab-separated fields:
//
//   recipes B M N K CONFIG...   per CONFIG (a small_m config name), every recipe that gives it on
//                               the problem (space-separated, recipe_of's first), or "!" and the
//                               reason where the name does not parse
//   configs B M N K RECIPE...   per RECIPE, the config it gives the problem, or "-" where it gives
//                               none or that config cannot run the problem
//   candidates B M N K          every candidate config, each as "CONFIG RECIPE"
//   launch B M N K CONFIG...    per CONFIG, "SHARED_BYTES BLOCKS KBLOCKS_PER_SPLIT THREADS" of its
//                               launch (launch_shape), or "-" where it cannot run the problem
//
//   cutlass 1 1 16 16           every CUTLASS tactic name of configs.def, built or not (the fit
//                               drops measured names that no longer exist)
//
// The problem is e4m3 x e4m3 -> bf16, 16-byte aligned (what the fit's data measured).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cutlass/config.h"
#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_layout.h"
#include "backends/small_m/small_m_recipe.h"

namespace {

using namespace fp8gemm;
using namespace fp8gemm::small_m;

std::string answer(const std::string& line, int sms) {
  std::istringstream in(line);
  std::string command;
  Problem p;
  in >> command >> p.batch >> p.m >> p.n >> p.k;
  if (!in) return "!expected COMMAND B M N K";
  std::vector<std::string> args;
  for (std::string a; in >> a;) args.push_back(a);
  std::ostringstream out;
  const char* sep = "";
  if (command == "recipes") {
    for (const std::string& name : args) {
      out << sep;
      sep = "\t";
      try {
        const char* space = "";
        for (const Recipe& r : recipes_of(p, parse_config(name), sms)) out << space << r.to_string(), space = " ";
      } catch (const std::exception& e) {
        out << "!" << e.what();
      }
    }
  } else if (command == "configs") {
    for (const std::string& text : args) {
      out << sep;
      sep = "\t";
      const std::optional<Config> c = config_for(p, parse_recipe(text), sms);
      out << (c && can_implement(p, *c, 90) ? c->to_string() : "-");
    }
  } else if (command == "launch") {
    for (const std::string& name : args) {
      out << sep;
      sep = "\t";
      const Config c = parse_config(name);
      if (!can_implement(p, c, 90)) {
        out << "-";
        continue;
      }
      const LaunchShape l = launch_shape(p, c, sms);
      out << l.shared_bytes << " " << int64_t(l.grid[0]) * l.grid[1] * l.grid[2] << " " << l.kblocks_per_split << " "
          << l.threads;
    }
  } else if (command == "cutlass") {
    for (const cutlass_backend::ConfigRow& row : cutlass_backend::config_table())
      for (bool pdl : {false, true}) {
        if (pdl && row.config.scheduler == cutlass_backend::TileScheduler::StreamK) continue;
        cutlass_backend::KernelConfig c = row.config;
        c.pdl = pdl;
        out << sep << "cutlass:" << c.name();
        sep = "\t";
      }
  } else if (command == "candidates") {
    for (const Config& c : candidate_configs(p, sms, 90)) {
      out << sep << c.to_string() << " " << recipe_of(p, c, sms).to_string();
      sep = "\t";
    }
  } else {
    return "!unknown command " + command;
  }
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--sms") != 0) {
    std::cerr << "usage: fp8gemm_small_m_recipes --sms N < requests\n";
    return 2;
  }
  const int sms = std::atoi(argv[2]);
  std::ios::sync_with_stdio(false);
  for (std::string line; std::getline(std::cin, line);) {
    try {
      std::cout << answer(line, sms) << "\n";
    } catch (const std::exception& e) {
      std::cout << "!" << e.what() << "\n";
    }
  }
  return 0;
}
