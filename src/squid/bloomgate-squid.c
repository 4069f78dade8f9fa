#include "config.h"

#include "squid/squid_cli.h"

int main(int argc, char **argv) { return squid_main(argc, argv); }
