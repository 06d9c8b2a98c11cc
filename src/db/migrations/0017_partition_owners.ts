/**
 * `partition_owners`: the ownership fence of actor checkpoints when several processes share a bus
 * consumer group (the actors role). One row per (checkpoint owner, bus partition) with an epoch
 * that a process bumps when the bus hands it the partition, before it loads the partition's
 * checkpoints; a checkpoint flush reads the epochs of its rows' partitions in its own transaction
 * (`FOR SHARE`) and writes only the rows of partitions whose epoch is still the one it claimed.
 * So once a new owner has claimed a partition, the previous owner can no longer write its keys'
 * checkpoints, whatever it still had in memory. Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS partition_owners (
      owner text NOT NULL,
      partition integer NOT NULL,
      epoch bigint NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (owner, partition)
    )`
})
