/**
 * A TEE transfer's signed bytes (owned by `src/services/transfers/TransferStore.ts`): a row out of
 * a TEE wallet keeps the signed transaction it was sent with from `sending` on. The server cannot
 * sign for a TEE wallet, so on Hood a recovery pass after a crash between the record and the send
 * broadcasts these same bytes again (the same nonce and hash: never a second transfer) rather than
 * release the nonce. Null for `payer: main` and for a build not yet submitted.
 * Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE transfers ADD COLUMN signed_transaction text`
})
