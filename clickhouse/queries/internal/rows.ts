/**
 * Row decoding shared by the read queries: ClickHouse returns 64-bit and wider integers as
 * decimal strings (both executors), so every integer column is parsed exactly here and a row of
 * an unexpected shape becomes a `ClickHouseError` rather than a wrong number.
 */
import { ClickHouseError } from "../../ClickHouseError.js"

/** A `ClickHouseError` for a row that does not have the shape `what` expects. */
export const bad = (what: string) => (cause: unknown) =>
  new ClickHouseError({ reason: "QueryFailed", message: `${what}: unexpected row shape: ${String(cause)}`, cause })

/** An integer column as a bigint (a decimal string, or a safe JSON number). Throws otherwise. */
export const big = (v: unknown, name: string): bigint => {
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v)
  if (typeof v !== "string" || !/^-?[0-9]+$/.test(v)) throw new Error(`${name} is not an integer: ${JSON.stringify(v)}`)
  return BigInt(v)
}

/** An integer column that must fit a safe JS number. Throws otherwise. */
export const num = (v: unknown, name: string): number => {
  const n = big(v, name)
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${name} is too large`)
  return Number(n)
}
