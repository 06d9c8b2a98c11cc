/**
 * Embedded mode's generated secrets: `<dir>/<name>` holds base64 of random bytes, created once
 * (exclusively, mode 0600) and read on every later start. Two processes racing to create it end
 * with the same secret (`wx`: a file another process wrote first is never overwritten). Throws on
 * an I/O failure; callers wrap it in their own error.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** The file's text (trim it before decoding). */
export const readOrCreateKeyFile = (dir: string, name: string, bytes: number): string => {
  const file = path.join(dir, name)
  fs.mkdirSync(dir, { recursive: true })
  try {
    fs.writeFileSync(file, randomBytes(bytes).toString("base64") + "\n", { flag: "wx", mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
  }
  return fs.readFileSync(file, "utf8")
}
