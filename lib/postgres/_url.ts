/**
 * Server URLs as `psql` and libpq read them, turned into the options of the
 * `postgres` client, which on its own understands only a TCP host in the
 * URL's authority:
 *
 * `postgres[ql]://[user[:password]@][host[:port][,host[:port]…]][/dbname][?param=value&…]`
 *
 * - a host that starts with `/` (percent-encoded in the authority,
 *   `%2Fvar%2Frun%2Fpostgresql`, or plain in `?host=`) is the folder of the
 *   server's Unix socket, `.s.PGSQL.<port>` in it;
 * - `?host=`, `?port=`, `?user=`, `?password=` and `?dbname=` override the
 *   authority's parts, as in libpq; what neither gives comes from `PGHOST`,
 *   `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, then `localhost:5432`
 *   (and `PGSSLMODE`, `PGCONNECT_TIMEOUT`, `PGAPPNAME` for the parameters);
 * - `?sslmode=` (`disable`, `allow`, `prefer`, `require`, `verify-ca`,
 *   `verify-full`; `?ssl=true` as node-postgres spells verify-full),
 *   `?sslrootcert=system`, `?connect_timeout=` (seconds) and
 *   `?target_session_attrs=` are the client's; `?passfile=` names the password
 *   file (`_pgpass.ts`) for a URL and environment without a password;
 * - `?pgbouncer=true` says the URL reaches the server through a pooler in
 *   transaction mode (PgBouncer's `pool_mode = transaction`, Supavisor,
 *   pgcat): no start-up settings but `application_name`, no prepared
 *   statements, the schema from the role's `search_path` (`_client.ts`);
 * - any other parameter is a run-time setting sent at start-up
 *   (`?application_name=gw-1`, `?statement_timeout=5000`), as libpq's
 *   `options` would (refused through a transaction-mode pooler, which
 *   passes none on); libpq's certificate and Kerberos parameters
 *   (`sslcert`, `gssencmode`…) are refused by name, as is `search_path`
 *   (the store sets it from `?schema=`).
 *
 * @module
 */
import { lookUpPgpass, osUser } from "./_pgpass.ts";
import { quotedValue } from "../core/shown_value.ts";

/** What the client is given to reach the server. */
export interface PgServerOptions {
  /** Host names, one per port; absent: `PGHOST`, then `localhost`. */
  readonly host?: string[];
  /** Ports, one per host. */
  readonly port?: number[];
  /** The Unix socket file, when the host is a folder. */
  readonly path?: string;
  readonly user?: string;
  readonly pass?: string;
  readonly database?: string;
  /** `false`, `"allow"`, `"prefer"`, `"require"` or `"verify-full"`. */
  readonly ssl?: false | string;
  /** Seconds. */
  readonly connect_timeout?: number;
  readonly target_session_attrs?: string;
  /** The password file `?passfile=` names (read by the caller, not the client). */
  readonly passfile?: string;
  /** `?pgbouncer=true`: the server is behind a pooler in transaction mode. */
  readonly transactionPooler?: boolean;
  /** Run-time settings sent at start-up. */
  readonly connection: Record<string, string>;
}

/** libpq client parameters this client has no way to honour. */
const UNSUPPORTED = new Set([
  "hostaddr",
  "channel_binding",
  "sslcert",
  "sslkey",
  "sslpassword",
  "sslcrl",
  "sslcrldir",
  "sslsni",
  "sslcompression",
  "sslcertmode",
  "requirepeer",
  "ssl_min_protocol_version",
  "ssl_max_protocol_version",
  "gssencmode",
  "krbsrvname",
  "gsslib",
  "gssdelegation",
  "service",
  "keepalives",
  "keepalives_idle",
  "keepalives_interval",
  "keepalives_count",
  "tcp_user_timeout",
  "load_balance_hosts",
  "replication",
  "require_auth",
]);

