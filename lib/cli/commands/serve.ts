/**
 * `hermes-state serve`: the session browser, served from this process over
 * the store, bound to loopback unless told otherwise (then behind a token).
 *
 * @module
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import type { Command, Context } from "../command.ts";
import { printJson } from "../json.ts";
import { integerOption, type ParsedArgs } from "../parse.ts";
import { CommandError, UsageError } from "../usage_error.ts";
import type { SearchPool } from "../../web/search_pool.ts";
import { quotedArgument } from "../shown_argument.ts";
import { clippedText, clippedWithin } from "../../core/shown_value.ts";

const USAGE = `Usage: hermes-state serve [options]

Serve a session browser for the database in your web browser: the
sessions, search as you type, transcripts with their lineage, usage
charts, exports, and live updates while a gateway writes the file. It
binds 127.0.0.1 by default; any other --host needs a token, generated and
printed once (or given with --token, at least 16 characters), which the
page exchanges for a cookie. The page is read-only unless --allow-writes.
Stop it with Ctrl-C.

Options:
  --host ADDRESS     The address to listen on (default 127.0.0.1)
  --port N           The port (default 8787; 0 picks a free one)
  --token TOKEN      The access token for a non-loopback --host (16+ chars)
  --public-url URL   The address users reach it at (its host is accepted)
  --allow-writes     Allow rename and delete from the page
  --open             Open the page in the default browser
  --json             Print the address as JSON
  --db PATH          The database file, or a postgres:// URL
  -h, --help         Show this help

Examples:
  hermes-state serve
  hermes-state serve --port 9000 --open
  hermes-state serve --host 0.0.0.0 --public-url http://box.lan:8787
`;

/**
 * The fewest characters a `--token` guarding a non-loopback server may have
 * (the one generated has 32 hex digits): a short one is guessed.
 */
const MIN_TOKEN_LENGTH = 16;

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

async function openBrowser(url: string): Promise<void> {
  const { spawn } = await import("node:child_process");
  const { platform } = await import("node:process");
  const [command, args] = platform === "darwin"
    ? ["open", [url]]
    : platform === "win32"
    ? ["cmd", ["/c", "start", "", url]]
    : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // no browser to open: the address is printed anyway
  }
}

async function run(args: ParsedArgs, ctx: Context): Promise<number> {
  const host = (args.string("host") ?? "127.0.0.1").trim();
  if (host === "") throw new UsageError("--host needs an address", { command: "serve" });
  const port = integerOption(args, "port", { fallback: 8787, command: "serve" });
  if (port > 65535) {
    throw new UsageError(`--port must be at most 65535, got "${port}"`, { command: "serve" });
  }
  const publicUrl = args.string("public-url") ?? null;
  if (publicUrl !== null && !URL.canParse(publicUrl)) {
    throw new UsageError(`--public-url must be a URL, got ${quotedArgument(publicUrl)}`, {
      command: "serve",
    });
  }
  const { createHandler } = await import("../../web/handler.ts");
  const { isLoopbackHost, newToken } = await import("../../web/security.ts");
  const { listen } = await import("../../web/listen.ts");
  const given = args.string("token");
  if (given !== undefined && given.trim() === "") {
    throw new UsageError("--token must not be empty", { command: "serve" });
  }
  if (given !== undefined && !isLoopbackHost(host) && given.length < MIN_TOKEN_LENGTH) {
    throw new UsageError(
      `--token must be at least ${MIN_TOKEN_LENGTH} characters on a non-loopback --host ` +
        `(${host}), got ${given.length}: leave --token out and a random one is printed`,
      { command: "serve" },
    );
  }
  // A loopback server needs no token; any other gets the given one or a new one.
  const token = given ?? (isLoopbackHost(host) ? null : newToken());
  // Listen for Ctrl-C and SIGTERM before anything is printed, so a stop request is never missed.
  let stopListening: (() => void) | undefined;
  const interrupted = new Promise<void>((resolve) => {
    stopListening = ctx.io.onInterrupt?.(() => resolve());
  });
  // Read-only (nothing is ever changed) unless the page may rename and delete.
  const store = await ctx.openStore({ access: args.flag("allow-writes") ? "write" : "read" });
  // A file's searches run on worker threads, so a long one never holds up the other requests.
  let pool: SearchPool | undefined;
  if (store.engine === "sqlite") {
    const { startSearchPool } = await import("../../web/search_pool.ts");
    try {
      pool = await startSearchPool(store.target, { workers: 2 });
    } catch (error) {
      ctx.io.stderr(
        `hermes-state: searching on the server's thread (no worker: ${(error as Error).message})\n`,
      );
    }
  }
  const handler = createHandler(store, {
    search: pool === undefined
      ? undefined
      : (query, options, signal) => pool.search(query, options, signal),
    logError: (line) => ctx.io.stderr(`${line}\n`),
    host,
    token,
    publicUrl,
    allowWrites: args.flag("allow-writes"),
    now: () => ctx.io.now(),
  });
  let server;
  try {
    server = await listen(handler, { host, port });
  } catch (error) {
    stopListening?.();
    await pool?.close();
    // A long --host is named by its start, here and where the runtime's reason repeats it.
    const shownHost = clippedText(host);
    const address = host.includes(":") ? `[${shownHost}]:${port}` : `${shownHost}:${port}`;
    // A name is looked up first (Bun says a name that does not resolve is a port in use); an
    // address is judged by the runtime's words, and by this machine's interfaces when it has none.
    const reason = clippedWithin(
      (isIP(host) === 0 ? await unresolved(host) : undefined) ?? listenFailure(error) ??
        notOwnAddress(host) ?? rawReason(error),
      host,
    );
    throw new CommandError(`Cannot listen on ${address}: ${reason}`, {
      cause: error,
    });
  }
  const base = publicUrl ?? `http://${urlHost(host)}:${server.port}/`;
  const url = token === null
    ? base
    : `${base}${base.endsWith("/") ? "" : "/"}?token=${encodeURIComponent(token)}`;
  if (ctx.json) {
    printJson(ctx.io, {
      url,
      host,
      port: server.port,
      store: store.target,
      readonly: store.readonly,
    });
  } else {
    ctx.io.stdout(`Serving ${store.target}${store.readonly ? " (read-only)" : ""}\n`);
    ctx.io.stdout(`Open ${url}\n`);
    if (token !== null) {
      ctx.io.stdout("The token is printed only this once. Ctrl-C stops the server.\n");
    } else ctx.io.stdout("Ctrl-C stops the server.\n");
  }
  if (args.flag("open")) await openBrowser(url);
  await interrupted;
  stopListening?.();
  await server.close();
  await pool?.close();
  if (!ctx.json) ctx.io.stdout("Stopped.\n");
  return 0;
}

