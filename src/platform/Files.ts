/**
 * The composition root's small files under the data directory (`local-credentials.json`,
 * `localnet.json`): the directory made, a JSON file read if it is there, and a file written whole
 * (to a temporary file, then renamed, so a crash never leaves half a file). Effects that die on an
 * I/O failure (the engine cannot start without its data directory); callers read the parsed value.
 */
import { Effect } from "effect"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"

/** Makes `dir` and its parents if they are missing. */
export const ensureDir = (dir: string): Effect.Effect<void> => Effect.sync(() => void mkdirSync(dir, { recursive: true }))

/** The parsed JSON of `file`; undefined when there is no such file. Dies when the file is unreadable or not JSON. */
export const readJsonIfPresent = (file: string): Effect.Effect<unknown> =>
  Effect.sync(() => (existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as unknown) : undefined))

/** Writes `value` as indented JSON (and a final newline when `newline`), whole: a temporary file renamed over `file`, with `mode`. */
export const writeJsonAtomic = (file: string, value: unknown, options: { readonly mode?: number; readonly newline?: boolean } = {}): Effect.Effect<void> =>
  Effect.sync(() => {
    const tmp = `${file}.tmp`
    const text = JSON.stringify(value, null, 2) + (options.newline === true ? "\n" : "")
    writeFileSync(tmp, text, options.mode !== undefined ? { mode: options.mode } : {})
    // The mode given at creation is masked by the umask; set it exactly.
    if (options.mode !== undefined) chmodSync(tmp, options.mode)
    renameSync(tmp, file)
  })
