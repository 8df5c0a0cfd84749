/**
 * Child process of `recover_memory_test.ts`: recovers `argv[2]` into
 * `argv[3]` and prints the messages recovered, under the heap limit its
 * parent gives the runtime.
 *
 * @module
 */
import process from "node:process";
import { recoverDatabase } from "../../lib/health/recover.ts";

const [source, dest] = process.argv.slice(2);
const result = await recoverDatabase(source, dest);
process.stdout.write(`${result.messages}\n`);
