// nightjar: Linux kernel performance regression harness. Thin entry point.
#include "harness/cli/cli.h"

int main(int argc, char** argv) {
  return nightjar::cli_main(argc, argv);
}
