/**
 * The page's files, embedded as strings (so `bun build --compile` and
 * `deno compile` carry them), each with its media type and an ETag. The
 * server looks a path up in this map: no file is ever read from disk.
 *
 * @module
 */
import { APP_CSS } from "./app_css.ts";
import { APP_JS } from "./app_js.ts";
import { INDEX_HTML_TEXT } from "./index_html.ts";

/** One embedded file. */
export interface Asset {
  /** Its `content-type`. */
  readonly type: string;
  /** Its bytes. */
  readonly body: Uint8Array<ArrayBuffer>;
  /** A strong ETag of the bytes. */
  readonly etag: string;
}

/** FNV-1a over the UTF-16 code units: enough to tell two versions apart. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

function asset(type: string, text: string): Asset {
  return { type, body: new TextEncoder().encode(text), etag: `"${fnv1a(text)}-${text.length}"` };
}

/** `/`. */
export const INDEX_HTML: Asset = asset("text/html; charset=utf-8", INDEX_HTML_TEXT);

/** The files under `/assets/`, by path. */
export const ASSETS: ReadonlyMap<string, Asset> = new Map([
  ["/assets/app.js", asset("text/javascript; charset=utf-8", APP_JS)],
  ["/assets/app.css", asset("text/css; charset=utf-8", APP_CSS)],
]);
