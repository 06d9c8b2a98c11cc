/**
 * Writes a bench's markdown section into docs/benchmarks.md between its `<!-- name:begin -->`
 * and `<!-- name:end -->` markers, replacing what was there, or appends the block at the end when
 * the markers are absent.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export const writeBenchmarkSection = (marker: string, section: string): void => {
  const doc = path.join(import.meta.dirname, "..", "docs", "benchmarks.md")
  const text = fs.existsSync(doc) ? fs.readFileSync(doc, "utf8") : "# Benchmarks\n"
  const block = `<!-- ${marker}:begin -->\n${section}<!-- ${marker}:end -->`
  const re = new RegExp(`<!-- ${marker}:begin -->[\\s\\S]*<!-- ${marker}:end -->`)
  fs.writeFileSync(doc, re.test(text) ? text.replace(re, () => block) : `${text.trimEnd()}\n\n${block}\n`)
}