const SSL_MODES: Record<string, false | string> = {
  disable: false,
  allow: "allow",
  prefer: "prefer",
  require: "require",
  "verify-ca": "verify-full",
  "verify-full": "verify-full",
};

/**
 * libpq's `target_session_attrs` the client honours; `any` (its default) is
 * the client's default too. Not `prefer-standby`: the client (postgres 3.4)
 * never falls back to another server when no standby answers, where libpq
 * does, so a URL naming only its primary, or a standby that is down, failed.
 */
const SESSION_ATTRS = ["any", "read-write", "read-only", "primary", "standby"];

/** Why `prefer-standby` is refused, and what to give instead. */
const NO_PREFER_STANDBY = "target_session_attrs prefer-standby is not honoured by the client " +
  "(it would never fall back to the primary): give standby (a standby only), or none (any server)";

function sessionAttrsOf(value: string): string {
  if (value === "prefer-standby") throw new TypeError(NO_PREFER_STANDBY);
  if (!SESSION_ATTRS.includes(value)) {
    throw invalid(`target_session_attrs must be one of ${SESSION_ATTRS.join(", ")}`, value);
  }
  return value;
}

function invalid(what: string, value: string): TypeError {
  return new TypeError(`the URL's ${what}: current value is ${quotedValue(value)}`);
}

function invalidEnv(name: string, value: string): TypeError {
  return new TypeError(
    `${name} is not a value libpq takes: current value is ${quotedValue(value)}`,
  );
}

/** An `sslmode` as the client takes it, or `error` when libpq has no such mode. */
function sslModeOf(value: string, error: () => TypeError): false | string {
  if (!(value in SSL_MODES)) throw error();
  return SSL_MODES[value];
}

/** A `connect_timeout` in whole seconds, or `error`. */
function secondsOf(value: string, error: () => TypeError): number {
  if (!/^\d+$/.test(value)) throw error();
  return Number(value);
}

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    // A password is never echoed, not even a malformed one.
    if (what === "password") {
      throw new TypeError("the URL's password is not valid percent-encoding");
    }
    throw invalid(`${what} is not valid percent-encoding`, part);
  }
}

/**
 * The parameters of a URL's query as libpq reads them: split at `&` and
 * at each part's first `=`, both sides percent-decoded; a `+` stays a `+`
 * (`URLSearchParams` reads a form's encoding, where it is a space: a
 * password `a+b` became `a b`).
 *
 * @param query The text after the `?` (no `#`).
 * @param lenient Keep a part that is not valid percent-encoding as written,
 *   instead of throwing (the caller reads only some of the parameters).
 * @returns The parameters, in order.
 * @throws {TypeError} When a part is not valid percent-encoding (a
 *   password's value is not shown), unless `lenient`.
 */
export function uriParameters(query: string, lenient = false): URLSearchParams {
  const read = (part: string, what: string) => {
    try {
      return decode(part, what);
    } catch (error) {
      if (lenient) return part;
      throw error;
    }
  };
  const pairs: [string, string][] = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const key = read(eq === -1 ? part : part.slice(0, eq), "parameter name");
    const secret = /password/i.test(key);
    pairs.push([key, eq === -1 ? "" : read(part.slice(eq + 1), secret ? "password" : `?${key}=`)]);
  }
  return new URLSearchParams(pairs);
}

function portOf(text: string, what: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) {
    throw invalid(`${what} must be a number from 1 to 65535`, text);
  }
  return port;
}

/** Splits one `host[:port]` of the authority (`[v6]:port` too); "" for a missing part. */
function hostAndPort(spec: string): { host: string; port: string } {
  const v6 = /^\[([^\]]*)\](?::(.*))?$/.exec(spec);
  if (v6) return { host: v6[1], port: v6[2] ?? "" };
  const colon = spec.lastIndexOf(":");
  if (colon === -1) return { host: decode(spec, "host"), port: "" };
  return { host: decode(spec.slice(0, colon), "host"), port: spec.slice(colon + 1) };
}

