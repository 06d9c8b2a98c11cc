/**
 * One partition of one topic: the append path (group commit), the durable high watermark, the
 * segment files with their sparse indexes, retention, the tail cache and the wake-ups of live
 * consumers. Plain TypeScript with callbacks and promises: it sits on the per-record hot path;
 * `EmbeddedBus` wraps it in Effect.
 *
 * Invariants:
 * - Offsets are assigned at append, consecutively, in call order; a record is visible (`read`,
 *   cache, consumers) only once durable, i.e. below `hwm`. Only durable records are acknowledged.
 *   The one exception is the early read (`readUnflushed`, `onAppend`), for a consumer that makes
 *   nothing durable from a record before `whenDurable` says the record is.
 * - One writer per partition: at most one flush in flight; records appended meanwhile form the
 *   next group commit. A flush writes one buffer, durable before `hwm` moves when `fsync` is on:
 *   segments are then opened `O_DSYNC`, so the write returns once its data is on disk (one trip
 *   to libuv's threadpool and back, where a write and an fdatasync were two; each trip waits for
 *   the event loop, so a busy loop paid it twice). Where the platform has no `O_DSYNC`, the
 *   write is followed by an fdatasync as before.
 * - Segment files are `<20-digit base offset>.log`, consecutive: a segment holds exactly the
 *   offsets from its base to the next segment's base. Only the newest segment is ever written;
 *   only whole oldest segments are deleted, never the newest.
 * - A write failure poisons the partition (all unacknowledged appends fail, later ones too); a
 *   restart recovers it by truncating the torn tail.
 * - Memory mode (no directory): appends are durable at once and the cache is the whole log,
 *   bounded by the retention bytes (oldest records dropped, not whole segments).
 */
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { BusError, type BusRecord } from "../Bus.js"
import { decodeFrame, encodeFrame, valueStart } from "./frame.js"
import { fsyncDir } from "./fsx.js"
import { RecordCache } from "./recordCache.js"

/** `O_DSYNC` where the platform has it (Linux, macOS): a write that returns once its data is durable. */
const O_DSYNC: number | undefined = fsConstants.O_DSYNC

/**
 * The open flags of a segment file: read and write, `O_DSYNC` when every write must be durable
 * and the platform has it (`create`: a new segment, which must not exist yet).
 */
const segmentOpenFlags = (create: boolean, fsync: boolean): number =>
  fsConstants.O_RDWR | (create ? fsConstants.O_CREAT | fsConstants.O_EXCL : 0) | (fsync && O_DSYNC !== undefined ? O_DSYNC : 0)

/** Whether a written segment still needs an fdatasync (fsync on, no `O_DSYNC` on this platform). */
const datasyncAfterWrite = (fsync: boolean): boolean => fsync && O_DSYNC === undefined

/** Largest frame a reader accepts as plausible, whatever the configured record bound. */
export const MAX_FRAME_BYTES_ON_DISK = 64 * 1024 * 1024 + 1024
/** Accounting overhead of a cached record beside its frame bytes (object, key string, view). */
export const CACHED_RECORD_OVERHEAD_BYTES = 96
const READ_CHUNK_BYTES = 256 * 1024
const SEGMENT_FILE = /^(\d{20})\.log$/

export interface PartitionLogConfig {
  readonly topic: string
  readonly partition: number
  /** The partition's directory; undefined = memory only. */
  readonly dir: string | undefined
  readonly segmentBytes: number
  readonly retentionBytes: number
  readonly flushIntervalMs: number
  /** Pending bytes that start a flush before the interval ends. */
  readonly flushBatchBytes: number
  readonly fsync: boolean
  readonly tailCacheBytes: number
  /** Bytes between two sparse index entries of a segment. */
  readonly indexIntervalBytes: number
  /** Returns the bytes of records that became durable (or failed) to the publish budget. */
  readonly releaseBytes: (bytes: number) => void
}

export interface Recovery {
  readonly segments: number
  readonly truncatedBytes: number
  readonly truncatedWhy: string | undefined
}

interface Segment {
  readonly baseOffset: number
  readonly file: string
  /** Bytes of whole durable frames. */
  size: number
  handle: Promise<fs.FileHandle> | undefined
  /** Sparse index: offsets[i] starts at positions[i]. Undefined until scanned (sealed segments after a restart). */
  index: { readonly offsets: Array<number>; readonly positions: Array<number> } | undefined
  indexing: Promise<void> | undefined
  lastIndexedPos: number
  readers: number
  deleted: boolean
}

