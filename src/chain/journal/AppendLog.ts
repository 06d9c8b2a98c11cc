/**
 * An append-only journal of JSON records, one per line, each guarded by its CRC-32:
 * `<crc32 as 8 hex digits> <json>\n`. The embedded localnets record what changed their chain in
 * one (the Solana ledger's landed transactions and slot closes, the Hood node's raw transactions
 * and block timestamps) and replay it at start.
 *
 * Durability: `append` writes the whole line with one `write(2)` before it returns, so a record
 * the caller goes on to expose survives a crash of this process (`kill -9`) at any point; `sync`
 * (fdatasync) also carries it through an operating-system crash. A crash can tear at most the
 * last line: `openAppendLog` keeps the records up to the first line that is incomplete or fails
 * its checksum and truncates the file there, so the next append continues a whole journal.
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs"
import * as path from "node:path"
import { crc32 } from "node:zlib"

export interface AppendLog {
  /** The records that were in the file when it was opened, oldest first. */
  readonly records: ReadonlyArray<unknown>
  /** Bytes dropped from a torn tail at open (0 when the file ended on a whole record). */
  readonly tornBytes: number
  readonly path: string
  /** Appends one record (written before this returns). */
  append(record: unknown): void
  /** fdatasync: everything appended so far survives an operating-system crash. */
  sync(): void
  /** Drops every record: the file is empty afterwards. */
  reset(): void
  close(): void
}

const hex8 = (n: number) => n.toString(16).padStart(8, "0")

/** The line for one record. */
export const encodeRecord = (record: unknown): Buffer => {
  const json = Buffer.from(JSON.stringify(record), "utf8")
  return Buffer.concat([Buffer.from(`${hex8(crc32(json))} `, "ascii"), json, Buffer.from("\n", "ascii")])
}

/** The whole records at the start of `bytes` and where they end (the torn or corrupt rest follows). */
export const decodeRecords = (bytes: Buffer): { readonly records: ReadonlyArray<unknown>; readonly validBytes: number } => {
  const records: Array<unknown> = []
  let at = 0
  while (at < bytes.length) {
    const end = bytes.indexOf(0x0a, at)
    if (end === -1 || end - at < 10 || bytes[at + 8] !== 0x20) break
    const json = bytes.subarray(at + 9, end)
    if (bytes.toString("ascii", at, at + 8) !== hex8(crc32(json))) break
    try {
      records.push(JSON.parse(json.toString("utf8")))
    } catch {
      break
    }
    at = end + 1
  }
  return { records, validBytes: at }
}

export const openAppendLog = (file: string): AppendLog => {
  mkdirSync(path.dirname(file), { recursive: true })
  const fd = openSync(file, "a+")
  let closed = false
  try {
    const { records, validBytes } = decodeRecords(readFileSync(fd))
    const size = fstatSync(fd).size
    if (validBytes < size) ftruncateSync(fd, validBytes)
    return {
      records,
      tornBytes: size - validBytes,
      path: file,
      append: (record) => {
        if (closed) throw new Error(`journal ${file} is closed`)
        const line = encodeRecord(record)
        let written = 0
        while (written < line.length) written += writeSync(fd, line, written, line.length - written)
      },
      sync: () => {
        if (!closed) fdatasyncSync(fd)
      },
      reset: () => {
        ftruncateSync(fd, 0)
        fdatasyncSync(fd)
      },
      close: () => {
        if (closed) return
        closed = true
        closeSync(fd)
      }
    }
  } catch (e) {
    closeSync(fd)
    throw e
  }
}