/** The socket file of a host that is a folder (starts with `/`). */
function socketPath(folder: string, port: number): string {
  return `${folder.replace(/\/+$/, "")}/.s.PGSQL.${port}`;
}

/**
 * Whether `authority` (the text after `postgres://` up to the first `/`,
 * `?` or `#`) ends inside a password that holds one of them unencoded: it
 * has no `@`, and reads as `user:` and a "port" that is no number.
 */
function endsInsidePassword(authority: string): boolean {
  if (authority.includes("@") || authority.startsWith("[")) return false;
  const colon = authority.lastIndexOf(":");
  return colon !== -1 && !/^\d{0,5}(?:,.*)?$/.test(authority.slice(colon + 1));
}

/**
 * Refuses, before any part of it is read (and quoted in an error), a URL
 * whose password holds a `/`, `?` or `#` left unencoded: the authority ends
 * there, its "port" is a piece of the password, and an `@` comes after it.
 */
function refusePasswordCutShort(url: string, start: number, authority: string): void {
  if (!endsInsidePassword(authority) || !url.slice(start + authority.length).includes("@")) return;
  throw new TypeError(
    "the URL's port is not a number, and an @ comes after the host: a password holding " +
      "/, ? or # must have them percent-encoded (%2F, %3F, %23)",
  );
}

/**
 * Reads a server URL (without the store's own `?schema=`) as libpq does.
 *
 * @param url A `postgres://` or `postgresql://` URL.
 * @param env The environment: `PGHOST` when only a port is given, `PGPORT`
 *   when a host is given without one, `PGSSLMODE`, `PGCONNECT_TIMEOUT` and
 *   `PGAPPNAME` when the URL has no such parameter (the client reads the
 *   rest itself).
 * @returns The client options.
 * @throws {TypeError} On a malformed port or percent-encoding, or a parameter
 *   the client cannot honour, naming it.
 */