/** Why the name `host` does not resolve, or `undefined` when it does. */
async function unresolved(host: string): Promise<string | undefined> {
  try {
    await lookup(host);
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === "ENOTFOUND"
      ? "no such host (the name does not resolve)"
      : `the name could not be resolved (${String(code ?? (error as Error).message)})`;
  }
}

/**
 * "No such address" when `host`, an address, is none of this machine's
 * interfaces' (any of 127.0.0.0/8 is the loopback's), as Deno's `EINVAL`
 * does not say; `undefined` when it is one, or cannot be told.
 */
function notOwnAddress(host: string): string | undefined {
  if (["0.0.0.0", "::"].includes(host) || host.startsWith("127.") || host.includes("%")) {
    return undefined;
  }
  const own = Object.values(networkInterfaces()).flat().map((address) => address?.address);
  if (own.includes(host) || isIP(host) === 6) return undefined;
  return "this machine has no such address (--host must be one of its own, or 0.0.0.0)";
}

/** The runtime's own words for a failure none of the others says. */
function rawReason(error: unknown): string {
  return String((error as { message?: unknown } | null)?.message ?? error);
}

/** Why the server could not bind, in words, whichever runtime's error says it; `undefined` when none does. */
function listenFailure(error: unknown): string | undefined {
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  const said = `${String(code ?? "")} ${String(name ?? "")} ${String(message ?? "")}`;
  if (/EADDRINUSE|AddrInUse|in use/i.test(said)) {
    return "the port is in use (another server; pick another with --port, or 0 for a free one)";
  }
  if (/EADDRNOTAVAIL|AddrNotAvailable|not available/i.test(said)) {
    return "this machine has no such address (--host must be one of its own, or 0.0.0.0)";
  }
  if (/EACCES|PermissionDenied|permission/i.test(said)) {
    return "not permitted (ports below 1024 need privileges)";
  }
  return undefined;
}

/** The `serve` command. */
export const serveCommand: Command = {
  name: "serve",
  summary: "Browse, search and chart sessions in a web browser",
  usage: USAGE,
  options: {
    host: { type: "string" },
    port: { type: "string" },
    token: { type: "string" },
    "public-url": { type: "string" },
    "allow-writes": { type: "boolean" },
    open: { type: "boolean" },
  },
  minPositionals: 0,
  maxPositionals: 0,
  run,
};
