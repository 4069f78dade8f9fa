#include "config.h"

#include "tool/tool.h"

int main(int argc, char **argv) { return tool_main(argc, argv); }