export function serverOptions(
  url: string,
  env: Record<string, string | undefined> = {},
): PgServerOptions {
  const scheme = /^postgres(?:ql)?:\/\//i.exec(url);
  if (!scheme) throw invalid("scheme must be postgres:// or postgresql://", url);
  let rest = url.slice(scheme[0].length);
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const question = rest.indexOf("?");
  const queryText = question === -1 ? "" : rest.slice(question + 1);
  if (question !== -1) rest = rest.slice(0, question);
  const slash = rest.indexOf("/");
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? "" : rest.slice(slash + 1);
  const at = authority.lastIndexOf("@");
  refusePasswordCutShort(url, scheme[0].length, authority);
  const query = uriParameters(queryText);
  const userInfo = at === -1 ? undefined : authority.slice(0, at);
  const hostSpec = at === -1 ? authority : authority.slice(at + 1);

  let user: string | undefined;
  let pass: string | undefined;
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(":");
    user = decode(colon === -1 ? userInfo : userInfo.slice(0, colon), "user") || undefined;
    if (colon !== -1) pass = decode(userInfo.slice(colon + 1), "password");
  }
  const authorityHosts = hostSpec === "" ? [] : hostSpec.split(",").map(hostAndPort);
  // As in libpq, ?host= and ?port= replace the authority's lists.
  let hosts = authorityHosts.map((h) => h.host);
  let ports = authorityHosts.map((h) => h.port);
  let database = path === "" ? undefined : decode(path, "database name");

  const connection: Record<string, string> = {};
  let ssl: false | string | undefined;
  let connectTimeout: number | undefined;
  let targetSessionAttrs: string | undefined;
  let passfile: string | undefined;
  let transactionPooler: boolean | undefined;
  for (const [key, value] of query) {
    if (key === "host") hosts = value.split(",");
    else if (key === "port") ports = value.split(",");
    else if (key === "user") user = value;
    else if (key === "password") pass = value;
    else if (key === "dbname") database = value;
    else if (key === "sslmode") {
      ssl = sslModeOf(value, () => invalid("sslmode is not a libpq mode", value));
    } else if (key === "ssl") {
      // node-postgres' and the client's own spelling: true verifies the certificate.
      if (value === "true" || value === "1") ssl = "verify-full";
      else if (value === "false" || value === "0") ssl = false;
      else ssl = sslModeOf(value, () => invalid("ssl must be true, false or an sslmode", value));
    } else if (key === "sslrootcert") {
      if (value !== "system") throw invalid("sslrootcert can only be system here", value);
      ssl = "verify-full";
    } else if (key === "connect_timeout") {
      connectTimeout = secondsOf(
        value,
        () => invalid("connect_timeout must be whole seconds", value),
      );
    } else if (key === "target_session_attrs") targetSessionAttrs = sessionAttrsOf(value);
    else if (key === "passfile") passfile = value;
    else if (key === "pgbouncer") {
      if (value === "true" || value === "1") transactionPooler = true;
      else if (value === "false" || value === "0") transactionPooler = false;
      else throw invalid("pgbouncer must be true or false", value);
    } else if (key === "search_path") {
      throw invalid("search_path is set by the store: use ?schema=NAME instead", value);
    } else if (UNSUPPORTED.has(key)) {
      // sslpassword is the client key's passphrase: named, never shown.
      const shown = key === "sslpassword" ? "***" : value;
      throw invalid(`parameter ${key} is not supported by hermes-state`, shown);
    } else connection[key] = value;
  }

  const out: {
    -readonly [K in keyof PgServerOptions]: PgServerOptions[K];
  } = { connection };
  if (hosts.length > 0 || ports.some((port) => port !== "")) {
    // No host: the client's own default, PGHOST, then localhost.
    if (hosts.length === 0) hosts = [env.PGHOST ?? "localhost"];
    if (ports.length > 1 && ports.length !== hosts.length) {
      throw invalid(`ports must be one, or one per host (${hosts.length})`, ports.join(","));
    }
    out.host = hosts.map((host) => host || "localhost");
    out.port = out.host.map((_, i) =>
      portOf((ports.length > 1 ? ports[i] : ports[0]) || env.PGPORT || "5432", "port")
    );
    if (out.host[0].startsWith("/")) {
      if (out.host.length > 1) {
        throw invalid("host can name one socket folder only", hosts.join(","));
      }
      out.path = socketPath(out.host[0], out.port[0]);
    }
  }
  if (user !== undefined) out.user = user;
  if (pass !== undefined) out.pass = pass;
  if (database !== undefined) out.database = database;
  // libpq's environment for what the URL leaves out (the client reads PGSSL, not PGSSLMODE).
  const { PGSSLMODE, PGCONNECT_TIMEOUT } = env;
  if (ssl === undefined && PGSSLMODE !== undefined) {
    ssl = sslModeOf(PGSSLMODE, () => invalidEnv("PGSSLMODE", PGSSLMODE));
  }
  if (connectTimeout === undefined && PGCONNECT_TIMEOUT !== undefined) {
    connectTimeout = secondsOf(
      PGCONNECT_TIMEOUT,
      () => invalidEnv("PGCONNECT_TIMEOUT", PGCONNECT_TIMEOUT),
    );
  }
  // The client reads PGTARGETSESSIONATTRS itself, over a URL's `any`: taken here, a read-only
  // store judges a server by its role (_client.ts), and a value the client would refuse
  // unexplained is named.
  const { PGTARGETSESSIONATTRS } = env;
  if (PGTARGETSESSIONATTRS) {
    if (PGTARGETSESSIONATTRS === "prefer-standby") {
      throw new TypeError(`PGTARGETSESSIONATTRS: ${NO_PREFER_STANDBY}`);
    }
    if (!SESSION_ATTRS.includes(PGTARGETSESSIONATTRS)) {
      throw invalidEnv("PGTARGETSESSIONATTRS", PGTARGETSESSIONATTRS);
    }
    targetSessionAttrs ??= PGTARGETSESSIONATTRS;
    if (targetSessionAttrs === "any") {
      throw new TypeError(
        `target_session_attrs "any" cannot be told to the client while PGTARGETSESSIONATTRS is set (current value is ${
          quotedValue(PGTARGETSESSIONATTRS)
        }): unset it`,
      );
    }
  }
  if (!("application_name" in connection) && env.PGAPPNAME !== undefined) {
    connection.application_name = env.PGAPPNAME;
  }
  if (transactionPooler) {
    const setting = Object.keys(connection).find((key) => key !== "application_name");
    if (setting !== undefined) {
      throw invalid(
        `parameter ${setting} cannot reach the server through a transaction-mode pooler (?pgbouncer=true), which passes no start-up settings on: set it on the role instead (ALTER ROLE … SET ${setting} = …)`,
        connection[setting],
      );
    }
    out.transactionPooler = true;
  }
  if (ssl !== undefined) out.ssl = ssl;
  if (connectTimeout !== undefined) out.connect_timeout = connectTimeout;
  if (targetSessionAttrs !== undefined && targetSessionAttrs !== "any") {
    out.target_session_attrs = targetSessionAttrs;
  }
  if (passfile !== undefined) out.passfile = passfile;
  return out;
}

