/**
 * The SessionStore conformance suite on the SQLite engine (a file per store;
 * the fixture store is a copy of the v11 fixture itself).
 */
import { join } from "node:path";
import { openStore } from "../../lib/open_store.ts";
import { copyFixture, tempDbPath } from "../_helpers.ts";
import { storeConformance } from "./_conformance.ts";

storeConformance("sqlite", {
  ranksAsSqlite: true,
  empty: (options) => openStore(tempDbPath(), options),
  fixture: (options) => openStore(copyFixture("hermes-v11.db"), options),
  reopenReadonly: (store) => openStore(join(store.target), { readonly: true }),
});
