import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ensureDir, readJsonIfPresent, writeJsonAtomic } from "./Files.js"

const fresh = () => mkdtempSync(path.join(tmpdir(), "files-"))

describe("platform files", () => {
  it("makes a directory and its parents, and again without failing", () => {
    const dir = path.join(fresh(), "a", "b")
    Effect.runSync(ensureDir(dir))
    Effect.runSync(ensureDir(dir))
    expect(statSync(dir).isDirectory()).toBe(true)
  })

  it("reads a JSON file, and undefined when there is none", () => {
    const dir = fresh()
    expect(Effect.runSync(readJsonIfPresent(path.join(dir, "missing.json")))).toBeUndefined()
    writeFileSync(path.join(dir, "v.json"), `{"a":1}`)
    expect(Effect.runSync(readJsonIfPresent(path.join(dir, "v.json")))).toEqual({ a: 1 })
  })

  it("dies on a file that is not JSON", () => {
    const file = path.join(fresh(), "bad.json")
    writeFileSync(file, "{not json")
    expect(() => Effect.runSync(readJsonIfPresent(file))).toThrow()
  })

  it("writes whole JSON with the mode asked (umask aside), leaving no temporary file", () => {
    const file = path.join(fresh(), "creds.json")
    const previous = process.umask(0o022)
    try {
      Effect.runSync(writeJsonAtomic(file, { k: "v" }, { mode: 0o600, newline: true }))
    } finally {
      process.umask(previous)
    }
    expect(readFileSync(file, "utf8")).toBe(`{\n  "k": "v"\n}\n`)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(existsSync(`${file}.tmp`)).toBe(false)
    Effect.runSync(writeJsonAtomic(file, [1]))
    expect(readFileSync(file, "utf8")).toBe(`[\n  1\n]`)
  })
})
