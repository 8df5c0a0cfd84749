/**
 * The password file of libpq (`~/.pgpass`, or `PGPASSFILE`, or the URL's
 * `?passfile=`), read as `psql` reads it, for a connection whose URL and
 * environment give no password:
 *
 * `hostname:port:database:username:password`, one per line; `*` matches
 * anything in the first four fields, `\` escapes `:` and `\`, `#` starts a
 * comment line; the first matching line wins. A socket connection matches
 * `localhost` (as libpq does for its default socket folder) or the folder.
 * A file that its group or others may read is ignored, as libpq ignores it,
 * and so is a SQLite database in use (a file beside a `-wal` or `-shm`).
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";

/** What a line is matched against: the connection as the client will make it. */
export interface PgLogin {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

/** Splits one line into its fields at unescaped `:`, undoing `\:` and `\\`. */
function fields(line: string): string[] {
  const out: string[] = [];
  let field = "";
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === "\\" && i + 1 < line.length) field += line[++i];
    else if (ch === ":" && out.length < 4) {
      out.push(field);
      field = "";
    } else field += ch;
  }
  out.push(field);
  return out;
}

/**
 * The password of the first line of `text` that matches `login`.
 *
 * @param text The file's text.
 * @param login The connection.
 * @returns The password, or `undefined` when no line matches.
 */
export function passwordFromPgpass(text: string, login: PgLogin): string | undefined {
  const hosts = login.host.startsWith("/") ? ["localhost", login.host] : [login.host];
  for (const raw of text.split(/\r?\n/)) {
    if (raw === "" || raw.startsWith("#")) continue;
    const parts = fields(raw);
    if (parts.length < 5) continue;
    const [host, port, database, user, password] = parts;
    const matches = (pattern: string, value: string) => pattern === "*" || pattern === value;
    if (!hosts.some((h) => matches(host, h))) continue;
    if (!matches(port, String(login.port))) continue;
    if (!matches(database, login.database) || !matches(user, login.user)) continue;
    return password;
  }
  return undefined;
}

/**
 * Looks `login` up in the password file: `passfile` when given, else
 * `PGPASSFILE`, else `~/.pgpass`. A missing or unreadable file, or one
 * its group or others may read, gives `undefined`.
 *
 * @param login The connection.
 * @param env The environment (`PGPASSFILE`).
 * @param passfile The URL's `?passfile=`.
 * @returns The password, or `undefined`.
 */
export function lookUpPgpass(
  login: PgLogin,
  env: Record<string, string | undefined>,
  passfile?: string,
): string | undefined {
  const path = passfile ?? env.PGPASSFILE ?? join(homedir(), ".pgpass");
  // A file beside a -wal or -shm is a SQLite database in use, never a password file: a
  // descriptor opened and closed on it would drop this process's locks on it.
  if (existsSync(`${path}-wal`) || existsSync(`${path}-shm`)) return undefined;
  try {
    if ((statSync(path).mode & 0o077) !== 0) return undefined;
    return passwordFromPgpass(readFileSync(path, "utf8"), login);
  } catch {
    return undefined;
  }
}

/** The operating system's user name, the client's default login name. */
export function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "postgres";
  }
}