interface Pending {
  readonly record: BusRecord
  readonly frame: Buffer
}

interface DurableWaiter {
  readonly offset: number
  readonly done: (error: BusError | undefined) => void
}

const segmentName = (baseOffset: number): string => `${String(baseOffset).padStart(20, "0")}.log`

export const ioError = (what: string, error: unknown): BusError =>
  error instanceof BusError
    ? error
    : new BusError({ reason: "Io", message: `${what}: ${error instanceof Error ? error.message : String(error)}`, retryable: false })

const corrupt = (message: string): BusError => new BusError({ reason: "Corrupt", message, retryable: false })

const readFully = async (handle: fs.FileHandle, buf: Buffer, length: number, position: number): Promise<number> => {
  let done = 0
  while (done < length) {
    const { bytesRead } = await handle.read(buf, done, length - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

const writeFully = async (handle: fs.FileHandle, buf: Buffer, position: number): Promise<void> => {
  let done = 0
  while (done < buf.length) {
    const { bytesWritten } = await handle.write(buf, done, buf.length - done, position + done)
    done += bytesWritten
  }
}

interface ScanResult {
  readonly count: number
  readonly validBytes: number
  readonly invalid: string | undefined
  readonly offsets: Array<number>
  readonly positions: Array<number>
  readonly lastIndexedPos: number
}

/** Walks every frame of a segment file from its start, checking CRCs and consecutive offsets. */
const scanSegment = async (handle: fs.FileHandle, fileBytes: number, baseOffset: number, indexIntervalBytes: number): Promise<ScanResult> => {
  const offsets: Array<number> = []
  const positions: Array<number> = []
  let lastIndexedPos = Number.NEGATIVE_INFINITY
  let expected = baseOffset
  let filePos = 0
  let needBytes = 0
  let buf = Buffer.allocUnsafe(READ_CHUNK_BYTES)
  const result = (invalid: string | undefined): ScanResult => ({
    count: expected - baseOffset,
    validBytes: filePos,
    invalid,
    offsets,
    positions,
    lastIndexedPos
  })
  while (filePos < fileBytes) {
    const want = Math.min(Math.max(READ_CHUNK_BYTES, needBytes), fileBytes - filePos)
    if (buf.length < want) buf = Buffer.allocUnsafe(want)
    const got = await readFully(handle, buf, want, filePos)
    needBytes = 0
    let pos = 0
    while (pos < got) {
      const frame = decodeFrame(buf, pos, got, MAX_FRAME_BYTES_ON_DISK, false)
      if (frame._tag === "Partial") {
        if (filePos + pos + frame.needBytes > fileBytes) {
          filePos += pos
          return result("partial frame at the end of the file")
        }
        needBytes = frame.needBytes
        break
      }
      if (frame._tag === "Invalid") {
        filePos += pos
        return result(frame.why)
      }
      if (frame.offset !== expected) {
        filePos += pos
        return result(`offset ${frame.offset} where ${expected} was expected`)
      }
      const at = filePos + pos
      if (at - lastIndexedPos >= indexIntervalBytes) {
        offsets.push(frame.offset)
        positions.push(at)
        lastIndexedPos = at
      }
      expected++
      pos += frame.size
    }
    if (pos === 0 && needBytes === 0) break
    filePos += pos
  }
  return result(undefined)
}

/** Index of the greatest element of a sorted array that is <= value (-1 when none). */
const floorIndex = (sorted: ReadonlyArray<number>, value: number): number => {
  let lo = 0
  let hi = sorted.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid]! <= value) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** Wakes now when `ready`, else registers `wake` in `waiters`; returns the cancel function. */
const registerWake = (waiters: Set<() => void>, ready: boolean, wake: () => void): (() => void) => {
  if (ready) {
    wake()
    return () => {}
  }
  waiters.add(wake)
  return () => {
    waiters.delete(wake)
  }
}

/** Wakes (and forgets) every registered waiter. */
const wakeAll = (waiters: Set<() => void>): void => {
  if (waiters.size === 0) return
  const all = [...waiters]
  waiters.clear()
  for (const wake of all) wake()
}

export class PartitionLog {
  /** Offset the next appended record gets. */
  nextOffset = 0
  /** High watermark: every offset below it is durable and readable. */
  hwm = 0
  private logStartOffset = 0
  private readonly segments: Array<Segment> = []
  private totalBytes = 0
  private readonly cache: RecordCache
  private pending: Array<Pending> = []
  private pendingBytes = 0
  private readonly durableWaiters: Array<DurableWaiter> = []
  private durableWaitersHead = 0
  private readonly dataWaiters = new Set<() => void>()
  /**
   * Appended records not yet durable (the flush in flight, then the pending ones), in offset
   * order from `hwm`: what early readers (`readUnflushed`) see. Bounded with the pending bytes
   * by the publish budget.
   */
  private unflushed: Array<BusRecord> = []
  private unflushedHead = 0
  private readonly appendWaiters = new Set<() => void>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private flushing: Promise<void> | undefined = undefined
  /** Set when a write failed: the partition refuses appends until a restart recovers it. */
  failure: BusError | undefined = undefined

  private constructor(readonly config: PartitionLogConfig) {
    this.cache = new RecordCache(config.dir === undefined ? config.retentionBytes : config.tailCacheBytes)
  }

  get memoryOnly(): boolean {
    return this.config.dir === undefined
  }

  /** The oldest offset still stored. */
  get logStart(): number {
    if (this.memoryOnly) return this.cache.firstOffset ?? this.hwm
    return this.logStartOffset
  }

  get segmentCount(): number {
    return this.segments.length
  }

  get storedBytes(): number {
    return this.memoryOnly ? this.cache.sizeBytes : this.totalBytes
  }

  get cachedRecords(): number {
    return this.cache.count
  }

  get pendingRecordBytes(): number {
    return this.pendingBytes
  }

  /** Opens (and recovers) the partition: scans the newest segment and truncates a torn tail. */
  static async open(config: PartitionLogConfig): Promise<{ readonly log: PartitionLog; readonly recovery: Recovery }> {
    const log = new PartitionLog(config)
    const dir = config.dir
    if (dir === undefined) return { log, recovery: { segments: 0, truncatedBytes: 0, truncatedWhy: undefined } }
    await fs.mkdir(dir, { recursive: true })
    const bases = (await fs.readdir(dir))
      .map((name) => SEGMENT_FILE.exec(name)?.[1])
      .filter((base): base is string => base !== undefined)
      .map((base) => Number(base))
      .sort((a, b) => a - b)
    for (const baseOffset of bases) {
      const file = path.join(dir, segmentName(baseOffset))
      const { size } = await fs.stat(file)
      log.segments.push({
        baseOffset,
        file,
        size,
        handle: undefined,
        index: undefined,
        indexing: undefined,
        lastIndexedPos: Number.NEGATIVE_INFINITY,
        readers: 0,
        deleted: false
      })
      log.totalBytes += size
    }
    const last = log.segments[log.segments.length - 1]
    let truncatedBytes = 0
    let truncatedWhy: string | undefined = undefined
    if (last !== undefined) {
      const handle = await log.handleOf(last)
      const scan = await scanSegment(handle, last.size, last.baseOffset, config.indexIntervalBytes)
      if (scan.invalid !== undefined) {
        truncatedBytes = last.size - scan.validBytes
        truncatedWhy = scan.invalid
        await handle.truncate(scan.validBytes)
        await handle.sync()
        log.totalBytes -= truncatedBytes
        last.size = scan.validBytes
      }
      last.index = { offsets: scan.offsets, positions: scan.positions }
      last.lastIndexedPos = scan.lastIndexedPos
      log.nextOffset = last.baseOffset + scan.count
      log.hwm = log.nextOffset
      log.logStartOffset = log.segments[0]!.baseOffset
    }
    return { log, recovery: { segments: log.segments.length, truncatedBytes, truncatedWhy } }
  }

  // ---------------------------------------------------------------------------------------------
  // Append

  /**
   * Assigns the next offset and queues the record for the next group commit (memory mode: makes
   * it visible now). The caller has already taken `frameBytes(...)` from the publish budget and
   * calls `appended()` once after a run of appends.
   */
  append(key: string, keyBytes: number, value: Uint8Array, timestampMs: number): number {
    const offset = this.nextOffset++
    const frame = encodeFrame(offset, timestampMs, key, keyBytes, value)
    const record: BusRecord = {
      topic: this.config.topic,
      partition: this.config.partition,
      offset,
      key,
      value: new Uint8Array(frame.buffer, frame.byteOffset + valueStart(keyBytes), value.length),
      timestampMs
    }
    if (this.memoryOnly) {
      this.cache.push(record, frame.length + CACHED_RECORD_OVERHEAD_BYTES)
      this.hwm = this.nextOffset
    } else {
      this.pending.push({ record, frame })
      this.pendingBytes += frame.length
      this.unflushed.push(record)
    }
    return offset
  }

  /** Ends a run of appends: memory mode wakes consumers; file mode schedules the group commit. */
  appended(): void {
    if (this.memoryOnly) {
      this.notifyData()
      return
    }
    this.notifyAppend()
    if (this.flushing !== undefined) return
    if (this.pendingBytes >= this.config.flushBatchBytes || this.config.flushIntervalMs <= 0) {
      this.startFlush()
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.startFlush(), this.config.flushIntervalMs)
    }
  }

  /** Calls `done` once `offset` is durable (or failed). */
  whenDurable(offset: number, done: (error: BusError | undefined) => void): void {
    if (offset < this.hwm) return done(undefined)
    if (this.failure !== undefined) return done(this.failure)
    this.durableWaiters.push({ offset, done })
  }

  private startFlush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.flushing !== undefined || this.pending.length === 0) return
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = undefined
    })
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0 && this.failure === undefined) {
      const batch = this.pending
      const bytes = this.pendingBytes
      this.pending = []
      this.pendingBytes = 0
      try {
        await this.writeBatch(batch, bytes)
      } catch (error) {
        this.poison(ioError(`writing ${this.config.topic}/${this.config.partition}`, error), bytes)
        return
      }
      this.hwm = batch[batch.length - 1]!.record.offset + 1
      this.dropUnflushedBelow(this.hwm)
      for (const p of batch) this.cache.push(p.record, p.frame.length + CACHED_RECORD_OVERHEAD_BYTES)
      this.config.releaseBytes(bytes)
      this.resolveDurable()
      this.notifyData()
      await this.enforceRetention()
    }
  }

  private async writeBatch(batch: ReadonlyArray<Pending>, bytes: number): Promise<void> {
    let segment = this.segments[this.segments.length - 1]
    if (segment === undefined || (segment.size > 0 && segment.size + bytes > this.config.segmentBytes)) {
      segment = await this.roll(batch[0]!.record.offset)
    }
    const buf = batch.length === 1 ? batch[0]!.frame : Buffer.concat(batch.map((p) => p.frame), bytes)
    const handle = await this.handleOf(segment)
    await writeFully(handle, buf, segment.size)
    if (datasyncAfterWrite(this.config.fsync)) await handle.datasync()
    const index = segment.index!
    let pos = segment.size
    for (const p of batch) {
      if (pos - segment.lastIndexedPos >= this.config.indexIntervalBytes) {
        index.offsets.push(p.record.offset)
        index.positions.push(pos)
        segment.lastIndexedPos = pos
      }
      pos += p.frame.length
    }
    segment.size = pos
    this.totalBytes += bytes
  }

  private async roll(baseOffset: number): Promise<Segment> {
    const dir = this.config.dir!
    const file = path.join(dir, segmentName(baseOffset))
    const segment: Segment = {
      baseOffset,
      file,
      size: 0,
      handle: fs.open(file, segmentOpenFlags(true, this.config.fsync)),
      index: { offsets: [], positions: [] },
      indexing: undefined,
      lastIndexedPos: Number.NEGATIVE_INFINITY,
      readers: 0,
      deleted: false
    }
    segment.handle!.catch(() => {}) // observed below; avoid an unhandled rejection if we throw first
    await segment.handle
    if (this.config.fsync) await fsyncDir(dir)
    if (this.segments.length === 0) this.logStartOffset = baseOffset
    this.segments.push(segment)
    return segment
  }

  private poison(error: BusError, inFlightBytes: number): void {
    this.failure = error
    this.unflushed = []
    this.unflushedHead = 0
    const queuedBytes = this.pendingBytes
    this.pending = []
    this.pendingBytes = 0
    this.config.releaseBytes(inFlightBytes + queuedBytes)
    const waiters = this.durableWaiters.splice(this.durableWaitersHead)
    this.durableWaiters.length = 0
    this.durableWaitersHead = 0
    for (const w of waiters) w.done(error)
  }

  private resolveDurable(): void {
    const waiters = this.durableWaiters
    while (this.durableWaitersHead < waiters.length && waiters[this.durableWaitersHead]!.offset < this.hwm) {
      const w = waiters[this.durableWaitersHead]!
      this.durableWaitersHead++
      w.done(undefined)
    }
    if (this.durableWaitersHead === waiters.length) {
      waiters.length = 0
      this.durableWaitersHead = 0
    } else if (this.durableWaitersHead > 1024) {
      waiters.splice(0, this.durableWaitersHead)
      this.durableWaitersHead = 0
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Retention

  /** Deletes the oldest whole segments while the partition holds more than the retention bytes. */
  private async enforceRetention(): Promise<void> {
    while (this.totalBytes > this.config.retentionBytes && this.segments.length > 1) {
      const oldest = this.segments.shift()!
      this.totalBytes -= oldest.size
      this.logStartOffset = this.segments[0]!.baseOffset
      this.cache.evictBelow(this.logStartOffset)
      oldest.deleted = true
      await fs.unlink(oldest.file).catch(() => {})
      if (oldest.readers === 0) await this.closeSegment(oldest)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Read

  /** Registers a wake-up for when `hwm` passes `offset`; returns a cancel function. */
  onData(offset: number, wake: () => void): () => void {
    return registerWake(this.dataWaiters, this.hwm > offset, wake)
  }

  /**
   * Early read: up to `max` appended records from `offset` that are not durable yet (`offset` at
   * or above `hwm`; below it, read durable records as usual). Their durability is what
   * `whenDurable` reports; a crash before it loses them, so whoever reads them early must not make
   * anything derived from them durable first.
   */
  readUnflushed(offset: number, max: number): Array<BusRecord> {
    const first = this.hwm
    if (offset < first || offset >= this.nextOffset || this.failure !== undefined) return []
    const start = this.unflushedHead + (offset - first)
    return this.unflushed.slice(start, Math.min(start + max, this.unflushed.length))
  }

  /** Registers a wake-up for when a record at `offset` is appended (durable or not); returns a cancel function. */
  onAppend(offset: number, wake: () => void): () => void {
    return registerWake(this.appendWaiters, this.nextOffset > offset, wake)
  }

  private notifyAppend(): void {
    wakeAll(this.appendWaiters)
  }

  private dropUnflushedBelow(offset: number): void {
    const records = this.unflushed
    while (this.unflushedHead < records.length && records[this.unflushedHead]!.offset < offset) {
      ;(records as Array<BusRecord | undefined>)[this.unflushedHead] = undefined
      this.unflushedHead++
    }
    if (this.unflushedHead === records.length) {
      this.unflushed = []
      this.unflushedHead = 0
    } else if (this.unflushedHead > 1024) {
      this.unflushed = records.slice(this.unflushedHead)
      this.unflushedHead = 0
    }
  }

  private notifyData(): void {
    wakeAll(this.dataWaiters)
  }

  /**
   * The synchronous path: up to `max` records from `offset` when they are all in the tail cache
   * (or past the end: empty). Undefined when the read must go to the files. An offset below the
   * log start reads from the log start (the records' offsets show the gap).
   */
  readCached(offset: number, max: number): Array<BusRecord> | undefined {
    const from = Math.max(offset, this.logStart)
    if (from >= this.hwm) return []
    const first = this.cache.firstOffset
    if (first !== undefined && from >= first) return this.cache.slice(from, Math.min(max, this.hwm - from))
    return this.memoryOnly ? [] : undefined
  }

  /** Reads up to `max` records (and about `maxBytes`, at least one record) from `offset`. */
  async read(offset: number, max: number, maxBytes: number): Promise<Array<BusRecord>> {
    const cached = this.readCached(offset, max)
    if (cached !== undefined) return cached
    const out: Array<BusRecord> = []
    let bytes = 0
    let want = offset
    const end = this.hwm
    while (out.length < max && want < end && bytes < maxBytes) {
      if (want < this.logStartOffset) want = this.logStartOffset
      const first = this.cache.firstOffset
      if (first !== undefined && want >= first) {
        for (const r of this.cache.slice(want, Math.min(max - out.length, end - want))) out.push(r)
        break
      }
      const i = floorIndex(
        this.segments.map((s) => s.baseOffset),
        want
      )
      const segment = this.segments[i]
      if (segment === undefined) break
      segment.readers++
      let got: Array<BusRecord>
      try {
        got = await this.readSegment(segment, want, max - out.length, maxBytes - bytes, end)
      } finally {
        segment.readers--
        if (segment.deleted && segment.readers === 0) await this.closeSegment(segment)
      }
      if (got.length === 0) break
      for (const r of got) {
        out.push(r)
        bytes += r.value.length + r.key.length
      }
      want = got[got.length - 1]!.offset + 1
    }
    return out
  }

  private async readSegment(segment: Segment, from: number, max: number, maxBytes: number, end: number): Promise<Array<BusRecord>> {
    await this.ensureIndex(segment)
    const index = segment.index!
    const at = floorIndex(index.offsets, from)
    let filePos = at < 0 ? 0 : index.positions[at]!
    const fileBytes = segment.size
    const handle = await this.handleOf(segment)
    const out: Array<BusRecord> = []
    let bytes = 0
    let needBytes = 0
    let buf = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(fileBytes - filePos, 1)))
    while (filePos < fileBytes && out.length < max && bytes < maxBytes) {
      const want = Math.min(Math.max(READ_CHUNK_BYTES, needBytes), fileBytes - filePos)
      if (buf.length < want) buf = Buffer.allocUnsafe(want)
      const got = await readFully(handle, buf, want, filePos)
      needBytes = 0
      let pos = 0
      while (pos < got && out.length < max && bytes < maxBytes) {
        const frame = decodeFrame(buf, pos, got, MAX_FRAME_BYTES_ON_DISK, true)
        if (frame._tag === "Partial") {
          if (filePos + pos + frame.needBytes > fileBytes) throw corrupt(`${segment.file}: frame runs past the segment end at ${filePos + pos}`)
          needBytes = frame.needBytes
          break
        }
        if (frame._tag === "Invalid") throw corrupt(`${segment.file}: ${frame.why} at ${filePos + pos}`)
        pos += frame.size
        if (frame.offset >= end) return out
        if (frame.offset < from) continue
        out.push({
          topic: this.config.topic,
          partition: this.config.partition,
          offset: frame.offset,
          key: frame.key,
          value: frame.value,
          timestampMs: frame.timestampMs
        })
        bytes += frame.size
      }
      if (pos === 0 && needBytes === 0) break
      filePos += pos
    }
    return out
  }

  /** Builds a sealed segment's sparse index on first use (segments sealed before a restart). */
  private ensureIndex(segment: Segment): Promise<void> {
    if (segment.index !== undefined) return Promise.resolve()
    if (segment.indexing === undefined) {
      segment.indexing = (async () => {
        const handle = await this.handleOf(segment)
        const scan = await scanSegment(handle, segment.size, segment.baseOffset, this.config.indexIntervalBytes)
        if (scan.invalid !== undefined) throw corrupt(`${segment.file}: ${scan.invalid} at ${scan.validBytes}`)
        const next = this.segments[this.segments.indexOf(segment) + 1]
        if (next !== undefined && segment.baseOffset + scan.count !== next.baseOffset) {
          throw corrupt(`${segment.file}: holds ${scan.count} records, the next segment starts at ${next.baseOffset}`)
        }
        segment.index = { offsets: scan.offsets, positions: scan.positions }
        segment.lastIndexedPos = scan.lastIndexedPos
      })().finally(() => {
        segment.indexing = undefined
      })
    }
    return segment.indexing
  }

  private handleOf(segment: Segment): Promise<fs.FileHandle> {
    if (segment.handle === undefined) {
      const opening = fs.open(segment.file, segmentOpenFlags(false, this.config.fsync))
      opening.catch(() => {
        if (segment.handle === opening) segment.handle = undefined
      })
      segment.handle = opening
    }
    return segment.handle
  }

  private async closeSegment(segment: Segment): Promise<void> {
    const handle = segment.handle
    segment.handle = undefined
    if (handle !== undefined) await (await handle.catch(() => undefined))?.close().catch(() => {})
  }

  // ---------------------------------------------------------------------------------------------
  // Close

  /** Flushes every appended record (acknowledging them) and closes the files. */
  async close(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    while (this.flushing !== undefined || (this.pending.length > 0 && this.failure === undefined)) {
      this.startFlush()
      await this.flushing
    }
    for (const segment of this.segments) await this.closeSegment(segment)
  }
}

