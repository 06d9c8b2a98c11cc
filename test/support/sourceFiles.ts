/**
 * The production TypeScript files under `dir` (relative to the project root, recursively; test
 * files and `node_modules` left out), as root-relative paths: what the conformance checks read.
 */
import { readdirSync } from "node:fs"
import * as path from "node:path"
import { projectRoot } from "./engine.js"

export const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sourceFiles(rel)
    return e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [rel] : []
  })
