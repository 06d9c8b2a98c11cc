/**
 * The one error table (`api/ErrorTable.ts`) covers every service failure: each error class's
 * reasons are read from its Schema at run time, so a reason added to a class without a row fails
 * here (the compiler catches it too, through `Rows<E>`); a row for a reason that no longer exists
 * fails as stale. Every row's code is in `ErrorCodes`, and its status is the code's own unless the
 * override is one listed below with where it is documented.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ErrorTable, FailureClasses, type Row } from "../../api/ErrorTable.js"
import { type ErrorCode, ErrorCodes } from "../../src/domain/ErrorCodes.js"

/** `code:status` and `code:retryable=x` overrides, and where each is written down. */
const DocumentedOverrides: Record<string, string> = {
  "VALIDATION_FAILED:retryable=true": "docs/decisions.md Accounts (device flow: authorization_pending, poll again)",
  "VALIDATION_FAILED:403": "spec 2 section 7 (issuance while agent features are off); docs/decisions.md Accounts (enable refusals)",
  "VALIDATION_FAILED:404": "spec 2 section 7 (unknown prefix); docs/decisions.md Accounts, Webhooks (unknown id, device, user code, account)",
  "VALIDATION_FAILED:409": "spec 2 section 7 (revoked or expired key); docs/decisions.md Accounts, Webhooks (decided request, revoked endpoint)",
  "SWAP_FAILED:503": "spec 2 section 7 (503 on access change)",
  "VALIDATION_FAILED:501": "launch spec 4 rule 10 and section 7 (atomic build without a block engine)"
}

const reasonsOf = (cls: (typeof FailureClasses)[number]): ReadonlyArray<string> => {
  const reason = cls.fields.reason as Schema.Schema.Any
  expect(Schema.isSchema(reason)).toBe(true)
  const literals = (reason as unknown as { readonly literals?: ReadonlyArray<unknown> }).literals
  expect(Array.isArray(literals), `${cls._tag}.reason is a literal union`).toBe(true)
  return literals!.map(String)
}

const rowsOf = (tag: string): Readonly<Record<string, Row>> => (ErrorTable as unknown as Record<string, Record<string, Row>>)[tag] ?? {}

describe("error table conformance", () => {
  it("has rows for exactly the error classes it lists, and SqlError", () => {
    expect(Object.keys(ErrorTable).sort()).toEqual([...FailureClasses.map((c) => c._tag), "SqlError"].sort())
  })

  it("has a row for every reason of every error class, and no stale rows", () => {
    const missing: string[] = []
    const stale: string[] = []
    for (const cls of FailureClasses) {
      const reasons = reasonsOf(cls)
      expect(reasons.length, cls._tag).toBeGreaterThan(0)
      const rows = rowsOf(cls._tag)
      for (const r of reasons) if (rows[r] === undefined) missing.push(`${cls._tag}.${r}`)
      for (const r of Object.keys(rows)) if (!reasons.includes(r)) stale.push(`${cls._tag}.${r}`)
    }
    expect(missing).toEqual([])
    expect(stale).toEqual([])
  })

  it("every row's code is in ErrorCodes with a consistent status (or a documented override)", () => {
    const rows: Array<[string, Row]> = [["SqlError", ErrorTable.SqlError]]
    for (const cls of FailureClasses) for (const [reason, row] of Object.entries(rowsOf(cls._tag))) rows.push([`${cls._tag}.${reason}`, row])
    const problems: string[] = []
    for (const [name, row] of rows) {
      const info = ErrorCodes[row.code as ErrorCode]
      if (info === undefined) {
        problems.push(`${name}: ${row.code} is not in ErrorCodes`)
        continue
      }
      if (row.status !== undefined && row.status !== info.status && DocumentedOverrides[`${row.code}:${row.status}`] === undefined) {
        problems.push(`${name}: ${row.code} is ${info.status}, row says ${row.status} with no documented override`)
      }
      if (
        row.retryable !== undefined &&
        typeof info.retryable === "boolean" &&
        row.retryable !== info.retryable &&
        DocumentedOverrides[`${row.code}:retryable=${row.retryable}`] === undefined
      ) {
        problems.push(`${name}: ${row.code} retryable is ${info.retryable}, row says ${row.retryable}`)
      }
    }
    expect(problems).toEqual([])
  })

  it("lists no override that no row uses", () => {
    const used = new Set<string>()
    for (const cls of FailureClasses) {
      for (const row of Object.values(rowsOf(cls._tag))) {
        if (row.status !== undefined) used.add(`${row.code}:${row.status}`)
        if (row.retryable !== undefined) used.add(`${row.code}:retryable=${row.retryable}`)
      }
    }
    expect(Object.keys(DocumentedOverrides).filter((k) => !used.has(k))).toEqual([])
  })
})
