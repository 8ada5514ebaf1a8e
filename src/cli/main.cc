// trainyard: the command-line client. All logic is in the ty_cli library (cli/cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ty::cli::RunCli(args, std::cout, std::cerr);
}
