/**
 * The benchmark's results: one row per figure, the machine it ran on, and
 * the Markdown table printed and kept in BENCHMARKS.md.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import process from "node:process";
import { runtimeName } from "../lib/sqlite/driver/load.ts";

/** How a figure is read: times (lower is better) or rates (higher is better). */
export type Unit = "ms" | "msgs/s" | "MB" | "s";

/** One figure beside its raw floor. */
export interface Row {
  readonly group: string;
  readonly op: string;
  readonly unit: Unit;
  /** Ours (p50 for latencies); `undefined` when the library part is not in yet. */
  ours?: number;
  /** Ours, p95 or p99 where it matters. */
  oursTail?: number;
  /** The raw floor over `lib/driver`. */
  raw?: number;
  rawTail?: number;
  /** The raw floor on the runtime module itself. */
  native?: number;
  /** Which percentile `*Tail` holds. */
  tail?: "p95" | "p99";
  /** The target, as text. */
  target?: string;
  /** Whether the target is met. */
  pass?: boolean;
  /** Whether ours returned what the raw floor returned. */
  same?: boolean;
  note?: string;
}

/** Where the benchmark ran. */
export interface Machine {
  readonly runtime: string;
  readonly runtimeVersion: string;
  readonly sqlite: string;
  readonly nproc: number;
  readonly memory: string;
  readonly cpu: string;
  readonly os: string;
  readonly load: string;
}

function shell(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
}

/**
 * Describes this machine and runtime.
 *
 * @param sqlite The SQLite version the driver reports.
 * @returns The description.
 */
export function machine(sqlite: string): Machine {
  const runtime = runtimeName();
  const g = globalThis as { Deno?: { version: { deno: string } }; Bun?: { version: string } };
  const runtimeVersion = runtime === "deno"
    ? g.Deno!.version.deno
    : runtime === "bun"
    ? g.Bun!.version
    : process.versions.node;
  let cpu = "?";
  try {
    cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.+)/)?.[1] ?? "?";
  } catch {
    // Not Linux.
  }
  const free = shell("free", ["-h"]).split("\n")[1]?.trim().split(/\s+/) ?? [];
  return {
    runtime,
    runtimeVersion,
    sqlite,
    nproc: Number(shell("nproc", [])) || os.cpus().length,
    memory: free.length > 3 ? `${free[1]} total, ${free[6] ?? free[3]} available` : "?",
    cpu,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    load: os.loadavg().map((l) => l.toFixed(2)).join(" "),
  };
}

function fmt(value: number | undefined, unit: Unit): string {
  if (value === undefined || Number.isNaN(value)) return "—";
  if (unit === "msgs/s") return Math.round(value).toLocaleString("en-US");
  if (unit === "MB") return value.toFixed(0);
  if (unit === "s") return value.toFixed(2);
  return value < 1 ? value.toFixed(3) : value < 10 ? value.toFixed(2) : value.toFixed(1);
}

function cell(value: number | undefined, tail: number | undefined, unit: Unit): string {
  const main = fmt(value, unit);
  return tail === undefined || value === undefined ? main : `${main} / ${fmt(tail, unit)}`;
}

/**
 * `ours ÷ raw`: above 1 means slower for times, faster for rates.
 *
 * @param row The row.
 * @returns The ratio, or `undefined`.
 */
export function ratio(row: Row): number | undefined {
  if (row.ours === undefined || row.raw === undefined || row.raw === 0) return undefined;
  return row.ours / row.raw;
}

/**
 * The Markdown table of every row.
 *
 * @param rows The rows.
 * @returns The table.
 */
export function table(rows: readonly Row[]): string {
  const lines = [
    "| what | unit | ours | raw floor (lib/driver) | ours ÷ raw | raw, no adapter | target | met | same result | note |",
    "| --- | --- | ---: | ---: | ---: | ---: | --- | :---: | :---: | --- |",
  ];
  for (const row of rows) {
    const unit = row.tail ? `${row.unit} p50 / ${row.tail}` : row.unit;
    const r = ratio(row);
    lines.push(
      `| ${row.group}: ${row.op} | ${unit} | ${cell(row.ours, row.oursTail, row.unit)} | ${
        cell(row.raw, row.rawTail, row.unit)
      } | ${r === undefined ? "—" : `${r.toFixed(2)}×`} | ${fmt(row.native, row.unit)} | ${
        row.target ?? ""
      } | ${row.pass === undefined ? "" : row.pass ? "yes" : "**no**"} | ${
        row.same === undefined ? "" : row.same ? "yes" : "**no**"
      } | ${row.note ?? ""} |`,
    );
  }
  return lines.join("\n");
}

/**
 * The machine as Markdown lines.
 *
 * @param m The machine.
 * @returns The text.
 */
export function machineText(m: Machine): string {
  return [
    `- Runtime: ${m.runtime} ${m.runtimeVersion}, SQLite ${m.sqlite}`,
    `- CPU: ${m.cpu}, nproc ${m.nproc}; memory: ${m.memory}`,
    `- OS: ${m.os}; load average at the end: ${m.load}`,
  ].join("\n");
}
