/**
 * The few file-system moves the embedded bus needs beyond plain reads and writes: directory
 * fsync (so a created, renamed or deleted file survives a crash), atomic small-file replacement
 * (temp + fsync + rename + fsync dir) and the data-directory lock (one live process per
 * directory; a lock left by a dead process is taken over).
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"

export const fsyncDir = async (dir: string): Promise<void> => {
  const handle = await fs.open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Replaces `file` with `data` so a crash leaves either the old or the new contents, never a mix. */
export const writeFileAtomic = async (file: string, data: string, fsync: boolean): Promise<void> => {
  const temp = `${file}.tmp`
  const handle = await fs.open(temp, "w")
  try {
    await handle.writeFile(data, "utf8")
    if (fsync) await handle.sync()
  } finally {
    await handle.close()
  }
  await fs.rename(temp, file)
  if (fsync) await fsyncDir(path.dirname(file))
}

export const mkdirDurable = async (dir: string, fsync: boolean): Promise<void> => {
  const created = await fs.mkdir(dir, { recursive: true })
  if (created !== undefined && fsync) await fsyncDir(path.dirname(dir))
}

export const isErrno = (error: unknown, code: string): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === code

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return isErrno(error, "EPERM")
  }
}

/** Directories this process holds, so a second bus in the same process is refused too. */
const heldInProcess = new Set<string>()

export type LockResult = { readonly _tag: "Acquired"; readonly release: () => Promise<void> } | { readonly _tag: "Held"; readonly byPid: number }

/** Takes `dir/.lock`, writing our pid; a lock naming a dead pid is stale and taken over. */
export const lockDir = async (dir: string): Promise<LockResult> => {
  const resolved = path.resolve(dir)
  if (heldInProcess.has(resolved)) return { _tag: "Held", byPid: process.pid }
  const file = path.join(resolved, ".lock")
  heldInProcess.add(resolved)
  try {
    await fs.writeFile(file, String(process.pid), { flag: "wx" })
  } catch (error) {
    if (!isErrno(error, "EEXIST")) {
      heldInProcess.delete(resolved)
      throw error
    }
    const pid = Number.parseInt(await fs.readFile(file, "utf8").catch(() => ""), 10)
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) {
      heldInProcess.delete(resolved)
      return { _tag: "Held", byPid: pid }
    }
    await fs.writeFile(file, String(process.pid)).catch((e: unknown) => {
      heldInProcess.delete(resolved)
      throw e
    })
  }
  return {
    _tag: "Acquired",
    release: async () => {
      heldInProcess.delete(resolved)
      await fs.rm(file, { force: true })
    }
  }
}
