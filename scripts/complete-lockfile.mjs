// The registry reachable from our machines mirrors only some platforms' optional binaries
// (linux x64/arm64 builds of rollup, chdb, esbuild, ...), so `npm install` writes a lock file
// without the other platforms' entries and `npm ci` then refuses it as out of sync. This script
// adds each missing optional platform package as an optional entry with the exact version its
// parent pins and the os/cpu its name implies, so `npm ci` skips it on a non-matching machine.
// Run after any `npm install` that changes dependencies: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from "node:fs"

const file = process.argv[2] ?? "package-lock.json"
const lock = JSON.parse(readFileSync(file, "utf8"))
const packages = lock.packages

const OS = ["darwin", "win32", "linux", "android", "freebsd", "openbsd", "netbsd", "sunos", "aix", "openharmony", "cygwin"]
const CPU = ["arm64", "x64", "ia32", "arm", "ppc64", "s390x", "riscv64", "loong64", "mips64el", "wasm32", "universal"]
const platformOf = (name) => {
  const parts = name.split("/").pop().split("-")
  const os = parts.find((p) => OS.includes(p)) ?? (parts.includes("win32") ? "win32" : undefined)
  const cpu = parts.find((p) => CPU.includes(p))
  const libc = parts.includes("musl") ? "musl" : parts.includes("gnu") || parts.includes("gnueabihf") ? "glibc" : undefined
  return { os, cpu, libc }
}

let added = 0
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // Resolution order: nested under the parent, then hoisted to the root.
    const nested = `${path === "" ? "" : path + "/"}node_modules/${name}`
    const hoisted = `node_modules/${name}`
    if (packages[nested] !== undefined || packages[hoisted] !== undefined) continue
    if (!/^\d+\.\d+\.\d+/.test(version)) continue // only exact pins are platform binaries
    const { os, cpu, libc } = platformOf(name)
    if (os === undefined && cpu === undefined) continue
    packages[hoisted] = {
      version,
      optional: true,
      ...(cpu !== undefined && cpu !== "universal" ? { cpu: [cpu] } : {}),
      ...(libc !== undefined ? { libc: [libc] } : {}),
      ...(os !== undefined ? { os: [os] } : {})
    }
    added++
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))))
writeFileSync(file, JSON.stringify(lock, null, 2) + "\n")
console.log(`complete-lockfile: added ${added} optional platform entries`)
