/**
 * Child process of the memory test of `syncFile()`: ships one file and
 * reports the process's peak resident set, so that the parent's building
 * of the file does not count.
 *
 * Usage: `<runtime> tests/store/_sync_memory_child.ts <file> <url>`. Prints
 * one JSON line: `{ baselineMb, peakMb, messages }`: the resident set
 * (Linux `VmRSS`) once the modules are loaded and the server reached, and
 * the peak one (`VmHWM`) after the pass.
 *
 * @module
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { connectSyncTarget, syncFile } from "../../lib/postgres/sync.ts";

/** A figure of `/proc/self/status`, in megabytes. */
function statusMb(field: "VmHWM" | "VmRSS"): number {
  const status = readFileSync("/proc/self/status", "utf8");
  return Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? NaN) / 1024;
}

async function main(file: string, url: string): Promise<void> {
  const client = await connectSyncTarget(url);
  try {
    const baselineMb = statusMb("VmRSS");
    const result = await syncFile(client, file, { origin: "memory", host: "memory" });
    const peakMb = statusMb("VmHWM");
    process.stdout.write(JSON.stringify({ baselineMb, peakMb, messages: result.messages }) + "\n");
  } finally {
    await client.close();
  }
}

if (import.meta.main) await main(process.argv[2], process.argv[3]);
