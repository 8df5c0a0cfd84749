/**
 * The SessionStore conformance suite on the PostgreSQL engine: each store in
 * a schema of its own on the test server; the fixture store is filled from
 * the v11 fixture through importSession (message ids kept).
 */
import { describe } from "node:test";
import { openStore } from "../../lib/open_store.ts";
import type { SessionStore } from "../../lib/core/session_store.ts";
import { storeConformance } from "./_conformance.ts";
import { loadFixture } from "./_fixture_data.ts";
import { openPgStore, PG_SKIP, schemaUrl } from "./_pg.ts";
import { migratedAhead } from "./_migrated_ahead.ts";

const schemaOf = new WeakMap<SessionStore, string>();
/** The suite opens some 70 stores: their schemas are migrated while the tests before them run. */
const migratedSchema = migratedAhead(3);

if (PG_SKIP) {
  describe("postgres conformance", { skip: PG_SKIP }, () => {});
} else {
  storeConformance("postgres", {
    ranksAsSqlite: false,
    async empty(options) {
      const schema = await migratedSchema();
      const store = await openPgStore(options, schema);
      schemaOf.set(store, schema);
      return store;
    },
    async fixture(options) {
      const schema = await migratedSchema();
      const store = await openPgStore(options, schema);
      schemaOf.set(store, schema);
      await loadFixture(store);
      return store;
    },
    reopenReadonly: (store) => openStore(schemaUrl(schemaOf.get(store)!), { readonly: true }),
  });
}
