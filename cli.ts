#!/usr/bin/env -S deno run -A
/**
 * The `hermes-state` command line: `deno run -A cli.ts --help`.
 *
 * @module
 */
import { main } from "./lib/cli/main.ts";
import { defaultIo, exit, getArgs } from "./lib/cli/io.ts";

if (import.meta.main) exit(await main(getArgs(), defaultIo()));
