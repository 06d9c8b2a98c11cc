/**
 * The launches' metadata documents in PostgreSQL and a read process's follower (issue 31): a
 * document another process stores reaches this process's directory within the follow interval; the
 * start-up load reads what was stored before; storing is idempotent; a row that is not a document is
 * skipped, never fatal.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TokenMetadataDirectory } from "../../actors/TokenMetadata.js"
import * as Database from "../../src/db/Database.js"
import { followMetadata, readMetadata, storeMetadata } from "../../src/services/images/HostedMetadata.js"
import { metadataIdOf, tokenMetadataDocument } from "../../src/services/images/TokenMetadataDocument.js"
import { eventuallyEffect } from "../support/eventually.js"

const doc = (name: string) =>
  tokenMetadataDocument({ name, symbol: "DOC", description: `about ${name}`, image: `https://img.example/${name}.png`, banner: null, socials: { twitter: `https://x.com/${name}` } })
const uriOf = (bytes: Uint8Array) => `https://api.example/api/v1/uploads/metadata/${metadataIdOf(bytes)}.json`

layer(Database.layerTest, { timeout: 60_000, excludeTestServices: true })("hosted metadata documents", (it) => {
  it.scoped("are stored once, loaded at start, and followed into another process's directory", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const before = doc("before")
      const id = yield* storeMetadata(before, 1_000)
      expect(yield* storeMetadata(before, 2_000)).toBe(id) // the same bytes: one row
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM hosted_metadata WHERE id = ${id}`)[0]!.n).toBe(1)
      expect(new Uint8Array(Option.getOrThrow(yield* readMetadata(id)))).toEqual(before)
      // A row another build wrote that is not a document: skipped with a warning.
      yield* sql`INSERT INTO hosted_metadata (id, body, created_at) VALUES (${"e".repeat(64)}, ${new TextEncoder().encode("not json")}, now())`

      const directory = new TokenMetadataDirectory()
      yield* followMetadata(directory, { intervalMs: 50, batch: 2 })
      expect(directory.get(uriOf(before))).toMatchObject({ image: "https://img.example/before.png", description: "about before", socials: { twitter: "https://x.com/before" } })
      expect(directory.size).toBe(1)

      // Stored by "another process" after the follower started: it arrives, in more than one batch.
      const later = ["a", "b", "c"].map(doc)
      for (const bytes of later) yield* storeMetadata(bytes, 3_000)
      yield* eventuallyEffect(Effect.sync(() => (later.every((b) => directory.get(uriOf(b)) !== undefined) ? true : undefined)), {
        what: "the follower to read the new documents",
        deadlineMs: 10_000,
        intervalMs: 20
      })
      expect(directory.get(uriOf(later[2]!))?.description).toBe("about c")
    })
  )

  it.scoped("the start-up load keeps the newest maxEntries", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM hosted_metadata`
      const docs = ["one", "two", "three"].map(doc)
      for (const bytes of docs) yield* storeMetadata(bytes, 1_000)
      const directory = new TokenMetadataDirectory(2)
      yield* followMetadata(directory, { intervalMs: 60_000 })
      expect(directory.get(uriOf(docs[0]!))).toBeUndefined()
      expect(directory.get(uriOf(docs[1]!))).toBeDefined()
      expect(directory.get(uriOf(docs[2]!))).toBeDefined()
    })
  )
})