/**
 * A server URL fit to show: its password, in the authority or in
 * `?password=`, and a client key's `?sslpassword=`, as `***`.
 *
 * @param url A server URL.
 * @returns The URL to show.
 */
export function maskPassword(url: string): string {
  const masked = url.replace(/([?&](?:ssl)?password=)[^&#]*/gi, "$1***");
  const scheme = /^postgres(?:ql)?:\/\//i.exec(masked);
  if (scheme === null) return masked;
  const rest = masked.slice(scheme[0].length);
  // The authority's password ends at its last `@` before the query: it may hold a `/` or `#`
  // that was not percent-encoded. With no `@` before the query, one after it ends a password
  // holding a `?` when the authority ends inside it (`ann:pa?x=y@h`), not when it is a host and
  // its port (`h:5432/d?user=adm@srv`).
  const query = rest.indexOf("?");
  let at = query === -1 ? rest.lastIndexOf("@") : rest.lastIndexOf("@", query);
  if (at === -1 && query !== -1 && endsInsidePassword(rest.slice(0, rest.search(/[/?#]/)))) {
    at = rest.lastIndexOf("@");
  }
  const colon = rest.indexOf(":");
  if (at === -1 || colon === -1 || colon > at || /[/?#@]/.test(rest.slice(0, colon))) {
    return masked;
  }
  return `${scheme[0]}${rest.slice(0, colon + 1)}***${rest.slice(at)}`;
}

/**
 * The password for `server`, when the URL gives none: `PGPASSWORD`, else
 * the password file's line for the connection the client will make (its
 * first host; user, port and database as the client defaults them).
 *
 * @param server What {@linkcode serverOptions} read.
 * @param env The environment.
 * @returns The password, or `undefined` (the client then offers none).
 */
export function passwordFor(
  server: PgServerOptions,
  env: Record<string, string | undefined>,
): string | undefined {
  if (server.pass !== undefined) return server.pass;
  if (env.PGPASSWORD !== undefined) return env.PGPASSWORD;
  const user = server.user ?? env.PGUSERNAME ?? env.PGUSER ?? osUser();
  const login = {
    host: server.host?.[0] ?? env.PGHOST ?? "localhost",
    port: server.port?.[0] ?? Number(env.PGPORT ?? 5432),
    database: server.database ?? env.PGDATABASE ?? user,
    user,
  };
  return lookUpPgpass(login, env, server.passfile);
}
